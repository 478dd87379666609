// FindSampleBatch: the per-op proof that a model with a symbolic batch dim computes each sample
// on its own (see sample_batch.h).
#include "engine/lower/sample_batch.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ir/expr_walk.h"
#include "engine/lower/lowering_util.h"
#include "engine/op/op_registry.h"
#include "engine/support/status_macros.h"

namespace kiln::lower {
namespace {

// The tensor types of a value, tuples flattened depth first (a function type has none).
void TensorTypes(const Type& type, std::vector<const TensorTypeNode*>* out) {
  if (const auto* tensor = type.as<TensorTypeNode>()) {
    out->push_back(tensor);
  } else if (const auto* tuple = type.as<TupleTypeNode>()) {
    for (const Type& field : tuple->fields) TensorTypes(field, out);
  }
}

std::vector<const TensorTypeNode*> TensorTypesOf(const Type& type) {
  std::vector<const TensorTypeNode*> out;
  if (type) TensorTypes(type, &out);
  return out;
}

// Where the symbolic dims of `type` are: each (tensor leaf, axis, name).
struct SymbolicDim {
  size_t leaf;
  size_t axis;
  std::string name;
};
std::vector<SymbolicDim> SymbolicDims(const Type& type) {
  std::vector<SymbolicDim> out;
  std::vector<const TensorTypeNode*> leaves = TensorTypesOf(type);
  for (size_t leaf = 0; leaf < leaves.size(); ++leaf) {
    for (size_t axis = 0; axis < leaves[leaf]->shape.size(); ++axis) {
      const Dim& dim = leaves[leaf]->shape[axis];
      if (!dim.is_static()) out.push_back({leaf, axis, dim.symbol});
    }
  }
  return out;
}

std::string DescribeType(const Type& type) {
  std::vector<std::string> leaves;
  for (const TensorTypeNode* tensor : TensorTypesOf(type)) {
    std::vector<std::string> dims;
    for (const Dim& dim : tensor->shape) {
      dims.push_back(dim.is_static() ? absl::StrCat(dim.value)
                                     : (dim.symbol.empty() ? "?" : dim.symbol));
    }
    leaves.push_back(absl::StrCat("(", absl::StrJoin(dims, ", "), ")"));
  }
  return absl::StrJoin(leaves, ", ");
}

int64_t NormalizedAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

class SampleBatchChecker {
 public:
  explicit SampleBatchChecker(std::string symbol) : symbol_(std::move(symbol)) {}

  // A tensor whose axis 0 is the batch.
  bool IsBatched(const TensorTypeNode* tensor) const {
    return !tensor->shape.empty() && !tensor->shape[0].is_static() &&
           tensor->shape[0].symbol == symbol_;
  }
  // A value with a batched tensor among its leaves.
  bool HasBatch(const Type& type) const {
    for (const TensorTypeNode* tensor : TensorTypesOf(type)) {
      if (IsBatched(tensor)) return true;
    }
    return false;
  }
  // Every tensor leaf (at least one) batched.
  bool AllBatched(const Type& type) const {
    std::vector<const TensorTypeNode*> leaves = TensorTypesOf(type);
    for (const TensorTypeNode* tensor : leaves) {
      if (!IsBatched(tensor)) return false;
    }
    return !leaves.empty();
  }

