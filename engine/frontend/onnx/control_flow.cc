// If as a graph `if` or its known branch; Loop and Scan unrolled at import (see control_flow.h).
#include "engine/frontend/onnx/control_flow.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

absl::StatusOr<const onnx::GraphProto*> GraphAttr(ConvertContext& ctx, const std::string& name) {
  const onnx::AttributeProto* attr = ctx.FindAttr(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::GRAPH) {
    return ctx.Error(absl::StrCat("attribute '", name, "' (a graph) is required"));
  }
  return &attr->g();
}

// The value of `e` when the importer knows it: a constant, or a graph input the caller fixed.
TensorData KnownValue(const ConvertContext& ctx, const Expr& e) {
  if (const auto* constant = e.as<ConstantNode>()) return constant->data;
  if (const auto* var = e.as<VarNode>()) {
    auto it = ctx.options().input_values.find(var->name_hint);
    if (it != ctx.options().input_values.end()) return it->second;
  }
  return nullptr;
}

std::optional<bool> KnownBool(const ConvertContext& ctx, const Expr& e) {
  TensorData data = KnownValue(ctx, e);
  std::optional<double> value = data ? ScalarValue(data) : std::nullopt;
  if (!value) return std::nullopt;
  return *value != 0;
}

// `parts` (each of shape S) stacked along a new leading axis: (parts.size(), S...).
absl::StatusOr<Expr> Stack(ConvertContext& ctx, const std::vector<Expr>& parts, int64_t axis) {
  std::vector<Expr> expanded;
  for (const Expr& part : parts) {
    KILN_ASSIGN_OR_RETURN(Expr e, ctx.Call("expand_dims", {part},
                                           MakeAttrs({{"axis", axis}, {"num_newaxis", int64_t{1}}})));
    expanded.push_back(e);
  }
  if (expanded.size() == 1) return expanded[0];
  return ctx.Call("concatenate", std::move(expanded), MakeAttrs({{"axis", axis}}));
}

// x[index] along `axis`, that axis dropped.
absl::StatusOr<Expr> Slice(ConvertContext& ctx, const Expr& x, int64_t axis, int64_t index) {
  KILN_ASSIGN_OR_RETURN(Expr s, ctx.Call("strided_slice", {x},
                                         MakeAttrs({{"begin", IntArray({index})},
                                                    {"end", IntArray({index + 1})},
                                                    {"strides", IntArray({1})},
                                                    {"axes", IntArray({axis})}})));
  return ctx.Call("squeeze", {s}, MakeAttrs({{"axis", IntArray({axis})}}));
}

absl::Status CheckIterations(ConvertContext& ctx, int64_t iterations) {
  if (iterations > kMaxUnrolledIterations) {
    return ctx.Error(absl::StrCat(iterations, " iterations are more than the ",
                                  kMaxUnrolledIterations, " Kiln unrolls"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Expr>> ConvertIf(ConvertContext& ctx, const RunSubgraph& run) {
  KILN_ASSIGN_OR_RETURN(Expr cond, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* then_branch, GraphAttr(ctx, "then_branch"));
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* else_branch, GraphAttr(ctx, "else_branch"));
  if (std::optional<bool> known = KnownBool(ctx, cond)) {
    return run(*known ? *then_branch : *else_branch, {});
  }
  // A run-time condition: an If of the graph, each branch computed only when taken (lowering
  // makes it a branch of main around the branch's kernels).
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> then_out, run(*then_branch, {}));
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> else_out, run(*else_branch, {}));
  if (then_out.size() != else_out.size()) {
    return ctx.Error("then_branch and else_branch have different numbers of outputs");
  }
  for (size_t k = 0; k < then_out.size(); ++k) {
    if (!StructuralEqual(then_out[k]->checked_type, else_out[k]->checked_type)) {
      return ctx.Error(absl::StrCat(
          "output ", k, " has type ", TypeToString(then_out[k]->checked_type), " in then_branch and ",
          TypeToString(else_out[k]->checked_type),
          " in else_branch: with a condition known only at run time, the branches must give "
          "outputs of one type"));
    }
  }
  const auto* cond_type = cond->checked_type.as<TensorTypeNode>();
  if (cond_type == nullptr || cond_type->dtype != DataType::kBool) {
    return ctx.Error(absl::StrCat("the condition must be a bool tensor, got ",
                                  TypeToString(cond->checked_type)));
  }
  if (!cond_type->shape.empty()) {
    KILN_ASSIGN_OR_RETURN(cond, ctx.Call("reshape", {cond},
                                         MakeAttrs({{"newshape", IntArray(std::vector<int64_t>{})}})));
  }
  if (then_out.size() == 1) {
    KILN_ASSIGN_OR_RETURN(Expr out, ctx.If(cond, then_out[0], else_out[0]));
    return std::vector<Expr>{out};
  }
  KILN_ASSIGN_OR_RETURN(Expr then_tuple, ctx.Tuple(then_out));
  KILN_ASSIGN_OR_RETURN(Expr else_tuple, ctx.Tuple(else_out));
  KILN_ASSIGN_OR_RETURN(Expr both, ctx.If(cond, then_tuple, else_tuple));
  std::vector<Expr> out;
  for (size_t k = 0; k < then_out.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr field, ctx.TupleGetItem(both, static_cast<int>(k)));
    out.push_back(field);
  }
  return out;
}

