// Rebuilding a node over new children.
#include "engine/ir/expr_walk.h"

#include <utility>

namespace kiln {

Expr RebuildWithChildren(const Expr& expr, ChildSet set,
                         const std::function<Expr(const Expr&)>& map) {
  bool changed = false;
  auto child = [&](const Expr& old, ChildRole role) -> Expr {
    if (!old || !InChildSet(set, role)) return old;
    Expr result = map(old);
    changed |= !result.same_as(old);
    return result;
  };
  auto var = [&](const Var& old, ChildRole role) {
    return Downcast<VarNode>(child(old, role));
  };
  switch (expr->kind()) {
    case ObjectKind::kCall: {
      const auto* call = expr.as<CallNode>();
      Expr callee = child(call->op, ChildRole::kCallee);
      std::vector<Expr> args;
      args.reserve(call->args.size());
      for (const Expr& arg : call->args) args.push_back(child(arg, ChildRole::kArgument));
      if (!changed) return expr;
      return MakeRef<CallNode>(std::move(callee), std::move(args), call->attrs, expr->fields());
    }
    case ObjectKind::kTuple: {
      const auto* tuple = expr.as<TupleNode>();
      std::vector<Expr> elements;
      elements.reserve(tuple->elements.size());
      for (const Expr& e : tuple->elements) elements.push_back(child(e, ChildRole::kElement));
      if (!changed) return expr;
      return MakeRef<TupleNode>(std::move(elements), expr->fields());
    }
    case ObjectKind::kTupleGetItem: {
      const auto* item = expr.as<TupleGetItemNode>();
      Expr tuple = child(item->tuple, ChildRole::kTuple);
      if (!changed) return expr;
      return MakeRef<TupleGetItemNode>(std::move(tuple), item->index, expr->fields());
    }
    case ObjectKind::kLet: {
      const auto* let = expr.as<LetNode>();
      Var bound = var(let->var, ChildRole::kLetVar);
      Expr value = child(let->value, ChildRole::kLetValue);
      Expr body = child(let->body, ChildRole::kLetBody);
      if (!changed) return expr;
      return MakeRef<LetNode>(std::move(bound), std::move(value), std::move(body),
                              expr->fields());
    }
    case ObjectKind::kIf: {
      const auto* branch = expr.as<IfNode>();
      Expr cond = child(branch->cond, ChildRole::kCondition);
      Expr then_branch = child(branch->true_branch, ChildRole::kBranch);
      Expr else_branch = child(branch->false_branch, ChildRole::kBranch);
      if (!changed) return expr;
      return MakeRef<IfNode>(std::move(cond), std::move(then_branch), std::move(else_branch),
                             expr->fields());
    }
    case ObjectKind::kFunction: {
      const auto* func = expr.as<FunctionNode>();
      std::vector<Var> params;
      params.reserve(func->params.size());
      for (const Var& param : func->params) params.push_back(var(param, ChildRole::kParam));
      Expr body = child(func->body, ChildRole::kBody);
      if (!changed) return expr;
      return MakeRef<FunctionNode>(std::move(params), std::move(body), func->ret_type,
                                   func->attrs, expr->fields());
    }
    default:
      return expr;
  }
}

}  // namespace kiln
