// ONNX Loop as a graph while_loop (engine/op/while_loop.cc), for loops the importer cannot
// unroll: a trip count or a condition known only at run time, or more iterations than it
// unrolls. The loop's state is (condition, iteration, the loop-carried values..., one
// accumulator per scan output); the body is the ONNX body closed over what it reads from
// outside (those values become invariant parameters, computed once before the loop).
//
// Scan outputs: Kiln compiles static shapes, so a scan output has the number of rows the model
// declares for it (or the trip count, when that is known at import). Each iteration writes its
// row (where(row == iteration, value, accumulator), an elementwise kernel over the
// accumulator); after the loop an assert checks that the loop ran exactly that many
// iterations, and the run fails with an error naming the node otherwise.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/control_flow.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/ir/expr_walk.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// A one-element tensor of `dtype` as a scalar.
absl::StatusOr<Expr> Scalar(ConvertContext& ctx, const Expr& value, DataType dtype,
                            const std::string& what) {
  const auto* type = value->checked_type.as<TensorTypeNode>();
  absl::StatusOr<int64_t> elements = type ? NumElements(type->shape) : int64_t{-1};
  if (type == nullptr || type->dtype != dtype || !elements.ok() || *elements != 1) {
    return ctx.Error(absl::StrCat(what, " must be a ", DataTypeName(dtype),
                                  " tensor of one element, got ", TypeToString(value->checked_type)));
  }
  if (type->shape.empty()) return value;
  return ctx.Call("reshape", {value}, MakeAttrs({{"newshape", IntArray(std::vector<int64_t>{})}}));
}

Var Param(const std::string& name, const Type& type, const Span& span) {
  return MakeRef<VarNode>(name, type, ExprFields{span, type, nullptr});
}

absl::StatusOr<std::vector<int64_t>> StaticShape(ConvertContext& ctx, const Type& type,
                                                 const std::string& what) {
  const auto* tensor = type.as<TensorTypeNode>();
  std::vector<int64_t> dims;
  for (size_t d = 0; tensor != nullptr && d < tensor->shape.size(); ++d) {
    if (!tensor->shape[d].is_static()) tensor = nullptr;
    if (tensor != nullptr) dims.push_back(tensor->shape[d].value);
  }
  if (tensor == nullptr) {
    return ctx.Error(absl::StrCat(what, " is ", TypeToString(type),
                                  "; a loop whose trip count or condition is known only at run "
                                  "time carries tensors of static shape"));
  }
  return dims;
}

// `result` (an expression over `params` and values from outside) as a closed function: every
// outside value it reads that is not a constant becomes one more parameter, and `captured`
// lists those values in order. What does not depend on `params` is left outside, so it is
// computed once, not every iteration.
absl::StatusOr<Function> CloseOver(ConvertContext& ctx, std::vector<Var> params, const Expr& result,
                                   std::vector<Expr>* captured) {
  std::unordered_set<const ExprNode*> depends;
  for (const Var& param : params) depends.insert(param.get());
  std::vector<const ExprNode*> order;
  std::unordered_set<const ExprNode*> seen;
  // Nested functions are closed bodies of inner loops: they read nothing from here.
  WalkPostOrder(
      result.get(), ChildSet::kUses,
      [&](const WalkEdge& edge) {
        return edge.child->kind() != ObjectKind::kFunction && !depends.count(edge.child) &&
               seen.insert(edge.child).second;
      },
      [&](const ExprNode* node) {
        bool inside = depends.count(node) != 0;
        ForEachChild(node, ChildSet::kUses,
                     [&](const ExprNode* child) { inside = inside || depends.count(child); });
        if (inside) depends.insert(node);
        order.push_back(node);
      });
  std::unordered_map<const ExprNode*, Expr> rebuilt;
  for (const Var& param : params) rebuilt.emplace(param.get(), param);
  std::unordered_map<const ExprNode*, Var> invariant_of;
  absl::Status status;
  auto map = [&](const Expr& child) -> Expr {
    if (depends.count(child.get())) return rebuilt.at(child.get());
    switch (child->kind()) {
      case ObjectKind::kConstant:
      case ObjectKind::kOp:
      case ObjectKind::kFunction:
        return child;
      default:
        break;
    }
    auto it = invariant_of.find(child.get());
    if (it != invariant_of.end()) return it->second;
    if (child->checked_type.as<TensorTypeNode>() == nullptr && status.ok()) {
      status = ctx.Error(absl::StrCat("the body reads a value of type ",
                                      TypeToString(child->checked_type),
                                      " from outside; a loop known only at run time reads tensors"));
    }
    const auto* var = child.as<VarNode>();
    Var param = Param(var ? var->name_hint : absl::StrCat("outer", invariant_of.size()),
                      child->checked_type, child->span);
    invariant_of.emplace(child.get(), param);
    captured->push_back(child);
    params.push_back(param);
    return param;
  };
  for (const ExprNode* node : order) {
    if (depends.count(node) && !rebuilt.count(node)) {
      rebuilt.emplace(node, RebuildWithChildren(Expr(node), ChildSet::kUses, map));
    }
  }
  KILN_RETURN_IF_ERROR(status);
  if (!depends.count(result.get())) return ctx.Error("the loop's next state does not depend on it");
  Expr body = rebuilt.at(result.get());
  std::vector<Type> param_types;
  for (const Var& param : params) param_types.push_back(param->checked_type);
  Function func = MakeFunction(params, body, body->checked_type, nullptr, result->span);
  return Downcast<FunctionNode>(
      WithCheckedType(func, MakeFuncType(std::move(param_types), body->checked_type)));
}

