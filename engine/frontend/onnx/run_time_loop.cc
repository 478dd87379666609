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

}  // namespace

absl::StatusOr<std::vector<Expr>> ConvertRunTimeLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                     const onnx::GraphProto& body) {
  const Span& span = ctx.span();
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

  // The state: (condition, iteration, loop-carried values..., scan accumulators...).
  const Type bool_scalar = MakeTensorType({}, DataType::kBool);
  const Type index_scalar = MakeTensorType({}, DataType::kInt64);
  std::vector<Var> params = {Param("cond", bool_scalar, span), Param("iteration", index_scalar, span)};
  std::vector<Expr> init(2);
  std::vector<Expr> body_inputs = {params[1], ctx.Constant(ScalarTensor(DataType::kBool, 1))};
  for (size_t k = 0; k < num_state; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(2 + k));
    std::string name = body.input_size() > static_cast<int>(2 + k) ? body.input(2 + k).name()
                                                                     : absl::StrCat("v", k);
    KILN_RETURN_IF_ERROR(
        StaticShape(ctx, v->checked_type, absl::StrCat("loop-carried value ", k, " ('", name, "')"))
            .status());
    params.push_back(Param(name, v->checked_type, span));
    init.push_back(v);
    body_inputs.push_back(params.back());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> out, run(body, body_inputs));
  KILN_ASSIGN_OR_RETURN(Expr cond_out, Scalar(ctx, out[0], DataType::kBool, "the body's condition"));
  Expr one = ctx.Constant(ScalarTensor(DataType::kInt64, 1));
  KILN_ASSIGN_OR_RETURN(Expr next_iteration, ctx.Call("add", {params[1], one}));
  Expr next_cond = cond_out;
  if (trip_count) {
    KILN_ASSIGN_OR_RETURN(Expr more, ctx.Call("less", {next_iteration, trip_count}));
    KILN_ASSIGN_OR_RETURN(next_cond, ctx.Call("logical_and", {cond_out, more}));
  }
  std::vector<Expr> next = {next_cond, next_iteration};
  for (size_t k = 0; k < num_state; ++k) {
    if (!StructuralEqual(out[1 + k]->checked_type, init[2 + k]->checked_type)) {
      return ctx.Error(absl::StrCat("loop-carried value ", k, " ('", params[2 + k]->name_hint,
                                    "') is ", TypeToString(init[2 + k]->checked_type),
                                    " on entry and ", TypeToString(out[1 + k]->checked_type),
                                    " after an iteration; a loop known only at run time keeps "
                                    "each value's type"));
    }
    next.push_back(out[1 + k]);
  }

  // Scan outputs: accumulators of the declared number of rows.
  std::optional<int64_t> known_trips;
  if (trip_count) {
    if (const auto* constant = trip_count.as<ConstantNode>()) {
      if (std::optional<double> value = ScalarValue(constant->data)) {
        known_trips = static_cast<int64_t>(*value);
      }
    }
  }
  std::vector<int64_t> rows(num_scan);
  for (size_t k = 0; k < num_scan; ++k) {
    const Expr& value = out[1 + num_state + k];
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> row_shape,
                          StaticShape(ctx, value->checked_type, absl::StrCat("scan output ", k)));
    std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(num_state + k);
    if (declared) {
      std::vector<int64_t> expected = {(*declared)[0]};
      expected.insert(expected.end(), row_shape.begin(), row_shape.end());
      if (declared->empty() || *declared != expected) {
        return ctx.Error(absl::StrCat("scan output ", k, " is declared ", DimsString(*declared),
                                      " but its rows are ", DimsString(row_shape)));
      }
      rows[k] = (*declared)[0];
    } else if (known_trips) {
      rows[k] = *known_trips;
    } else {
      return ctx.Error(absl::StrCat(
          "scan output ", k, " has one row per iteration, and the number of iterations is known "
          "only at run time: declare the output's shape (Kiln compiles it and checks the count "
          "when the model runs), or give the trip count at compile time"));
    }
    const auto* row_type = value->checked_type.as<TensorTypeNode>();
    absl::StatusOr<int64_t> row_elements = NumElements(row_type->shape);
    const int64_t max_elements = ctx.options().max_tensor_elements;
    if (rows[k] < 0 || !row_elements.ok() ||
        (*row_elements > 0 && rows[k] > max_elements / *row_elements)) {
      return ctx.Error(absl::StrCat("scan output ", k, " of ", rows[k], " rows of ",
                                    DimsString(row_shape), " is too large"));
    }
    KILN_RETURN_IF_ERROR(
        ctx.ChargeBytes(rows[k] * (8 + *row_elements * DataTypeBytes(row_type->dtype)),
                        absl::StrCat("scan output ", k)));
    std::vector<int64_t> acc_shape = {rows[k]};
    acc_shape.insert(acc_shape.end(), row_shape.begin(), row_shape.end());
    std::vector<Dim> acc_dims;
    for (int64_t d : acc_shape) acc_dims.push_back(Dim::Static(d));
    Var acc = Param(absl::StrCat("scan", k), MakeTensorType(acc_dims, row_type->dtype), span);
    params.push_back(acc);
    KILN_ASSIGN_OR_RETURN(
        Expr zeros, ctx.Call("broadcast_to", {ctx.Constant(ScalarTensor(row_type->dtype, 0))},
                             MakeAttrs({{"shape", ShapeValue{acc_dims}}})));
    init.push_back(zeros);
    // Row r of the accumulator takes the value in iteration r.
    std::vector<int64_t> positions(rows[k]);
    for (int64_t r = 0; r < rows[k]; ++r) positions[r] = r;
    std::vector<int64_t> column(acc_shape.size(), 1);
    column[0] = rows[k];
    Expr row_index = ctx.Constant(Int64Tensor(column, positions));
    KILN_ASSIGN_OR_RETURN(Expr here, ctx.Call("equal", {row_index, params[1]}));
    KILN_ASSIGN_OR_RETURN(Expr row, ctx.Call("expand_dims", {value},
                                             MakeAttrs({{"axis", int64_t{0}},
                                                        {"num_newaxis", int64_t{1}}})));
    KILN_ASSIGN_OR_RETURN(Expr written, ctx.Call("where", {here, row, acc}));
    next.push_back(written);
  }

  // Before the first iteration: cond, and 0 < M.
  Expr zero = ctx.Constant(ScalarTensor(DataType::kInt64, 0));
  init[0] = cond ? cond : ctx.Constant(ScalarTensor(DataType::kBool, 1));
  if (trip_count) {
    KILN_ASSIGN_OR_RETURN(Expr any, ctx.Call("less", {zero, trip_count}));
    KILN_ASSIGN_OR_RETURN(init[0], ctx.Call("logical_and", {init[0], any}));
  }
  init[1] = zero;
  KILN_ASSIGN_OR_RETURN(Expr next_state, ctx.Tuple(next));
  std::vector<Expr> captured;
  KILN_ASSIGN_OR_RETURN(Function func, CloseOver(ctx, params, next_state, &captured));
  std::vector<Expr> args = {func};
  args.insert(args.end(), init.begin(), init.end());
  args.insert(args.end(), captured.begin(), captured.end());
  KILN_ASSIGN_OR_RETURN(Expr loop, ctx.Call("while_loop", std::move(args)));

  std::vector<Expr> outputs;
  for (size_t k = 0; k < num_state; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.TupleGetItem(loop, static_cast<int>(2 + k)));
    outputs.push_back(v);
  }
  KILN_ASSIGN_OR_RETURN(Expr iterations, ctx.TupleGetItem(loop, 1));
  for (size_t k = 0; k < num_scan; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr acc, ctx.TupleGetItem(loop, static_cast<int>(2 + num_state + k)));
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

}  // namespace kiln::onnx_frontend