  // Every symbolic dim of `type` is the batch on axis 0; `what` names the value in errors.
  absl::Status CheckDims(const Type& type, const std::string& what) const {
    for (const SymbolicDim& dim : SymbolicDims(type)) {
      if (dim.name != symbol_ || dim.axis != 0) {
        return absl::UnimplementedError(absl::StrCat(
            what, " has type ", DescribeType(type), ": dimension ",
            dim.name.empty() ? "?" : dim.name, " on axis ", dim.axis,
            " is known only at run time, and Kiln compiles a run-time dimension only as the batch "
            "(axis 0, dimension ", symbol_, ", each sample computed on its own); give the inputs "
            "static shapes (input_shapes) to compile it"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckNode(const ExprNode* node) const {
    if (node->kind() == ObjectKind::kFunction || node->kind() == ObjectKind::kOp ||
        node->kind() == ObjectKind::kGlobalVar) {
      return absl::OkStatus();  // their values are checked where they are used
    }
    Span span = node->span;
    if (absl::Status dims = CheckDims(node->checked_type, NodePrefix(NodeName(node), span) + "the value");
        !dims.ok()) {
      return dims;
    }
    if (node->kind() == ObjectKind::kCall) return CheckCall(static_cast<const CallNode*>(node));
    if (node->kind() == ObjectKind::kIf) {
      const auto* branch = static_cast<const IfNode*>(node);
      if (HasBatch(branch->cond->checked_type) || HasBatch(node->checked_type)) {
        return Refuse(node, "an If whose condition or result varies by sample");
      }
    }
    return absl::OkStatus();
  }

 private:
  static std::string NodeName(const ExprNode* node) {
    if (node->kind() == ObjectKind::kCall) {
      const auto* op = static_cast<const CallNode*>(node)->op.as<OpNode>();
      return op != nullptr ? op->name : "call";
    }
    if (node->kind() == ObjectKind::kIf) return "If";
    if (node->kind() == ObjectKind::kVar) return "input";
    return "value";
  }

  absl::Status Refuse(const ExprNode* node, const std::string& why) const {
    return absl::UnimplementedError(absl::StrCat(
        NodePrefix(NodeName(node), node->span), why, ": it does not compute each sample of batch "
        "dimension ", symbol_, " on its own, so Kiln cannot compile it per sample; give the "
        "inputs fixed shapes (input_shapes, kiln-run --input_shape, kiln --input-shape)"));
  }

  // The attribute `key` of a call of `entry`: the call's, else the schema's default.
  static const AttrValue* Attr(const CallNode* call, const OpEntry& entry, std::string_view key) {
    if (call->attrs) {
      if (const AttrValue* value = call->attrs->Find(key)) return value;
    }
    const AttrField* field = entry.FindAttr(key);
    return field != nullptr && field->default_value ? &*field->default_value : nullptr;
  }
  static std::optional<int64_t> IntOf(const CallNode* call, const OpEntry& entry,
                                      std::string_view key) {
    const AttrValue* value = Attr(call, entry, key);
    if (value == nullptr || !value->is<int64_t>()) return std::nullopt;
    return value->get<int64_t>();
  }
  static std::optional<std::vector<int64_t>> IntsOf(const CallNode* call, const OpEntry& entry,
                                                    std::string_view key) {
    const AttrValue* value = Attr(call, entry, key);
    if (value == nullptr || !value->is<AttrValue::Array>()) return std::nullopt;
    std::vector<int64_t> out;
    for (const AttrValue& element : value->get<AttrValue::Array>()) {
      if (!element.is<int64_t>()) return std::nullopt;
      out.push_back(element.get<int64_t>());
    }
    return out;
  }

  const TensorTypeNode* ArgTensor(const CallNode* call, size_t index) const {
    if (index >= call->args.size()) return nullptr;
    return call->args[index]->checked_type.as<TensorTypeNode>();
  }
  bool ArgBatched(const CallNode* call, size_t index) const {
    return index < call->args.size() && HasBatch(call->args[index]->checked_type);
  }
  // Only the first `count` arguments may vary by sample.
  bool OthersUnbatched(const CallNode* call, size_t count) const {
    for (size_t i = count; i < call->args.size(); ++i) {
      if (HasBatch(call->args[i]->checked_type)) return false;
    }
    return true;
  }
  // The call's `axis` attribute, normalized against argument 0's rank, is not the batch axis.
  bool AxisIsNotBatch(const CallNode* call, const OpEntry& entry, std::string_view key = "axis") const {
    std::optional<int64_t> axis = IntOf(call, entry, key);
    const TensorTypeNode* data = ArgTensor(call, 0);
    return axis && data != nullptr && NormalizedAxis(*axis, data->shape.size()) != 0;
  }

  absl::Status CheckCall(const CallNode* call) const {
    bool any_arg = false;
    for (const Expr& arg : call->args) any_arg = any_arg || HasBatch(arg->checked_type);
    const Type& result = call->checked_type;
    if (!any_arg && !HasBatch(result)) return absl::OkStatus();  // the same for every sample
    const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
    if (entry == nullptr) return Refuse(call, "a call of a function on values that vary by sample");
    if (entry->stateful) return Refuse(call, "a stateful op on values that vary by sample");
    if (!AllBatched(result)) {
      return Refuse(call, absl::StrCat("its result ", DescribeType(result),
                                       " does not keep the batch on axis 0"));
    }
    if (std::optional<std::string> why = PerSampleViolation(call, *entry)) return Refuse(call, *why);
    return absl::OkStatus();
  }

  // Why the call (whose result is batched) may mix samples, or nullopt when it cannot.
  std::optional<std::string> PerSampleViolation(const CallNode* call, const OpEntry& entry) const {
    const auto* result = call->checked_type.as<TensorTypeNode>();
    const std::string& name = entry.name;
    // Elementwise with numpy broadcasting: a batched operand must line its axis 0 up with the
    // result's; one that does not vary by sample may broadcast along it.
    if (entry.pattern == OpPattern::kElementwise || entry.pattern == OpPattern::kBroadcast) {
      if (result == nullptr) return "a tuple result";
      for (const Expr& arg : call->args) {
        const auto* tensor = arg->checked_type.as<TensorTypeNode>();
        if (tensor == nullptr) return "a tuple operand";
        if (tensor->shape.size() != result->shape.size()) {
          if (IsBatched(tensor)) return "an operand whose batch axis is not the result's axis 0";
          continue;
        }
        if (!IsBatched(tensor) && !(tensor->shape[0].is_static() && tensor->shape[0].value == 1)) {
          return "an operand that does not broadcast along the batch axis";
        }
      }
      return std::nullopt;
    }
    // Reductions keep the relative order of the axes they keep: a result whose axis 0 is the
    // batch did not reduce it.
    if (entry.pattern == OpPattern::kReduction) {
      return ArgBatched(call, 0) && OthersUnbatched(call, 1) ? std::nullopt
                                                             : std::optional<std::string>("a reduction whose batch operand is not its data");
    }
    // Rearrangements that never move axis 0 to another place (the result's axis 0 is the
    // batch, so it stayed): a sample's elements stay that sample's.
    if (name == "squeeze") {
      // Without axes it drops every extent-1 axis: the batch too, when a sample is compiled.
      std::optional<std::vector<int64_t>> axes = IntsOf(call, entry, "axis");
      if (!axes || axes->empty()) return "it squeezes every axis of extent 1, the batch's included";
    }
    if (name == "reshape" || name == "squeeze" || name == "expand_dims" || name == "one_hot" ||
        name == "nn.depth_to_space" || name == "nn.space_to_depth" || name == "image.resize1d" ||
        name == "image.resize2d" || name == "image.resize3d") {
      return ArgBatched(call, 0) && OthersUnbatched(call, 1)
                 ? std::nullopt
                 : std::optional<std::string>("an operand other than its data varies by sample");
    }
    // NCHW layers: the batch is axis 0 of the data; weights, bias and statistics are shared.
    static const std::set<std::string, std::less<>> kPerSampleLayers = {
        "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
        "nn.conv3d_transpose", "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d",
        "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.global_avg_pool1d",
        "nn.global_avg_pool2d", "nn.global_avg_pool3d", "nn.global_max_pool1d",
        "nn.global_max_pool2d", "nn.global_max_pool3d"};
    if (kPerSampleLayers.count(name) != 0) {
      return ArgBatched(call, 0) && OthersUnbatched(call, 1)
                 ? std::nullopt
                 : std::optional<std::string>("its weights vary by sample");
    }
    // Ops along one axis: fine when the axis is not the batch.
    if (name == "nn.softmax" || name == "nn.log_softmax" || name == "nn.hardmax" ||
        name == "nn.lrn" || name == "nn.layer_norm" || name == "nn.batch_norm" ||
        name == "nn.instance_norm" || name == "cumsum" || name == "reverse" || name == "topk" ||
        name == "split") {
      if (!ArgBatched(call, 0) || !OthersUnbatched(call, 1)) {
        return "an operand other than its data varies by sample";
      }
      return AxisIsNotBatch(call, entry) ? std::nullopt
                                         : std::optional<std::string>("it works along the batch axis");
    }
    if (name == "concatenate") {
      if (!AllBatched(call->args[0]->checked_type)) return "a concatenated value that does not vary by sample";
      std::optional<int64_t> axis = IntOf(call, entry, "axis");
      return axis && NormalizedAxis(*axis, result->shape.size()) != 0
                 ? std::nullopt
                 : std::optional<std::string>("it concatenates along the batch axis");
    }
    if (name == "transpose") {
      std::optional<std::vector<int64_t>> axes = IntsOf(call, entry, "axes");
      bool keeps = axes && !axes->empty() && NormalizedAxis((*axes)[0], result->shape.size()) == 0;
      return keeps && OthersUnbatched(call, 1) ? std::nullopt
                                               : std::optional<std::string>("it moves the batch axis");
    }
    if (name == "strided_slice") {
      std::optional<std::vector<int64_t>> begin = IntsOf(call, entry, "begin");
      std::optional<std::vector<int64_t>> end = IntsOf(call, entry, "end");
      std::optional<std::vector<int64_t>> strides = IntsOf(call, entry, "strides");
      std::optional<std::vector<int64_t>> axes = IntsOf(call, entry, "axes");
      if (!begin || !end || !strides || !axes || !OthersUnbatched(call, 1)) return "unknown slice bounds";
      size_t rank = result->shape.size();
      for (size_t k = 0; k < begin->size(); ++k) {
        int64_t axis = axes->empty() ? static_cast<int64_t>(k) : NormalizedAxis((*axes)[k], rank);
        if (axis != 0) continue;
        int64_t stride = k < strides->size() ? (*strides)[k] : 1;
        if ((*begin)[k] != 0 || k >= end->size() || (*end)[k] < (int64_t{1} << 31) - 1 || stride != 1) {
          return "it slices the batch axis";
        }
      }
      return std::nullopt;
    }
    if (name == "take") {
      // A batched table read at shared positions (axis other than 0), or a shared table read
      // at each sample's positions (an embedding lookup: axis 0 of the table).
      std::optional<int64_t> axis = IntOf(call, entry, "axis");
      const TensorTypeNode* data = ArgTensor(call, 0);
      if (!axis || data == nullptr) return "unknown axis";
      int64_t normalized = NormalizedAxis(*axis, data->shape.size());
      if (ArgBatched(call, 0) && !ArgBatched(call, 1) && normalized != 0) return std::nullopt;
      if (!ArgBatched(call, 0) && ArgBatched(call, 1) && normalized == 0) return std::nullopt;
      return "it gathers across samples";
    }
    if (name == "gather_elements") {
      return ArgBatched(call, 0) && ArgBatched(call, 1) && AxisIsNotBatch(call, entry)
                 ? std::nullopt
                 : std::optional<std::string>("it gathers across samples");
    }
    if (name == "nn.pad") {
      std::optional<std::vector<int64_t>> width = IntsOf(call, entry, "pad_width");
      size_t rank = result->shape.size();
      // All begins, then all ends.
      bool keeps = width && width->size() == 2 * rank && (*width)[0] == 0 && (*width)[rank] == 0;
      return keeps && OthersUnbatched(call, 1) ? std::nullopt
                                               : std::optional<std::string>("it pads the batch axis");
    }
    if (name == "tile") {
      std::optional<std::vector<int64_t>> reps = IntsOf(call, entry, "reps");
      bool keeps = reps && (reps->size() < result->shape.size() || (!reps->empty() && (*reps)[0] == 1));
      return keeps ? std::nullopt : std::optional<std::string>("it repeats the batch axis");
    }
    if (name == "broadcast_to") {
      const TensorTypeNode* data = ArgTensor(call, 0);
      if (data == nullptr) return "a tuple operand";
      bool same_rank = data->shape.size() == result->shape.size();
      if (IsBatched(data) ? same_rank
                          : (!same_rank || (data->shape[0].is_static() && data->shape[0].value == 1))) {
        return std::nullopt;
      }
      return "it does not broadcast along the batch axis";
    }
    if (name == "trilu") {
      return result->shape.size() >= 3 ? std::nullopt
                                       : std::optional<std::string>("its rows are the samples");
    }
    if (name == "nn.dense") {
      const TensorTypeNode* data = ArgTensor(call, 0);
      return data != nullptr && IsBatched(data) && data->shape.size() >= 2 && OthersUnbatched(call, 1)
                 ? std::nullopt
                 : std::optional<std::string>("its weight varies by sample");
    }
    if (name == "nn.matmul") {
      // numpy.matmul: a batched operand must be a batch of matrices (rank >= 3) lined up with
      // the result, or (a only) rows of a matrix that are not contracted.
      const TensorTypeNode* a = ArgTensor(call, 0);
      const TensorTypeNode* b = ArgTensor(call, 1);
      if (a == nullptr || b == nullptr) return "a tuple operand";
      size_t rank = result->shape.size();
      bool transpose_a = false;
      if (const AttrValue* value = Attr(call, entry, "transpose_a"); value != nullptr && value->is<bool>()) {
        transpose_a = value->get<bool>();
      }
      if (IsBatched(a) && (a->shape.size() != rank || (rank < 3 && transpose_a))) {
        return "it contracts the batch axis";
      }
      if (IsBatched(b) && (b->shape.size() != rank || rank < 3)) return "it contracts the batch axis";
      // A shared operand lined up with the batch axis must broadcast along it.
      for (const TensorTypeNode* shared : {a, b}) {
        if (!IsBatched(shared) && shared->shape.size() == rank && rank >= 3 &&
            !(shared->shape[0].is_static() && shared->shape[0].value == 1)) {
          return "an operand that does not broadcast along the batch axis";
        }
      }
      return std::nullopt;
    }
    if (name == "reverse_sequence") {
      std::optional<int64_t> batch_axis = IntOf(call, entry, "batch_axis");
      std::optional<int64_t> seq_axis = IntOf(call, entry, "seq_axis");
      return batch_axis == 0 && seq_axis && *seq_axis != 0 && ArgBatched(call, 0) && ArgBatched(call, 1)
                 ? std::nullopt
                 : std::optional<std::string>("its batch axis is not axis 0");
    }
    return absl::StrCat("Kiln has no per-sample rule for ", name);
  }

  std::string symbol_;
};

}  // namespace

absl::StatusOr<std::optional<SampleBatch>> FindSampleBatch(const IRModule& imported) {
  BaseFunc base = imported->Lookup("main");
  const auto* main = base.as<FunctionNode>();
  if (main == nullptr) return std::optional<SampleBatch>();
  // The batch symbol: the one name of main's symbolic input dims.
  std::string symbol;
  for (const Var& param : main->params) {
    for (const SymbolicDim& dim : SymbolicDims(param->type_annotation)) {
      if (dim.name.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "input '", param->name_hint, "' has an unnamed dimension known only at run time on axis ",
            dim.axis, ": name it (ONNX dim_param) to compile it as the batch, or give the input a "
            "fixed shape"));
      }
      if (symbol.empty()) symbol = dim.name;
      if (dim.name != symbol) {
        return absl::UnimplementedError(absl::StrCat(
            "inputs have two dimensions known only at run time, ", symbol, " and ", dim.name,
            " (input '", param->name_hint, "'): Kiln compiles one, the batch (axis 0 of the inputs "
            "that have it); give the others fixed shapes"));
      }
    }
  }
  if (symbol.empty()) return std::optional<SampleBatch>();
  SampleBatchChecker checker(symbol);
  SampleBatch batch;
  batch.symbol = symbol;
  for (const Var& param : main->params) {
    KILN_RETURN_IF_ERROR(
        checker.CheckDims(param->type_annotation, absl::StrCat("input '", param->name_hint, "'")));
    batch.inputs.push_back(checker.HasBatch(param->type_annotation));
  }
  std::set<const ExprNode*> visited;
  KILN_RETURN_IF_ERROR(WalkPostOrder(
      main->body.get(), ChildSet::kUses,
      [&](const WalkEdge& edge) { return visited.insert(edge.child).second; },
      [&](const ExprNode* node) -> absl::Status {
        // Per-sample runs copy each sample's slice of the inputs and outputs; string words point
        // at strings each run hands to the caller, which that copying does not follow.
        if (node->checked_type) {
          for (const TensorTypeNode* tensor : TensorTypesOf(node->checked_type)) {
            if (tensor->dtype == DataType::kString) {
              return absl::UnimplementedError(
                  "the model has string tensors, which need fixed input shapes (input_shapes, "
                  "kiln-run --input_shape, kiln --input-shape)");
            }
          }
        }
        return checker.CheckNode(node);
      }));
  const Type& result = main->body->checked_type;
  KILN_RETURN_IF_ERROR(checker.CheckDims(result, "the model's outputs"));
  for (const TensorTypeNode* output : TensorTypesOf(result)) batch.outputs.push_back(checker.IsBatched(output));
  return std::optional<SampleBatch>(std::move(batch));
}

}  // namespace kiln::lower
