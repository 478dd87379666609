// ONNX Loop as a graph while_loop (engine/op/while_loop.cc), for loops the importer cannot
// unroll: a trip count or a condition known only at run time, or more iterations than it
// unrolls. The loop's state is (condition, iteration, the loop-carried values..., one
// accumulator per scan output); the body is the ONNX body (built by while_loop_builder.h).
//
// Scan outputs: Kiln compiles static shapes, so a scan output has the number of rows the model
// declares for it (or the trip count, when that is known at import). Each iteration writes its
// row (where(row == iteration, value, accumulator), an elementwise kernel over the
// accumulator); after the loop an assert checks that the loop ran exactly that many
// iterations, and the run fails with an error naming the node otherwise.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/control_flow.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/while_loop_builder.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

absl::StatusOr<std::vector<Expr>> ConvertRunTimeLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                     const onnx::GraphProto& body) {
  Expr trip_count, cond;
  if (ctx.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr m, ctx.Input(0));
    KILN_ASSIGN_OR_RETURN(trip_count, OneElementAsScalar(ctx, m, DataType::kInt64, "the trip count M"));
  }
  if (ctx.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(Expr c, ctx.Input(1));
    KILN_ASSIGN_OR_RETURN(cond, OneElementAsScalar(ctx, c, DataType::kBool, "the condition"));
  }
  if (!trip_count && !cond) return ctx.Error("a Loop with neither M nor cond never ends");
  const size_t num_state = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  if (body.output_size() < static_cast<int>(1 + num_state)) {
    return ctx.Error("the body has fewer outputs than the condition and the loop-carried values");
  }
  const size_t num_scan = body.output_size() - 1 - num_state;

  // The state: (condition, iteration, loop-carried values..., scan accumulators...). The body's
  // condition input is true: it only runs while the loop's condition holds.
  WhileLoopBuilder loop(ctx);
  std::vector<Expr> body_inputs = {loop.iteration(), ctx.Constant(ScalarTensor(DataType::kBool, 1))};
  std::vector<std::string> names;
  for (size_t k = 0; k < num_state; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(2 + k));
    std::string name = body.input_size() > static_cast<int>(2 + k) ? body.input(2 + k).name()
                                                                     : absl::StrCat("v", k);
    names.push_back(absl::StrCat("loop-carried value ", k, " ('", name, "')"));
    KILN_ASSIGN_OR_RETURN(Var param, loop.AddState(name, v, names.back()));
    body_inputs.push_back(param);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> out, run(body, body_inputs));
  KILN_ASSIGN_OR_RETURN(Expr cond_out, OneElementAsScalar(ctx, out[0], DataType::kBool, "the body's condition"));
  Expr next_cond = cond_out;
  if (trip_count) {
    KILN_ASSIGN_OR_RETURN(Expr more, loop.NextBelow(trip_count));
    KILN_ASSIGN_OR_RETURN(next_cond, ctx.Call("logical_and", {cond_out, more}));
  }
  for (size_t k = 0; k < num_state; ++k) {
    KILN_RETURN_IF_ERROR(loop.SetNext(2 + k, out[1 + k], names[k]));
  }

  // Scan outputs: accumulators of the declared number of rows (or the trip count's).
  std::optional<int64_t> known_trips;
  if (const auto* constant = trip_count ? trip_count.as<ConstantNode>() : nullptr) {
    if (std::optional<double> value = ScalarValue(constant->data)) {
      known_trips = static_cast<int64_t>(*value);
    }
  }
  std::vector<int64_t> rows(num_scan);
  for (size_t k = 0; k < num_scan; ++k) {
    const Expr& value = out[1 + num_state + k];
    const std::string what = absl::StrCat("scan output ", k);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> row_shape, StaticLoopShape(ctx, value->checked_type, what));
    if (std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(num_state + k)) {
      std::vector<int64_t> expected = {declared->empty() ? -1 : (*declared)[0]};
      expected.insert(expected.end(), row_shape.begin(), row_shape.end());
      if (*declared != expected) {
        return ctx.Error(absl::StrCat(what, " is declared ", DimsString(*declared),
                                      " but its rows are ", DimsString(row_shape)));
      }
      rows[k] = (*declared)[0];
    } else if (known_trips) {
      rows[k] = *known_trips;
    } else {
      return ctx.Error(absl::StrCat(
          what, " has one row per iteration, and the number of iterations is known only at run "
          "time: declare the output's shape (Kiln compiles it and checks the count when the "
          "model runs), or give the trip count at compile time"));
    }
    KILN_RETURN_IF_ERROR(
        loop.AddAccumulator(absl::StrCat("scan", k), rows[k], value, loop.iteration(), what));
  }

  // Before the first iteration: cond, and 0 < M.
  Expr init_cond = cond ? cond : ctx.Constant(ScalarTensor(DataType::kBool, 1));
  if (trip_count) {
    KILN_ASSIGN_OR_RETURN(Expr any, ctx.Call("less", {loop.init(1), trip_count}));
    KILN_ASSIGN_OR_RETURN(init_cond, ctx.Call("logical_and", {init_cond, any}));
  }
  KILN_ASSIGN_OR_RETURN(Expr state, loop.Build(init_cond, next_cond));

  std::vector<Expr> outputs;
  for (size_t k = 0; k < num_state; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.TupleGetItem(state, static_cast<int>(2 + k)));
    outputs.push_back(v);
  }
  KILN_ASSIGN_OR_RETURN(Expr iterations, ctx.TupleGetItem(state, 1));
  for (size_t k = 0; k < num_scan; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr acc, ctx.TupleGetItem(state, static_cast<int>(2 + num_state + k)));
    KILN_ASSIGN_OR_RETURN(
        Expr ran_all, ctx.Call("equal", {iterations, ctx.Constant(ScalarTensor(DataType::kInt64,
                                                                               rows[k]))}));
    KILN_ASSIGN_OR_RETURN(
        Expr checked,
        GuardCondition(ctx, acc, ran_all,
                       absl::StrCat("scan output ", k, " has ", rows[k],
                                    " rows as compiled, but the loop ran another number of "
                                    "iterations")));
    outputs.push_back(checked);
  }
  return outputs;
}

