// The iterative, memoizing expression mutator and the post-order rewriter.
#include "engine/ir/expr_mutator.h"

#include "engine/ir/expr_walk.h"

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
  WalkPostOrder(
      expr.get(), ChildSet::kAll,
      [this](const WalkEdge& edge) {
        return IsIterativeKind(edge.child->kind()) && !memo_.count(edge.child) &&
               !KeepSubtree(edge.child);
      },
      [this](const ExprNode* node) { memo_.emplace(node, VisitExpr_(Expr(node))); });
  return memo_.at(expr.get());
}

Expr ExprMutator::VisitVar_(const VarNode* op) { return Expr(op); }
Expr ExprMutator::VisitGlobalVar_(const GlobalVarNode* op) { return Expr(op); }
Expr ExprMutator::VisitConstant_(const ConstantNode* op) { return Expr(op); }
Expr ExprMutator::VisitOp_(const OpNode* op) { return Expr(op); }

// Every kind rebuilds the same way; the per-kind methods exist so that
// subclasses can override one kind and fall back to this.
Expr ExprMutator::RebuildWithVisitedChildren(const ExprNode* op) {
  return RebuildWithChildren(Expr(op), ChildSet::kAll,
                             [this](const Expr& child) { return VisitExpr(child); });
}

Expr ExprMutator::VisitCall_(const CallNode* op) { return RebuildWithVisitedChildren(op); }
Expr ExprMutator::VisitTuple_(const TupleNode* op) { return RebuildWithVisitedChildren(op); }
Expr ExprMutator::VisitTupleGetItem_(const TupleGetItemNode* op) {
  return RebuildWithVisitedChildren(op);
}
Expr ExprMutator::VisitLet_(const LetNode* op) { return RebuildWithVisitedChildren(op); }
Expr ExprMutator::VisitIf_(const IfNode* op) { return RebuildWithVisitedChildren(op); }
Expr ExprMutator::VisitFunction_(const FunctionNode* op) { return RebuildWithVisitedChildren(op); }

absl::StatusOr<Expr> PostOrderRewriter::Rewrite(const Expr& expr) {
  Expr result = VisitExpr(expr);
  if (!error_.ok()) return error_;
  return result;
}

Expr PostOrderRewriter::VisitExpr_(const Expr& pre) {
  // After an error the walk finishes without rewriting: nothing it builds is returned.
  if (!error_.ok()) return pre;
  Expr post = ExprMutator::VisitExpr_(pre);
  Result result = Dispatch_(pre, post);
  if (result.ok()) return *std::move(result);
  error_ = result.status();
  return pre;
}

PostOrderRewriter::Result PostOrderRewriter::Dispatch_(const Expr& pre, const Expr& post) {
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