// Loop(M, cond, v...): body(iteration, cond, v...) -> (cond, v..., scan outputs...). Unrolled
// when the trip count and every condition are known at import and there are at most
// kMaxUnrolledLoopIterations iterations; a run-time loop otherwise.
absl::StatusOr<std::vector<Expr>> ConvertLoop(ConvertContext& ctx, const RunSubgraph& run) {
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(ctx, "body"));
  std::optional<int64_t> trip_count;
  if (ctx.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr m, ctx.Input(0));
    TensorData value = KnownValue(ctx, m);
    std::optional<double> count = value ? ScalarValue(value) : std::nullopt;
    if (!count) return ConvertRunTimeLoop(ctx, run, *body);
    trip_count = static_cast<int64_t>(*count);
  }
  Expr cond = ctx.Constant(ScalarTensor(DataType::kBool, 1));
  if (ctx.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(cond, ctx.Input(1));
  }
  std::vector<Expr> state;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(i));
    state.push_back(v);
  }
  const size_t num_state = state.size();
  if (body->output_size() < static_cast<int>(1 + num_state)) {
    return ctx.Error("the body has fewer outputs than the condition and the loop-carried values");
  }
  const size_t num_scan = body->output_size() - 1 - num_state;
  if (trip_count.value_or(kMaxUnrolledLoopIterations + 1) > kMaxUnrolledLoopIterations &&
      !ctx.HasInput(1)) {
    return ConvertRunTimeLoop(ctx, run, *body);
  }
  const int64_t limit = std::min(trip_count.value_or(kMaxUnrolledLoopIterations + 1),
                                 kMaxUnrolledLoopIterations + 1);
  std::vector<std::vector<Expr>> scans(num_scan);
  int64_t i = 0;
  for (; i < limit; ++i) {
    std::optional<bool> go = KnownBool(ctx, cond);
    // What the importer cannot follow runs as a loop (the iterations unrolled so far are
    // dropped: nothing reads them).
    if (!go) return ConvertRunTimeLoop(ctx, run, *body);
    if (!*go) break;
    if (i == kMaxUnrolledLoopIterations) return ConvertRunTimeLoop(ctx, run, *body);
    std::vector<Expr> inputs = {ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(i))),
                                cond};
    inputs.insert(inputs.end(), state.begin(), state.end());
    KILN_ASSIGN_OR_RETURN(std::vector<Expr> out, run(*body, inputs));
    cond = out[0];
    for (size_t k = 0; k < num_state; ++k) state[k] = out[1 + k];
    for (size_t k = 0; k < num_scan; ++k) scans[k].push_back(out[1 + num_state + k]);
  }
  std::vector<Expr> outputs = state;
  for (size_t k = 0; k < num_scan; ++k) {
    if (scans[k].empty()) return ctx.Error("a loop of zero iterations has scan outputs of unknown shape");
    KILN_ASSIGN_OR_RETURN(Expr stacked, Stack(ctx, scans[k], 0));
    outputs.push_back(stacked);
  }
  return outputs;
}

