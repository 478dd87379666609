// Which ONNX nodes a bounded value may flow through (bounded_flow.h).
#include "engine/frontend/onnx/bounded_flow.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// Ops computing each output entry from the entry of input 0 at the same position.
const std::set<std::string>& PositionwiseOps() {
  static const auto* ops = new std::set<std::string>{
      "Identity", "Cast",      "Abs",       "Neg",      "Relu",     "Sigmoid",  "Tanh",
      "Exp",      "Log",       "Sqrt",      "Floor",    "Ceil",     "Round",    "Sign",
      "Not",      "IsNaN",     "IsInf",     "Reciprocal", "Erf",    "Softplus", "Softsign",
      "LeakyRelu", "Elu",      "Selu",      "Celu",     "ThresholdedRelu", "HardSigmoid",
      "HardSwish", "Sin",      "Cos",       "Tan",      "Asin",
      "Acos",     "Atan",      "Sinh",      "Cosh",     "Asinh",    "Acosh",    "Atanh",
      "Clip"};
  return *ops;
}

// Ops combining their inputs' entries at the same position, inputs broadcast (numpy rules).
// (Ops that expand into a function body, Mish or Gelu, meet the value inside the body, where it
// has no length: not listed.)
const std::set<std::string>& BroadcastingOps() {
  static const auto* ops = new std::set<std::string>{
      "Add",   "Sub",   "Mul",          "Div",        "Pow",     "Max",     "Min",
      "Sum",   "Mean",  "Equal",        "Less",       "LessOrEqual", "Greater",
      "GreaterOrEqual", "And", "Or",    "Xor",        "Where",   "Mod",     "BitShift"};
  return *ops;
}

absl::StatusOr<const TensorTypeNode*> TensorTypeOf(const Expr& value) {
  const auto* type = value.defined() ? value->checked_type.as<TensorTypeNode>() : nullptr;
  if (type == nullptr) return absl::InvalidArgumentError("its output is not a tensor");
  return type;
}

// Axes a node names, normalized to `rank`; an error when one is out of range.
absl::StatusOr<std::vector<int64_t>> NormalizedAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range"));
    }
    if (axis < 0) axis += rank;
  }
  return axes;
}

// Unsqueeze's and Squeeze's axes, read as their converters read them (absent: none given).
absl::StatusOr<std::optional<std::vector<int64_t>>> SqueezeAxes(const ConvertContext& ctx) {
  return IntsFromInputOrAttr(ctx, 1, "axes", "axes");
}

absl::StatusOr<int64_t> ThroughBroadcast(const ConvertContext& ctx,
                                         const std::vector<BoundedOperand>& operands,
                                         const TensorTypeNode& out) {
  const std::string& op = ctx.node().op_type();
  const int64_t rank = static_cast<int64_t>(out.shape.size());
  std::optional<int64_t> axis;
  for (const BoundedOperand& operand : operands) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(operand.input));
    // Padding is some valid value of the type, not a chosen one: as a divisor it may be 0, as a
    // shift amount too large, which fails an interpreted run (native code gives 0).
    if ((op == "Div" || op == "Mod") && operand.input == 1 && !IsFloat(type->dtype)) {
      return absl::InvalidArgumentError(
          "input 1 is an integer divisor, whose entries past the run-time length may be 0");
    }
    if (op == "BitShift" && operand.input == 1) {
      return absl::InvalidArgumentError(
          "input 1 is a shift amount, whose entries past the run-time length may exceed the bits");
    }
    int64_t aligned = operand.axis + rank - static_cast<int64_t>(type->shape.size());
    if (axis && *axis != aligned) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", operand.input, " is bounded along output axis ", aligned, " and an earlier "
          "input along ", *axis, ": their positions do not line up"));
    }
    axis = aligned;
  }
  for (size_t k = 0; k < static_cast<size_t>(ctx.node().input_size()); ++k) {
    bool bounded = std::any_of(operands.begin(), operands.end(),
                               [&](const BoundedOperand& o) { return o.input == static_cast<int>(k); });
    if (bounded || !ctx.HasInput(k)) continue;
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(k));
    int64_t own = *axis - (rank - static_cast<int64_t>(type->shape.size()));
    if (own >= 0 && !(type->shape[own].is_static() && type->shape[own].value == 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", k, " has an extent other than 1 along that axis: only a broadcast operand "
          "lines up with a run-time length"));
    }
  }
  return *axis;
}