absl::StatusOr<std::vector<Expr>> ConvertScanAsLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                    const ScanLoop& scan) {
  WhileLoopBuilder loop(ctx);
  std::vector<Expr> body_inputs;
  std::vector<std::string> names;
  for (size_t k = 0; k < scan.state.size(); ++k) {
    std::string name = scan.body->input_size() > static_cast<int>(k) ? scan.body->input(k).name()
                                                                      : absl::StrCat("v", k);
    names.push_back(absl::StrCat("state value ", k, " ('", name, "')"));
    KILN_ASSIGN_OR_RETURN(Var param, loop.AddState(name, scan.state[k], names.back()));
    body_inputs.push_back(param);
  }
  // Each iteration reads one slice of every scan input (read from outside: an invariant).
  for (size_t k = 0; k < scan.inputs.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr at, StepIndex(ctx, loop.iteration(), scan.steps,
                                             scan.input_directions[k] != 0));
    KILN_ASSIGN_OR_RETURN(Expr slice, ctx.Call("take", {scan.inputs[k], at},
                                               MakeAttrs({{"axis", scan.input_axes[k]}})));
    body_inputs.push_back(slice);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> out, run(*scan.body, body_inputs));
  const size_t num_state = scan.state.size();
  for (size_t k = 0; k < num_state; ++k) {
    KILN_RETURN_IF_ERROR(loop.SetNext(2 + k, out[k], names[k]));
  }
  const size_t num_scan = out.size() - num_state;
  for (size_t k = 0; k < num_scan; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr at, StepIndex(ctx, loop.iteration(), scan.steps,
                                             scan.output_directions[k] != 0));
    KILN_RETURN_IF_ERROR(loop.AddAccumulator(absl::StrCat("scan", k), scan.steps,
                                             out[num_state + k], at,
                                             absl::StrCat("scan output ", k)));
  }
  KILN_ASSIGN_OR_RETURN(
      Expr next_cond, loop.NextBelow(ctx.Constant(ScalarTensor(DataType::kInt64, scan.steps))));
  KILN_ASSIGN_OR_RETURN(Expr state,
                        loop.Build(ctx.Constant(ScalarTensor(DataType::kBool, 1)), next_cond));
  std::vector<Expr> outputs;
  for (size_t k = 0; k < num_state + num_scan; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.TupleGetItem(state, static_cast<int>(2 + k)));
    const int64_t rank = static_cast<int64_t>(v->checked_type.as<TensorTypeNode>()->shape.size());
    int64_t axis = k >= num_state ? scan.output_axes[k - num_state] : 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) {
      return ctx.Error(absl::StrCat("scan output ", k - num_state, " has axis ",
                                    scan.output_axes[k - num_state], ", outside [", -rank, ", ",
                                    rank, ")"));
    }
    if (axis != 0) {
      // The rows are stacked on axis 0; the scan output axis a moves them: out dim a is acc dim
      // 0, out dims before a are acc dims 1..a.
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d < axis ? d + 1 : d == axis ? 0 : d);
      KILN_ASSIGN_OR_RETURN(v, ctx.Call("transpose", {v}, MakeAttrs({{"axes", IntArray(axes)}})));
    }
    outputs.push_back(v);
  }
  return outputs;
}

}  // namespace kiln::onnx_frontend
