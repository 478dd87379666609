// FoldConstant: one post-order rewrite; each foldable call is lowered to a
// one-op PrimFunc (compute definition + an empty schedule) and interpreted.
#include "engine/transform/fold_constant.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ir/expr_mutator.h"
#include "engine/loop/interpreter.h"
#include "engine/loop_transform/flatten_buffer.h"
#include "engine/loop_transform/simplify.h"
#include "engine/op/op_registry.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/te/lower_schedule.h"
#include "engine/te/schedule.h"
#include "engine/transform/fold_float_binary.h"

namespace kiln::transform {
namespace {

// The ops this pass tells apart, looked up once.
struct MatchedOps {
  const OpEntry& on_device = OpRegistry::Global().Get("on_device");
  const OpEntry& device_copy = OpRegistry::Global().Get("device_copy");
  const OpEntry& shape_of = OpRegistry::Global().Get("shape_of");
  const OpEntry& size = OpRegistry::Global().Get("size");
};

const MatchedOps& Ops() {
  static const MatchedOps ops{};
  return ops;
}

bool StaticShape(const Type& type, std::vector<int64_t>* shape, DataType* dtype) {
  const auto* tensor = type.as<TensorTypeNode>();
  if (tensor == nullptr) return false;
  shape->clear();
  for (const Dim& dim : tensor->shape) {
    if (!dim.is_static()) return false;
    shape->push_back(dim.value);
  }
  *dtype = tensor->dtype;
  return true;
}

// Saturates instead of overflowing: types from graph text may be huge.
int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

// shape_of / size of a statically shaped argument, computed from its type:
// the argument's data is never read, so none is made (a parameter may be
// 32 GiB). Null when the result type is not one this writes.
Expr FoldShapeQuery(const CallNode& call, const std::vector<int64_t>& shape) {
  const auto* type = call.checked_type.as<TensorTypeNode>();
  if (type == nullptr) return Expr();
  const bool is_size = IsOp(call.op, Ops().size);
  std::vector<int64_t> values = is_size ? std::vector<int64_t>{NumElements(shape)} : shape;
  std::vector<int64_t> result_shape;
  if (!is_size) result_shape.push_back(static_cast<int64_t>(shape.size()));
  std::string bytes;
  if (type->dtype == DataType::kInt64) {
    bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  } else if (type->dtype == DataType::kInt32) {
    for (int64_t v : values) {
      int32_t narrow = static_cast<int32_t>(v);
      bytes.append(reinterpret_cast<const char*>(&narrow), sizeof(narrow));
    }
  } else {
    return Expr();
  }
  Expr constant =
      MakeConstant(MakeTensorData(type->dtype, std::move(result_shape), std::move(bytes)), call.span);
  return WithCheckedType(constant, call.checked_type);
}

// The constants an argument stands for (a tuple argument gives one per
// field), or false when it is not constant.
bool CollectConstants(const Expr& arg, std::vector<TensorData>* out) {
  if (const auto* constant = arg.as<ConstantNode>()) {
    out->push_back(constant->data);
    return true;
  }
  if (const auto* tuple = arg.as<TupleNode>()) {
    for (const Expr& field : tuple->elements) {
      if (!CollectConstants(field, out)) return false;
    }
    return true;
  }
  return false;
}

// The same program with flat buffers and simplified index arithmetic. The
// loop passes run uninstrumented: they are part of evaluating one call, not
// passes of the pipeline.
absl::StatusOr<loop::PrimFunc> SimplifyForInterpreter(const loop::PrimFunc& func) {
  static const Pass* const kPasses[] = {
      new Pass(loop::transform::FlattenBuffer()),
      new Pass(loop::transform::Simplify()),
  };
  PassContext context;
  IRModule module = MakeModuleFromMain(func);
  for (const Pass* pass : kPasses) {
    KILN_ASSIGN_OR_RETURN(module, (*pass)->Run(module, context));
  }
  return Downcast<loop::PrimFuncNode>(module->Lookup("main"));
}

class ConstantFolder final : public PostOrderRewriter {
 public:
  explicit ConstantFolder(PassContext& context) : context_(context) {}