// The number of steps of a scan: the static extent every scan input has along its scan axis.
absl::StatusOr<int64_t> ScanSteps(ConvertContext& ctx, const std::vector<Expr>& scan_inputs,
                                  const std::vector<int64_t>& input_axes) {
  int64_t steps = -1;
  for (size_t k = 0; k < scan_inputs.size(); ++k) {
    const auto* t = scan_inputs[k]->checked_type.as<TensorTypeNode>();
    if (t == nullptr || input_axes[k] >= static_cast<int64_t>(t->shape.size()) ||
        !t->shape[input_axes[k]].is_static()) {
      return ctx.Error("scan inputs must be tensors with a static extent along their scan axis");
    }
    int64_t extent = t->shape[input_axes[k]].value;
    if (steps >= 0 && extent != steps) {
      return ctx.Error(absl::StrCat("scan inputs have ", steps, " and ", extent, " steps"));
    }
    steps = extent;
  }
  if (steps <= 0) return ctx.Error("a scan needs at least one step");
  return steps;
}

// One scan (opset 9+ semantics) over `state` and `scan_inputs`, unrolled.
absl::StatusOr<std::vector<Expr>> RunScan(ConvertContext& ctx, const RunSubgraph& run,
                                          const onnx::GraphProto& body, std::vector<Expr> state,
                                          const std::vector<Expr>& scan_inputs,
                                          const std::vector<int64_t>& input_axes,
                                          const std::vector<int64_t>& input_directions,
                                          std::vector<int64_t> output_axes,
                                          const std::vector<int64_t>& output_directions) {
  KILN_ASSIGN_OR_RETURN(int64_t steps, ScanSteps(ctx, scan_inputs, input_axes));
  KILN_RETURN_IF_ERROR(CheckIterations(ctx, steps));
  const size_t num_state = state.size();
  const size_t num_scan_out = body.output_size() - num_state;
  std::vector<std::vector<Expr>> scans(num_scan_out);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Expr> inputs = state;
    for (size_t k = 0; k < scan_inputs.size(); ++k) {
      int64_t at = input_directions[k] != 0 ? steps - 1 - t : t;
      KILN_ASSIGN_OR_RETURN(Expr slice, Slice(ctx, scan_inputs[k], input_axes[k], at));
      inputs.push_back(slice);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Expr> out, run(body, inputs));
    for (size_t k = 0; k < num_state; ++k) state[k] = out[k];
    for (size_t k = 0; k < num_scan_out; ++k) scans[k].push_back(out[num_state + k]);
  }
  std::vector<Expr> outputs = state;
  for (size_t k = 0; k < num_scan_out; ++k) {
    if (output_directions[k] != 0) std::reverse(scans[k].begin(), scans[k].end());
    KILN_ASSIGN_OR_RETURN(Expr stacked, Stack(ctx, scans[k], output_axes[k]));
    outputs.push_back(stacked);
  }
  return outputs;
}

// The attribute `name` (one entry per `count`), defaulting to zeros; negative axes count from
// `ranks[k]`.
absl::StatusOr<std::vector<int64_t>> PerInput(ConvertContext& ctx, const std::string& name,
                                              size_t count, const std::vector<int64_t>& ranks) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                        ctx.IntsAttr(name, std::vector<int64_t>(count, 0)));
  if (values.size() != count) {
    return ctx.Error(absl::StrCat("attribute '", name, "' has ", values.size(), " entries, expected ",
                                  count));
  }
  for (size_t k = 0; k < count && !ranks.empty(); ++k) {
    if (values[k] < -ranks[k] || values[k] >= ranks[k]) {
      return ctx.Error(absl::StrCat("attribute '", name, "' entry ", k, " is ", values[k],
                                    ", outside [", -ranks[k], ", ", ranks[k], ")"));
    }
    if (values[k] < 0) values[k] += ranks[k];
  }
  return values;
}

