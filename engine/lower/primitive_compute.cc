// Graph -> tensor expressions for one primitive function: a post-order walk
// that maps every dataflow node to the tensors of its value.
#include "engine/lower/primitive_compute.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/lower/lowering_util.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::lower {
namespace {

template <typename T>
T ReadElement(const TensorDataNode& data) {
  T value;
  std::memcpy(&value, data.bytes.data(), sizeof(T));
  return value;
}

// The one element of `data` as an immediate of its dtype.
loop::PrimExpr ScalarImmediate(const TensorDataNode& data) {
  loop::PrimType type{data.dtype, 1};
  return DispatchDataType(data.dtype, [&]<DataType D>() -> loop::PrimExpr {
    const DataTypeStorage<D> element = ReadElement<DataTypeStorage<D>>(data);
    if constexpr (IsFloat(D)) {
      return loop::FloatImm(ElementToDouble<D>(element), type);
    } else if constexpr (D == DataType::kBool) {
      return loop::IntImm(element != 0 ? 1 : 0, type);
    } else {
      // uint64 is stored as its two's-complement bit pattern, as ReduceIdentity does.
      return loop::IntImm(static_cast<int64_t>(element), type);
    }
  });
}

std::vector<loop::PrimExpr> AsIndices(const std::vector<loop::Var>& vars) {
  return std::vector<loop::PrimExpr>(vars.begin(), vars.end());
}

// out = in, element by element: gives a result that is a parameter (or
// repeats) its own stage, so the kernel writes every output buffer.
te::Tensor CopyOf(const te::Tensor& tensor, std::string name) {
  return te::ComputeOver(std::move(name), tensor.dims(), {tensor},
                     [&](const std::vector<loop::Var>& i) { return tensor(AsIndices(i)); },
                     "elemwise");
}

class ComputeBuilder {
 public:
  absl::StatusOr<PrimitiveCompute> Build(const FunctionNode& func) {
    for (const Var& param : func.params) {
      Type type = param->checked_type ? param->checked_type : param->type_annotation;
      absl::StatusOr<std::vector<TensorLeaf>> leaves = TensorLeaves(type, /*allow_symbolic=*/true);
      if (!leaves.ok()) {
        return Prefixed(NodePrefix(absl::StrCat("parameter %", param->name_hint), param->span),
                        leaves.status());
      }
      te::SpanScope scope(param->span);
      std::vector<te::Tensor>& tensors = values_[param.get()];
      for (size_t i = 0; i < leaves->size(); ++i) {
        std::string name = leaves->size() == 1 ? param->name_hint
                                                : absl::StrCat(param->name_hint, "_", i);
        absl::StatusOr<std::vector<loop::PrimExpr>> dims = LeafDims((*leaves)[i]);
        if (!dims.ok()) {
          return Prefixed(NodePrefix(absl::StrCat("parameter %", param->name_hint), param->span),
                          dims.status());
        }
        te::Tensor placeholder = te::PlaceholderOver(name, (*leaves)[i].dtype, *std::move(dims));
        tensors.push_back(placeholder);
        result_.inputs.push_back(placeholder);
      }
    }

    KILN_RETURN_IF_ERROR(VisitDataflowPostOrder(
        func.body, [this](const Expr& expr) { return Visit(expr); },
        [this](const LetNode& let) { values_[let.var.get()] = values_.at(let.value.get()); }));

    // Results: every one written by the kernel, each by its own stage.
    te::SpanScope scope(func.span);
    for (const te::Tensor& tensor : values_.at(func.body.get())) {
      bool repeated = false;
      for (const te::Tensor& earlier : result_.outputs) repeated |= earlier.same_as(tensor);
      if (repeated || tensor.op()->kind == te::OperationNode::Kind::kPlaceholder) {
        result_.outputs.push_back(CopyOf(tensor, absl::StrCat(tensor.name(), "_copy")));
      } else {
        result_.outputs.push_back(tensor);
      }
    }
    return std::move(result_);
  }

 private:
  absl::Status Visit(const Expr& expr) {
    switch (expr->kind()) {
      case ObjectKind::kVar:
        if (values_.count(expr.get()) == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(NodePrefix(absl::StrCat("%", expr.as<VarNode>()->name_hint), expr->span),
                           "variable is not a parameter of the primitive function"));
        }
        return absl::OkStatus();
      case ObjectKind::kConstant:
        return VisitConstant(expr, *expr.as<ConstantNode>());
      case ObjectKind::kCall:
        return VisitCall(expr, *expr.as<CallNode>());
      case ObjectKind::kTuple: {
        std::vector<te::Tensor> tensors;
        for (const Expr& element : expr.as<TupleNode>()->elements) {
          const std::vector<te::Tensor>& field = values_.at(element.get());
          tensors.insert(tensors.end(), field.begin(), field.end());
        }
        values_[expr.get()] = std::move(tensors);
        return absl::OkStatus();
      }
      case ObjectKind::kTupleGetItem:
        return VisitTupleGetItem(expr, *expr.as<TupleGetItemNode>());
      case ObjectKind::kLet:
        values_[expr.get()] = values_.at(expr.as<LetNode>()->body.get());
        return absl::OkStatus();
      default:
        return absl::UnimplementedError(
            absl::StrCat(NodePrefix(ObjectKindName(expr->kind()), expr->span),
                         "not supported inside a primitive function"));
    }
  }