// One while_loop being built: its state parameters (the condition and the iteration first),
// their initial values, and once the body has run, their next values.
class WhileLoopBuilder {
 public:
  explicit WhileLoopBuilder(ConvertContext& ctx) : ctx_(ctx) {
    params_ = {Param("cond", MakeTensorType({}, DataType::kBool), ctx.span()),
               Param("iteration", MakeTensorType({}, DataType::kInt64), ctx.span())};
    init_ = {nullptr, ctx.Constant(ScalarTensor(DataType::kInt64, 0))};
  }

  const Var& iteration() const { return params_[1]; }
  size_t num_states() const { return params_.size(); }
  const Expr& init(size_t k) const { return init_[k]; }

  // A loop-carried tensor of static shape: the body's parameter for it.
  absl::StatusOr<Var> AddState(const std::string& name, const Expr& init, const std::string& what) {
    KILN_RETURN_IF_ERROR(StaticShape(ctx_, init->checked_type, what).status());
    params_.push_back(Param(name, init->checked_type, ctx_.span()));
    init_.push_back(init);
    return params_.back();
  }

  // Next values, in state order after the condition and the iteration.
  absl::Status SetNext(size_t k, const Expr& next, const std::string& what) {
    if (!StructuralEqual(next->checked_type, init_[k]->checked_type)) {
      return ctx_.Error(absl::StrCat(what, " is ", TypeToString(init_[k]->checked_type),
                                     " on entry and ", TypeToString(next->checked_type),
                                     " after an iteration; a loop known only at run time keeps "
                                     "each value's type"));
    }
    if (next_.size() <= k) next_.resize(k + 1);
    next_[k] = next;
    return absl::OkStatus();
  }

