// See while_loop_builder.h.
#include "engine/frontend/onnx/while_loop_builder.h"

#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/ir/expr_walk.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

Var Param(const std::string& name, const Type& type, const Span& span) {
  return MakeRef<VarNode>(name, type, ExprFields{span, type, nullptr});
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
      status = ctx.Error(
          absl::StrCat("the body reads a value of type ", TypeToString(child->checked_type),
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

absl::StatusOr<std::vector<int64_t>> StaticLoopShape(ConvertContext& ctx, const Type& type,
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

absl::StatusOr<Expr> StepIndex(ConvertContext& ctx, const Expr& iteration, int64_t steps,
                               bool reverse) {
  if (!reverse) return iteration;
  return ctx.Call("subtract", {ctx.Constant(ScalarTensor(DataType::kInt64, steps - 1)), iteration});
}

WhileLoopBuilder::WhileLoopBuilder(ConvertContext& ctx) : ctx_(ctx) {
  params_ = {Param("cond", MakeTensorType({}, DataType::kBool), ctx.span()),
             Param("iteration", MakeTensorType({}, DataType::kInt64), ctx.span())};
  init_ = {nullptr, ctx.Constant(ScalarTensor(DataType::kInt64, 0))};
}

// A loop-carried tensor of static shape: the body's parameter for it.
absl::StatusOr<Var> WhileLoopBuilder::AddState(const std::string& name, const Expr& init,
                                               const std::string& what) {
  KILN_RETURN_IF_ERROR(StaticLoopShape(ctx_, init->checked_type, what).status());
  params_.push_back(Param(name, init->checked_type, ctx_.span()));
  init_.push_back(init);
  return params_.back();
}

// Next values, in state order after the condition and the iteration.
absl::Status WhileLoopBuilder::SetNext(size_t k, const Expr& next, const std::string& what) {
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
absl::Status WhileLoopBuilder::AddAccumulator(const std::string& name, int64_t rows,
                                              const Expr& value, const Expr& row,
                                              const std::string& what) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> row_shape,
                        StaticLoopShape(ctx_, value->checked_type, what));
  const auto* row_type = value->checked_type.as<TensorTypeNode>();
  absl::StatusOr<int64_t> row_elements = NumElements(row_type->shape);
  const int64_t max_elements = ctx_.options().max_tensor_elements;
  if (rows < 0 || !row_elements.ok() ||
      (*row_elements > 0 && rows > max_elements / *row_elements)) {
    return ctx_.Error(
        absl::StrCat(what, " of ", rows, " rows of ", DimsString(row_shape), " is too large"));
  }
  KILN_RETURN_IF_ERROR(
      ctx_.ChargeBytes(rows * (8 + *row_elements * DataTypeBytes(row_type->dtype)), what));
  std::vector<Dim> acc_dims = {Dim::Static(rows)};
  for (int64_t d : row_shape) acc_dims.push_back(Dim::Static(d));
  KILN_ASSIGN_OR_RETURN(Expr zeros,
                        ctx_.Call("broadcast_to", {ctx_.Constant(ScalarTensor(row_type->dtype, 0))},
                                  MakeAttrs({{"shape", ShapeValue{acc_dims}}})));
  KILN_ASSIGN_OR_RETURN(Var acc, AddState(name, zeros, what));
  KILN_ASSIGN_OR_RETURN(Expr written, ctx_.Call("write_row", {acc, value, row}));
  return SetNext(num_states() - 1, written, what);
}

// while_loop(body, init..., invariants...), running while `init_cond`, then `next_cond`,
// hold; the iteration counts up from 0.
absl::StatusOr<Expr> WhileLoopBuilder::Build(const Expr& init_cond, const Expr& next_cond) {
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
absl::StatusOr<Expr> WhileLoopBuilder::NextBelow(const Expr& limit) {
  KILN_ASSIGN_OR_RETURN(Expr next_iteration, NextIteration());
  return ctx_.Call("less", {next_iteration, limit});
}

absl::StatusOr<Expr> WhileLoopBuilder::NextIteration() {
  if (!next_iteration_) {
    KILN_ASSIGN_OR_RETURN(
        next_iteration_,
        ctx_.Call("add", {params_[1], ctx_.Constant(ScalarTensor(DataType::kInt64, 1))}));
  }
  return next_iteration_;
}

}  // namespace kiln::onnx_frontend