  absl::Status VisitConstant(const Expr& expr, const ConstantNode& constant) {
    const TensorDataNode& data = *constant.data;
    te::SpanScope scope(expr->span);
    std::string name = absl::StrCat("c", constant_count_++);
    if (data.NumElements() == 1) {
      // Inlined by the default schedule, leaving the immediate in its users.
      loop::PrimExpr value = ScalarImmediate(data);
      values_[expr.get()] = {te::Compute(
          name, data.shape, {}, [&](const std::vector<loop::Var>&) { return value; },
          "elemwise")};
      return absl::OkStatus();
    }
    te::Tensor placeholder = te::Placeholder(name, data.dtype, data.shape);
    result_.constant_inputs.push_back(placeholder);
    result_.constants.push_back(Downcast<ConstantNode>(expr));
    values_[expr.get()] = {placeholder};
    return absl::OkStatus();
  }

  absl::Status VisitTupleGetItem(const Expr& expr, const TupleGetItemNode& get) {
    const auto* tuple_type = get.tuple->checked_type.as<TupleTypeNode>();
    if (tuple_type == nullptr || get.index < 0 ||
        get.index >= static_cast<int>(tuple_type->fields.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodePrefix("TupleGetItem", expr->span), "index ", get.index,
          " is out of range or the tuple is not typed (run InferType first)"));
    }
    int offset = 0;
    for (int i = 0; i < get.index; ++i) offset += LeafCount(tuple_type->fields[i]);
    int count = LeafCount(tuple_type->fields[get.index]);
    const std::vector<te::Tensor>& all = values_.at(get.tuple.get());
    values_[expr.get()] =
        std::vector<te::Tensor>(all.begin() + offset, all.begin() + offset + count);
    return absl::OkStatus();
  }

  absl::Status VisitCall(const Expr& expr, const CallNode& call) {
    const auto* op = call.op.as<OpNode>();
    if (op == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          NodePrefix("call", expr->span),
          "a primitive function may only call operators, not ", ObjectKindName(call.op->kind())));
    }
    std::string prefix = NodePrefix(op->name, expr->span);
    const OpEntry* entry = OpRegistry::Global().FindCallee(call.op);
    if (entry == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "unknown operator"));
    }
    if (!entry->compute) {
      return absl::UnimplementedError(absl::StrCat(prefix, "the operator has no compute definition"));
    }
    absl::StatusOr<std::vector<TensorLeaf>> result_leaves =
        TensorLeaves(expr->checked_type, /*allow_symbolic=*/true);
    if (!result_leaves.ok()) {
      return Prefixed(prefix, result_leaves.status());
    }
    std::vector<te::Tensor> inputs;
    bool symbolic = false;
    for (const Expr& arg : call.args) {
      const std::vector<te::Tensor>& tensors = values_.at(arg.get());
      inputs.insert(inputs.end(), tensors.begin(), tensors.end());
      for (const te::Tensor& tensor : tensors) symbolic |= tensor.is_symbolic();
    }
    for (const TensorLeaf& leaf : *result_leaves) symbolic |= leaf.is_symbolic();
    // Compute definitions not written over dims() would read a symbolic dim's -1 as an extent.
    if (symbolic && !entry->symbolic_compute) {
      return absl::UnimplementedError(absl::StrCat(
          prefix, "this operator does not yet support dimensions known only at run time (",
          TypeToString(expr->checked_type), "); give the inputs static shapes"));
    }
    absl::StatusOr<Attrs> attrs = NormalizeAttrs(*entry, call.attrs);
    if (!attrs.ok()) return Prefixed(prefix, attrs.status());
    absl::StatusOr<std::vector<te::Tensor>> outputs;
    {
      te::SpanScope scope(expr->span);
      Attrs normalized = *attrs ? *attrs : MakeAttrs({});
      outputs = entry->compute(ComputeInput{inputs, *normalized, expr->checked_type});
    }
    if (!outputs.ok()) {
      return Prefixed(prefix, outputs.status());
    }
    // The compute must agree with the type relation; a mismatch is an op bug
    // but reported, not crashed on, since it is one op among many.
    if (outputs->size() != result_leaves->size()) {
      return absl::InternalError(absl::StrCat(prefix, "the compute gave ", outputs->size(),
                                              " tensors for ", result_leaves->size(),
                                              " results"));
    }
    for (size_t i = 0; i < outputs->size(); ++i) {
      const te::Tensor& tensor = (*outputs)[i];
      bool symbols_match = true;
      for (size_t d = 0; d < (*result_leaves)[i].symbols.size() && tensor.is_symbolic(); ++d) {
        const std::string& symbol = (*result_leaves)[i].symbols[d];
        loop::Var var = symbol.empty() ? loop::Var() : te::SymbolScope::Lookup(symbol);
        symbols_match &= symbol.empty() || tensor.dim(static_cast<int>(d)).same_as(var);
      }
      if (tensor.shape() != (*result_leaves)[i].shape || !symbols_match ||
          tensor.dtype() != (*result_leaves)[i].dtype) {
        return absl::InternalError(absl::StrCat(prefix, "result ", i,
                                                " of the compute does not match the call's type"));
      }
    }
    values_[expr.get()] = *std::move(outputs);
    return absl::OkStatus();
  }

  PrimitiveCompute result_;
  std::unordered_map<const ExprNode*, std::vector<te::Tensor>> values_;
  int constant_count_ = 0;
};

}  // namespace

absl::StatusOr<PrimitiveCompute> BuildPrimitiveCompute(const FunctionNode& func) {
  return ComputeBuilder().Build(func);
}

}  // namespace kiln::lower