absl::StatusOr<std::vector<Expr>> ConvertScan(ConvertContext& ctx, const RunSubgraph& run) {
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(ctx, "body"));
  KILN_ASSIGN_OR_RETURN(int64_t num_scan_inputs, ctx.IntAttr("num_scan_inputs", std::nullopt));
  const bool batched = ctx.opset() < 9;  // Scan-8: a batch axis first, then sequence_lens
  const size_t first = batched ? 1 : 0;
  if (batched && ctx.HasInput(0)) {
    return ctx.Error("sequence_lens is not supported (every sequence runs the full length)");
  }
  if (num_scan_inputs < 1 || static_cast<size_t>(num_scan_inputs) > ctx.num_inputs() - first) {
    return ctx.Error("attribute 'num_scan_inputs' does not fit the inputs");
  }
  const size_t num_state = ctx.num_inputs() - first - num_scan_inputs;
  if (body->output_size() < static_cast<int>(num_state)) {
    return ctx.Error("the body has fewer outputs than the state values");
  }
  const size_t num_scan_out = body->output_size() - num_state;
  std::vector<Expr> state, scan_inputs;
  std::vector<int64_t> scan_ranks;
  for (size_t i = first; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(i));
    if (i < first + num_state) {
      state.push_back(v);
    } else {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(i));
      scan_inputs.push_back(v);
      scan_ranks.push_back(static_cast<int64_t>(t->shape.size()) - (batched ? 1 : 0));
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> input_axes,
                        PerInput(ctx, "scan_input_axes", scan_inputs.size(), scan_ranks));
  const char* directions_name = batched ? "directions" : "scan_input_directions";
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> input_directions,
                        PerInput(ctx, directions_name, scan_inputs.size(), {}));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> output_axes,
                        PerInput(ctx, "scan_output_axes", num_scan_out, {}));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> output_directions,
                        PerInput(ctx, "scan_output_directions", num_scan_out, {}));
  if (!batched) {
    KILN_ASSIGN_OR_RETURN(int64_t steps, ScanSteps(ctx, scan_inputs, input_axes));
    if (steps > kMaxUnrolledLoopIterations) {
      return ConvertScanAsLoop(ctx, run,
                               ScanLoop{body, state, scan_inputs, input_axes, input_directions,
                                        output_axes, output_directions, steps});
    }
    return RunScan(ctx, run, *body, state, scan_inputs, input_axes, input_directions, output_axes,
                   output_directions);
  }
  // Scan-8: every input has a leading batch axis; each batch entry is its own scan.
  const auto* t0 = scan_inputs[0]->checked_type.as<TensorTypeNode>();
  if (t0 == nullptr || t0->shape.empty() || !t0->shape[0].is_static()) {
    return ctx.Error("scan inputs must have a static batch axis");
  }
  const int64_t batch = t0->shape[0].value;
  KILN_RETURN_IF_ERROR(CheckIterations(ctx, batch));
  std::vector<std::vector<Expr>> per_batch(num_state + num_scan_out);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Expr> b_state, b_scan;
    for (const Expr& s : state) {
      KILN_ASSIGN_OR_RETURN(Expr e, Slice(ctx, s, 0, b));
      b_state.push_back(e);
    }
    for (const Expr& s : scan_inputs) {
      KILN_ASSIGN_OR_RETURN(Expr e, Slice(ctx, s, 0, b));
      b_scan.push_back(e);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Expr> out,
                          RunScan(ctx, run, *body, b_state, b_scan, input_axes, input_directions,
                                  output_axes, output_directions));
    for (size_t k = 0; k < out.size(); ++k) per_batch[k].push_back(out[k]);
  }
  std::vector<Expr> outputs;
  for (const std::vector<Expr>& parts : per_batch) {
    KILN_ASSIGN_OR_RETURN(Expr stacked, Stack(ctx, parts, 0));
    outputs.push_back(stacked);
  }
  return outputs;
}

}  // namespace

bool IsControlFlowOp(const std::string& op_type) {
  return op_type == "If" || op_type == "Loop" || op_type == "Scan";
}

absl::StatusOr<std::vector<Expr>> ConvertControlFlow(ConvertContext& ctx, const RunSubgraph& run) {
  const std::string& op = ctx.node().op_type();
  if (op == "If") return ConvertIf(ctx, run);
  if (op == "Loop") return ConvertLoop(ctx, run);
  return ConvertScan(ctx, run);
}

}  // namespace kiln::onnx_frontend