  // A scan output of `rows` rows: an accumulator whose row `row` (an int64 scalar) takes
  // `value` each iteration.
  absl::Status AddAccumulator(const std::string& name, int64_t rows, const Expr& value,
                              const Expr& row, const std::string& what) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> row_shape, StaticShape(ctx_, value->checked_type, what));
    const auto* row_type = value->checked_type.as<TensorTypeNode>();
    absl::StatusOr<int64_t> row_elements = NumElements(row_type->shape);
    const int64_t max_elements = ctx_.options().max_tensor_elements;
    if (rows < 0 || !row_elements.ok() ||
        (*row_elements > 0 && rows > max_elements / *row_elements)) {
      return ctx_.Error(absl::StrCat(what, " of ", rows, " rows of ", DimsString(row_shape),
                                     " is too large"));
    }
    KILN_RETURN_IF_ERROR(
        ctx_.ChargeBytes(rows * (8 + *row_elements * DataTypeBytes(row_type->dtype)), what));
    std::vector<Dim> acc_dims = {Dim::Static(rows)};
    for (int64_t d : row_shape) acc_dims.push_back(Dim::Static(d));
    KILN_ASSIGN_OR_RETURN(
        Expr zeros, ctx_.Call("broadcast_to", {ctx_.Constant(ScalarTensor(row_type->dtype, 0))},
                              MakeAttrs({{"shape", ShapeValue{acc_dims}}})));
    KILN_ASSIGN_OR_RETURN(Var acc, AddState(name, zeros, what));
    std::vector<int64_t> positions(rows);
    for (int64_t r = 0; r < rows; ++r) positions[r] = r;
    std::vector<int64_t> column(acc_dims.size(), 1);
    column[0] = rows;
    KILN_ASSIGN_OR_RETURN(Expr here,
                          ctx_.Call("equal", {ctx_.Constant(Int64Tensor(column, positions)), row}));
    KILN_ASSIGN_OR_RETURN(Expr expanded, ctx_.Call("expand_dims", {value},
                                                   MakeAttrs({{"axis", int64_t{0}},
                                                              {"num_newaxis", int64_t{1}}})));
    KILN_ASSIGN_OR_RETURN(Expr written, ctx_.Call("where", {here, expanded, acc}));
    return SetNext(num_states() - 1, written, what);
  }

  // while_loop(body, init..., invariants...), running while `init_cond`, then `next_cond`,
  // hold; the iteration counts up from 0.
  absl::StatusOr<Expr> Build(const Expr& init_cond, const Expr& next_cond) {
    init_[0] = init_cond;
    KILN_ASSIGN_OR_RETURN(Expr next_iteration, NextIteration());
    KILN_RETURN_IF_ERROR(SetNext(0, next_cond, "the condition"));
    KILN_RETURN_IF_ERROR(SetNext(1, next_iteration, "the iteration"));
    if (next_.size() != params_.size()) return ctx_.Error("a loop state has no next value");
    KILN_ASSIGN_OR_RETURN(Expr next_state, ctx_.Tuple(next_));
    std::vector<Expr> captured;
    KILN_ASSIGN_OR_RETURN(Function func, CloseOver(ctx_, params_, next_state, &captured));
    std::vector<Expr> args = {func};
    args.insert(args.end(), init_.begin(), init_.end());
    args.insert(args.end(), captured.begin(), captured.end());
    return ctx_.Call("while_loop", std::move(args));
  }

  // i + 1 < limit, for the next condition.
  absl::StatusOr<Expr> NextBelow(const Expr& limit) {
    KILN_ASSIGN_OR_RETURN(Expr next_iteration, NextIteration());
    return ctx_.Call("less", {next_iteration, limit});
  }

 private:
  absl::StatusOr<Expr> NextIteration() {
    if (!next_iteration_) {
      KILN_ASSIGN_OR_RETURN(
          next_iteration_,
          ctx_.Call("add", {params_[1], ctx_.Constant(ScalarTensor(DataType::kInt64, 1))}));
    }
    return next_iteration_;
  }

  ConvertContext& ctx_;
  std::vector<Var> params_;
  std::vector<Expr> init_, next_;
  Expr next_iteration_;
};

// `steps - 1 - iteration` when `reverse`, else the iteration.
absl::StatusOr<Expr> StepIndex(ConvertContext& ctx, const Expr& iteration, int64_t steps,
                               bool reverse) {
  if (!reverse) return iteration;
  return ctx.Call("subtract", {ctx.Constant(ScalarTensor(DataType::kInt64, steps - 1)), iteration});
}

}  // namespace

absl::StatusOr<std::vector<Expr>> ConvertRunTimeLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                     const onnx::GraphProto& body) {
  Expr trip_count, cond;
  if (ctx.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr m, ctx.Input(0));
    KILN_ASSIGN_OR_RETURN(trip_count, Scalar(ctx, m, DataType::kInt64, "the trip count M"));
  }
  if (ctx.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(Expr c, ctx.Input(1));
    KILN_ASSIGN_OR_RETURN(cond, Scalar(ctx, c, DataType::kBool, "the condition"));
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
  KILN_ASSIGN_OR_RETURN(Expr cond_out, Scalar(ctx, out[0], DataType::kBool, "the body's condition"));
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
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> row_shape, StaticShape(ctx, value->checked_type, what));
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