absl::StatusOr<int64_t> ThroughGather(const ConvertContext& ctx, const BoundedOperand& operand,
                                      const TensorTypeNode& out) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, ctx.InputTensorType(1));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> normalized,
                        NormalizedAxes({axis}, static_cast<int64_t>(data->shape.size())));
  axis = normalized[0];
  const int64_t index_rank = static_cast<int64_t>(indices->shape.size());
  int64_t result;
  if (operand.input == 1) {
    result = axis + operand.axis;  // each bounded index picks its own slice
  } else if (operand.axis == axis) {
    return absl::InvalidArgumentError("it gathers along the bounded axis, reading any position");
  } else {
    result = operand.axis < axis ? operand.axis : operand.axis + index_rank - 1;
  }
  if (result >= static_cast<int64_t>(out.shape.size())) {
    return absl::InvalidArgumentError("its output has no such axis");
  }
  return result;
}

// Reductions along other axes: each output entry at a bounded position reduces entries at that
// position only.
const std::set<std::string>& ReduceOps() {
  static const auto* ops = new std::set<std::string>{
      "ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
      "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
      "ArgMax",    "ArgMin"};
  return *ops;
}

// Where the bounded axis `axis` of an input of `rank` lands when `reduced` axes (normalized) are
// reduced, kept as extent 1 with `keepdims`; an error when it is one of them.
absl::StatusOr<int64_t> AxisAfterReducing(int64_t axis, const std::vector<int64_t>& reduced,
                                          bool keepdims) {
  if (std::find(reduced.begin(), reduced.end(), axis) != reduced.end()) {
    return absl::InvalidArgumentError("it reduces the bounded axis, padding included");
  }
  if (keepdims) return axis;
  return axis - std::count_if(reduced.begin(), reduced.end(), [&](int64_t d) { return d < axis; });
}

absl::StatusOr<int64_t> ThroughReduce(const ConvertContext& ctx, const BoundedOperand& operand) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* in, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(in->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, ctx.IntAttr("keepdims", 1));
  std::vector<int64_t> axes;
  if (ctx.node().op_type() == "ArgMax" || ctx.node().op_type() == "ArgMin") {
    KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
    axes = {axis};
  } else {
    if (ctx.HasInput(1) && !ctx.ConstantInput(1)) {
      return absl::InvalidArgumentError("its axes are known only at run time");
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given,
                          IntsFromInputOrAttr(ctx, 1, "axes", "axes"));
    KILN_ASSIGN_OR_RETURN(int64_t noop, ctx.IntAttr("noop_with_empty_axes", 0));
    if (!given || given->empty()) {
      if (noop != 0) return operand.axis;  // no reduction at all
      return absl::InvalidArgumentError("it reduces every axis, the bounded one and its padding");
    }
    axes = *given;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, NormalizedAxes(axes, rank));
  return AxisAfterReducing(operand.axis, reduced, keepdims != 0);
}

// The axes Slice cuts: an attribute before opset 10, else input 3 (constant), else the first
// len(starts).
absl::StatusOr<std::vector<int64_t>> SlicedAxes(const ConvertContext& ctx) {
  if (ctx.opset() < 10) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ctx.IntsAttr("starts", std::nullopt));
    std::vector<int64_t> first(starts.size());
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
    return ctx.IntsAttr("axes", first);
  }
  if (ctx.HasInput(3)) {
    if (!ctx.ConstantInput(3)) return absl::InvalidArgumentError("its axes are known only at run time");
    return ctx.ConstantInts(3, "axes");
  }
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* starts, ctx.InputTensorType(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, ctx.InputTensorType(0));
  // The declared length is request data: checked against the rank before it sizes anything.
  if (starts->shape.size() != 1 || !starts->shape[0].is_static() ||
      starts->shape[0].value > static_cast<int64_t>(data->shape.size())) {
    return absl::InvalidArgumentError("its starts do not list at most one entry per axis");
  }
  std::vector<int64_t> first(static_cast<size_t>(starts->shape[0].value));
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i);
  return first;
}

}  // namespace