 protected:
  // Fused kernels stay as FuseOps made them.
  bool KeepSubtree(const ExprNode* expr) const override {
    const auto* function = expr->kind() == ObjectKind::kFunction
                               ? static_cast<const FunctionNode*>(expr)
                               : nullptr;
    return function != nullptr && function->HasNonzeroAttr(kAttrPrimitive);
  }

  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    if (context_.budget() != nullptr) {
      KILN_RETURN_IF_ERROR(context_.budget()->CheckCancelled("while folding constants"));
    }
    const auto* call = post.as<CallNode>();
    const auto* op = call->op.as<OpNode>();
    if (op == nullptr || call->args.empty()) return post;
    const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
    if (entry == nullptr || entry->stateful || !entry->compute) return post;
    const MatchedOps& ops = Ops();
    if (IsOp(call->op, ops.on_device) || IsOp(call->op, ops.device_copy)) return post;

    if (IsOp(call->op, ops.shape_of) || IsOp(call->op, ops.size)) {
      std::vector<int64_t> shape;
      DataType dtype;
      if (!StaticShape(call->args[0]->checked_type, &shape, &dtype)) return post;
      Expr folded = FoldShapeQuery(*call, shape);
      return folded.defined() ? folded : post;
    }
    // A string's text exists only in a run (libkiln_rt's arena), never as a constant.
    if (const auto* result = call->checked_type.as<TensorTypeNode>();
        result != nullptr && result->dtype == DataType::kString) {
      return post;
    }
    std::vector<TensorData> inputs;
    for (const Expr& arg : call->args) {
      if (!CollectConstants(arg, &inputs)) return post;
    }
    absl::StatusOr<Expr> folded = Evaluate(*entry, *call, inputs);
    if (!folded.ok()) {
      return absl::Status(folded.status().code(),
                          absl::StrCat("folding ", op->name, ": ",
                                       std::string(folded.status().message())));
    }
    if (!folded->defined()) return post;
    (void)pre;
    return *folded;
  }

  Result Rewrite_(const TupleGetItemNode*, const Expr& post) override {
    const auto* item = post.as<TupleGetItemNode>();
    const auto* tuple = item->tuple.as<TupleNode>();
    if (tuple == nullptr || item->index < 0 ||
        item->index >= static_cast<int>(tuple->elements.size())) {
      return post;
    }
    return tuple->elements[item->index];
  }

  Result Rewrite_(const IfNode*, const Expr& post) override {
    const auto* node = post.as<IfNode>();
    const auto* cond = node->cond.as<ConstantNode>();
    if (cond == nullptr || cond->data->NumElements() != 1) return post;
    bool taken = false;
    const TensorDataNode& data = *cond->data;
    for (char byte : data.bytes) taken = taken || byte != 0;
    const Expr& branch = taken ? node->true_branch : node->false_branch;
    return WithSpan(branch, MakeSequentialSpan({branch->span, node->span}));
  }

