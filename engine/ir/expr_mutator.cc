// The iterative, memoizing expression mutator and the post-order rewriter.
#include "engine/ir/expr_mutator.h"

#include <vector>

namespace kiln {

Expr ExprMutator::VisitExpr(const Expr& expr) {
  if (!expr) return expr;
  if (auto it = memo_.find(expr.get()); it != memo_.end()) return it->second;
  if (KeepSubtree(expr.get())) return expr;
  if (!IsIterativeKind(expr->kind())) {
    Expr result = VisitExpr_(expr);
    memo_.emplace(expr.get(), result);
    return result;
  }
  struct Frame {
    const ExprNode* node;
    bool expanded;
  };
  std::vector<Frame> stack{{expr.get(), false}};
  std::vector<const ExprNode*> children;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (memo_.count(top.node)) {
      stack.pop_back();
      continue;
    }
    if (!top.expanded) {
      top.expanded = true;
      children.clear();
      ForEachChild(top.node, [&](const Expr& child) {
        if (child && IsIterativeKind(child->kind()) && !memo_.count(child.get()) &&
            !KeepSubtree(child.get())) {
          children.push_back(child.get());
        }
      });
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        stack.push_back({*it, false});
      }
      continue;
    }
    const ExprNode* node = top.node;
    stack.pop_back();
    Expr result = VisitExpr_(Expr(node));
    memo_.emplace(node, std::move(result));
  }
  return memo_.at(expr.get());
}

Expr ExprMutator::VisitVar_(const VarNode* op) { return Expr(op); }
Expr ExprMutator::VisitGlobalVar_(const GlobalVarNode* op) { return Expr(op); }
Expr ExprMutator::VisitConstant_(const ConstantNode* op) { return Expr(op); }
Expr ExprMutator::VisitOp_(const OpNode* op) { return Expr(op); }

namespace {
// Rewrites each element; returns true when any changed.
template <typename T>
bool MutateAll(ExprMutator* self, const std::vector<T>& in, std::vector<T>* out,
               Expr (ExprMutator::*visit)(const Expr&)) {
  bool changed = false;
  out->reserve(in.size());
  for (const T& item : in) {
    Expr rewritten = (self->*visit)(item);
    changed |= !rewritten.same_as(item);
    out->push_back(Downcast<typename T::element_type>(rewritten));
  }
  return changed;
}
}  // namespace

Expr ExprMutator::VisitCall_(const CallNode* op) {
  Expr callee = VisitExpr(op->op);
  std::vector<Expr> args;
  bool changed = MutateAll(this, op->args, &args, &ExprMutator::VisitExpr);
  if (!changed && callee.same_as(op->op)) return Expr(op);
  return MakeRef<CallNode>(std::move(callee), std::move(args), op->attrs, op->fields());
}

Expr ExprMutator::VisitTuple_(const TupleNode* op) {
  std::vector<Expr> fields;
  if (!MutateAll(this, op->elements, &fields, &ExprMutator::VisitExpr)) return Expr(op);
  return MakeRef<TupleNode>(std::move(fields), op->fields());
}

Expr ExprMutator::VisitTupleGetItem_(const TupleGetItemNode* op) {
  Expr tuple = VisitExpr(op->tuple);
  if (tuple.same_as(op->tuple)) return Expr(op);
  return MakeRef<TupleGetItemNode>(std::move(tuple), op->index, op->fields());
}

Expr ExprMutator::VisitLet_(const LetNode* op) {
  Var var = Downcast<VarNode>(VisitExpr(op->var));
  Expr value = VisitExpr(op->value);
  Expr body = VisitExpr(op->body);
  if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) {
    return Expr(op);
  }
  return MakeRef<LetNode>(std::move(var), std::move(value), std::move(body), op->fields());
}

Expr ExprMutator::VisitIf_(const IfNode* op) {
  Expr cond = VisitExpr(op->cond);
  Expr then_branch = VisitExpr(op->true_branch);
  Expr else_branch = VisitExpr(op->false_branch);
  if (cond.same_as(op->cond) && then_branch.same_as(op->true_branch) &&
      else_branch.same_as(op->false_branch)) {
    return Expr(op);
  }
  return MakeRef<IfNode>(std::move(cond), std::move(then_branch), std::move(else_branch),
                         op->fields());
}

Expr ExprMutator::VisitFunction_(const FunctionNode* op) {
  std::vector<Var> params;
  bool changed = MutateAll(this, op->params, &params, &ExprMutator::VisitExpr);
  Expr body = VisitExpr(op->body);
  if (!changed && body.same_as(op->body)) return Expr(op);
  return MakeRef<FunctionNode>(std::move(params), std::move(body), op->ret_type, op->attrs,
                               op->fields());
}

Expr PostOrderRewriter::VisitExpr_(const Expr& pre) {
  Expr post = ExprMutator::VisitExpr_(pre);
  switch (pre->kind()) {
    case ObjectKind::kCall: return Rewrite_(pre.as<CallNode>(), post);
    case ObjectKind::kTuple: return Rewrite_(pre.as<TupleNode>(), post);
    case ObjectKind::kTupleGetItem: return Rewrite_(pre.as<TupleGetItemNode>(), post);
    case ObjectKind::kLet: return Rewrite_(pre.as<LetNode>(), post);
    case ObjectKind::kIf: return Rewrite_(pre.as<IfNode>(), post);
    case ObjectKind::kFunction: return Rewrite_(pre.as<FunctionNode>(), post);
    case ObjectKind::kVar: return Rewrite_(pre.as<VarNode>(), post);
    case ObjectKind::kConstant: return Rewrite_(pre.as<ConstantNode>(), post);
    default: return post;
  }
}

}  // namespace kiln