absl::StatusOr<int64_t> BoundedAxisThrough(const ConvertContext& ctx,
                                           const std::vector<BoundedOperand>& operands,
                                           const Expr& output) {
  const std::string& op = ctx.node().op_type();
  const bool default_domain = ctx.node().domain().empty() || ctx.node().domain() == "ai.onnx";
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* out, TensorTypeOf(output));
  const int64_t out_rank = static_cast<int64_t>(out->shape.size());
  if (operands.empty()) return absl::InvalidArgumentError("no input is bounded");
  const BoundedOperand& first = operands[0];
  if (!default_domain) {
    return absl::InvalidArgumentError(absl::StrCat("domain '", ctx.node().domain(),
                                                   "' is not ONNX's own"));
  }
  if (BroadcastingOps().count(op)) {
    return ThroughBroadcast(ctx, operands, *out);
  }
  if (op == "Concat") {
    // Parts of one length side by side along another axis: every part must be bounded alike.
    // (Before opset 4 the axis defaults to 1, as the converter reads it.)
    KILN_ASSIGN_OR_RETURN(int64_t axis,
                          ctx.IntAttr("axis", ctx.opset() < 4 ? std::optional<int64_t>(1)
                                                              : std::nullopt));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizedAxes({axis}, out_rank));
    if (normalized[0] == first.axis) {
      return absl::InvalidArgumentError("it concatenates along the bounded axis, after the padding");
    }
    for (int k = 0; k < ctx.node().input_size(); ++k) {
      if (!ctx.HasInput(static_cast<size_t>(k))) continue;  // an empty name: no part
      auto it = std::find_if(operands.begin(), operands.end(),
                             [&](const BoundedOperand& o) { return o.input == k; });
      if (it == operands.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", k, " is not bounded: its extent cannot match a run-time length"));
      }
      if (it->axis != first.axis) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", k, " is bounded along axis ", it->axis, ", input ", first.input,
            " along ", first.axis));
      }
    }
    return first.axis;
  }
  if (operands.size() > 1 || first.input != 0) {
    if ((op == "Gather" || op == "GatherND") && operands.size() == 1 && first.input == 1) {
      // indices: below
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(op, " takes a bounded value only as ",
                       op == "Gather" || op == "GatherND" ? "its data or indices" : "input 0"));
    }
  }
  if (PositionwiseOps().count(op)) return first.axis;
  if (op == "Transpose") {
    std::vector<int64_t> reversed;
    for (int64_t d = out_rank; d-- > 0;) reversed.push_back(d);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.IntsAttr("perm", reversed));
    if (perm.empty()) perm = reversed;
    KILN_ASSIGN_OR_RETURN(perm, NormalizedAxes(perm, out_rank));
    auto at = std::find(perm.begin(), perm.end(), first.axis);
    if (at == perm.end()) return absl::InvalidArgumentError("perm does not list the bounded axis");
    return at - perm.begin();
  }
  if (op == "Unsqueeze") {
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given, SqueezeAxes(ctx));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> inserted,
                          NormalizedAxes(given.value_or(std::vector<int64_t>{}), out_rank));
    // The input's axes fill the output's positions not inserted, in order.
    int64_t seen = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
      if (std::find(inserted.begin(), inserted.end(), d) != inserted.end()) continue;
      if (seen++ == first.axis) return d;
    }
    return absl::InvalidArgumentError("its output has no such axis");
  }
  if (op == "Squeeze") {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* in, ctx.InputTensorType(0));
    const int64_t in_rank = static_cast<int64_t>(in->shape.size());
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given, SqueezeAxes(ctx));
    if (!given) {
      // ONNX removes every axis of extent 1, the bounded one too when a run's length is 1.
      return absl::InvalidArgumentError(
          "Squeeze without axes would remove the bounded axis when a run's length is 1: name "
          "the axes");
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> removed, NormalizedAxes(*given, in_rank));
    if (std::find(removed.begin(), removed.end(), first.axis) != removed.end()) {
      return absl::InvalidArgumentError(
          "it squeezes the bounded axis, whose run-time length need not be 1");
    }
    return first.axis - std::count_if(removed.begin(), removed.end(),
                                      [&](int64_t d) { return d < first.axis; });
  }
  if (ReduceOps().count(op)) return ThroughReduce(ctx, first);
  if (op == "Slice") {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* in, ctx.InputTensorType(0));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SlicedAxes(ctx));
    KILN_ASSIGN_OR_RETURN(axes, NormalizedAxes(axes, static_cast<int64_t>(in->shape.size())));
    if (std::find(axes.begin(), axes.end(), first.axis) != axes.end()) {
      return absl::InvalidArgumentError("it slices the bounded axis, whose filled part a run decides");
    }
    return first.axis;
  }
  if (op == "Split") {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* in, ctx.InputTensorType(0));
    KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> normalized,
                          NormalizedAxes({axis}, static_cast<int64_t>(in->shape.size())));
    if (normalized[0] == first.axis) {
      return absl::InvalidArgumentError("it splits the bounded axis, at positions a run decides");
    }
    return first.axis;  // each part keeps every position of the bounded axis
  }
  if (op == "Gather") return ThroughGather(ctx, first, *out);
  if (op == "GatherND") {
    KILN_ASSIGN_OR_RETURN(int64_t batch_dims, ctx.IntAttr("batch_dims", 0));
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, ctx.InputTensorType(1));
    const int64_t index_rank = static_cast<int64_t>(indices->shape.size());
    if (first.input != 1 || batch_dims != 0 || first.axis >= index_rank - 1) {
      return absl::InvalidArgumentError(
          "GatherND takes a bounded value only as rows of its indices (batch_dims 0)");
    }
    return first.axis;  // each bounded row of indices picks its own slice
  }
  return absl::InvalidArgumentError(absl::StrCat(
      op, " is not among the ops a bounded value flows through (elementwise ops, Transpose, "
          "Unsqueeze, Squeeze, Slice, Split, Concat, Gather, GatherND, reductions along other "
          "axes): it would read the entries past the run-time length as data"));
}

}  // namespace kiln::onnx_frontend