 private:
  // The call evaluated, or null to leave it (too large, untyped).
  absl::StatusOr<Expr> Evaluate(const OpEntry& entry, const CallNode& call,
                                const std::vector<TensorData>& inputs) {
    if (!call.checked_type.defined()) return Expr();
    std::vector<const TensorTypeNode*> result_types;
    if (const auto* tuple = call.checked_type.as<TupleTypeNode>()) {
      for (const Type& field : tuple->fields) result_types.push_back(field.as<TensorTypeNode>());
    } else {
      result_types.push_back(call.checked_type.as<TensorTypeNode>());
    }
    for (const TensorTypeNode* type : result_types) {
      std::vector<int64_t> shape;
      DataType dtype;
      if (type == nullptr || !StaticShape(Type(type), &shape, &dtype)) return Expr();
      if (NumElements(shape) > kMaxFoldedElements) {
        context_.EmitDiagnostic(
            DiagnosticSeverity::kNote,
            absl::StrCat(entry.name, " left unfolded: its ", NumElements(shape),
                         " elements exceed the folding limit of ", kMaxFoldedElements),
            call.span);
        return Expr();
      }
    }

    // float32 arithmetic on two constants (a batch norm's scale into a weight) directly: the
    // same IEEE operation per element, without the interpreter's ~50 instructions per element.
    if (const auto* result = call.checked_type.as<TensorTypeNode>();
        result != nullptr && IsFloatBinaryFoldable(entry.name) && inputs.size() == 2 &&
        result->dtype == DataType::kFloat32 &&
        inputs[0]->dtype == DataType::kFloat32 && inputs[1]->dtype == DataType::kFloat32) {
      std::vector<int64_t> shape;
      DataType dtype;
      StaticShape(call.checked_type, &shape, &dtype);
      if (CompileBudget* budget = context_.budget()) {
        // A step per element: the interpreter would count several.
        KILN_RETURN_IF_ERROR(budget->ChargeSteps(NumElements(shape)));
        KILN_RETURN_IF_ERROR(budget->Charge(
            NumElements(shape) * DataTypeBytes(DataType::kFloat32),
            absl::StrCat("layer '", absl::StrJoin(SpanSourceNames(call.span), ", "),
                         "': folding ", entry.name)));
      }
      std::optional<TensorData> data = FoldFloatBinary(entry.name, inputs[0], inputs[1], shape);
      // (Its type relation broadcast the operands to `shape`: never taken.)
      if (!data.has_value()) {
        return absl::InternalError(absl::StrCat("folding ", entry.name,
                                                ": the operands do not broadcast to its type"));
      }
      return WithCheckedType(MakeConstant(std::move(*data), call.span), call.checked_type);
    }
    KILN_ASSIGN_OR_RETURN(Attrs attrs, NormalizeAttrs(entry, call.attrs));
    std::vector<te::Tensor> placeholders;
    for (size_t i = 0; i < inputs.size(); ++i) {
      placeholders.push_back(
          te::Placeholder(absl::StrCat("c", i), inputs[i]->dtype, inputs[i]->shape));
    }
    te::SpanScope span_scope(call.span);
    KILN_ASSIGN_OR_RETURN(std::vector<te::Tensor> outputs,
                          entry.compute(ComputeInput{placeholders, *attrs, call.checked_type}));
    if (outputs.size() != result_types.size()) {
      return absl::InternalError(absl::StrCat("the compute gave ", outputs.size(),
                                              " results for ", result_types.size(), " types"));
    }
    te::Schedule schedule = te::Schedule::Create(outputs, te::ScheduleOptions{false});
    // One flat loop per output that does not reduce: flattened and simplified,
    // its index arithmetic shrinks to a few operations per element, which is
    // what the interpreter's time is made of (folded weights are large).
    for (const te::Tensor& output : outputs) {
      if (output.op()->body->reduce.has_value()) continue;
      std::vector<te::IterVar> leaves = schedule.LeafIterVars(output);
      for (size_t i = 1; i < leaves.size(); ++i) leaves[0] = schedule.Fuse(output, leaves[0], leaves[i]);
    }
    std::vector<te::Tensor> params = placeholders;
    params.insert(params.end(), outputs.begin(), outputs.end());
    KILN_ASSIGN_OR_RETURN(loop::PrimFunc lowered,
                          te::LowerSchedule(schedule, params, "fold_" + entry.name));
    KILN_ASSIGN_OR_RETURN(loop::PrimFunc func, SimplifyForInterpreter(lowered));

    std::vector<loop::HostTensor> values;
    values.reserve(outputs.size());
    for (const te::Tensor& output : outputs) {
      if (CompileBudget* budget = context_.budget()) {
        KILN_RETURN_IF_ERROR(budget->Charge(
            NumElements(output.shape()) * DataTypeBytes(output.dtype()),
            absl::StrCat("layer '", absl::StrJoin(SpanSourceNames(call.span), ", "), "': folding ",
                         entry.name)));
      }
      values.push_back(loop::HostTensor::Zeros(output.dtype(), output.shape()));
    }
    std::vector<loop::HostTensor*> value_ptrs;
    for (loop::HostTensor& value : values) value_ptrs.push_back(&value);
    loop::InterpreterOptions interpreter;
    if (CompileBudget* budget = context_.budget()) {
      // The compile's step budget governs, not the interpreter's per-run one.
      interpreter.budget = budget;
      interpreter.max_steps = std::numeric_limits<int64_t>::max();
    }
    KILN_RETURN_IF_ERROR(loop::RunPrimFuncOnConstants(func, inputs, value_ptrs, interpreter));

    std::vector<Expr> results;
    for (size_t i = 0; i < outputs.size(); ++i) {
      loop::HostTensor& value = values[i];
      // Moved, not copied: folded weights are large.
      Expr constant = MakeConstant(
          MakeTensorData(value.dtype, std::move(value.shape), std::move(value.bytes)), call.span);
      results.push_back(WithCheckedType(constant, Type(result_types[i])));
    }
    if (call.checked_type.as<TupleTypeNode>() == nullptr) return results[0];
    return WithCheckedType(MakeTuple(std::move(results), call.span), call.checked_type);
  }

  PassContext& context_;
};

}  // namespace

Pass FoldConstant() {
  return CreateRewriterPass(
      [](const Function&, const IRModule&, PassContext& context) {
        return ConstantFolder(context);
      },
      PassInfo{"FoldConstant", 2, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
