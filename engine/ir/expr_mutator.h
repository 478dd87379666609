// ExprMutator: rebuilds an expression bottom-up, memoized per node, keeping
// every unchanged subtree (the result is `same_as` the input when nothing
// changed) and every node's span, checked type and virtual device.
// Call, Tuple, TupleGetItem and Let are walked with an explicit stack, as in
// ExprVisitor, so chains of any length cost no stack depth.
//
// PostOrderRewriter is the seeds' mixed-mode mutator: override
// Rewrite_(pre, post) where `pre` is the original node and `post` the node
// rebuilt over already-rewritten children. A Rewrite_ that returns an error
// stops the rewrite: Rewrite(expr) returns that first error.
#pragma once

#include <unordered_map>

#include "absl/status/statusor.h"

#include "engine/ir/expr_functor.h"

namespace kiln {

class ExprMutator : public ExprFunctor<Expr(const Expr&)> {
 public:
  // The rewritten `expr` (memoized). Null maps to null.
  Expr VisitExpr(const Expr& expr) override;

 protected:
  // Called once per distinct node, after its iteratively walked children were
  // rewritten. The default dispatches to the Visit*_ methods.
  virtual Expr VisitExpr_(const Expr& expr) { return Dispatch(expr); }

  // Subtrees for which this returns true are kept as they are, unvisited
  // (e.g. type inference skips nodes that are already typed).
  virtual bool KeepSubtree(const ExprNode* /*expr*/) const { return false; }

  Expr VisitVar_(const VarNode* op) override;
  Expr VisitGlobalVar_(const GlobalVarNode* op) override;
  Expr VisitConstant_(const ConstantNode* op) override;
  Expr VisitOp_(const OpNode* op) override;
  Expr VisitCall_(const CallNode* op) override;
  Expr VisitTuple_(const TupleNode* op) override;
  Expr VisitTupleGetItem_(const TupleGetItemNode* op) override;
  Expr VisitLet_(const LetNode* op) override;
  Expr VisitIf_(const IfNode* op) override;
  Expr VisitFunction_(const FunctionNode* op) override;

  // `op` over its children rewritten by VisitExpr (`op` itself when none changed).
  Expr RebuildWithVisitedChildren(const ExprNode* op);

  std::unordered_map<const ExprNode*, Expr> memo_;
};

class PostOrderRewriter : public ExprMutator {
 public:
  // The rewritten `expr`, or the first error a Rewrite_ returned (after which
  // no further Rewrite_ is called).
  absl::StatusOr<Expr> Rewrite(const Expr& expr);

 protected:
  using Result = absl::StatusOr<Expr>;
  virtual Result Rewrite_(const CallNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const TupleNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const TupleGetItemNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const LetNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const IfNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const FunctionNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const VarNode* /*pre*/, const Expr& post) { return post; }
  virtual Result Rewrite_(const ConstantNode* /*pre*/, const Expr& post) { return post; }

 private:
  Expr VisitExpr_(const Expr& expr) final;
  Result Dispatch_(const Expr& pre, const Expr& post);

  absl::Status error_;
};

}  // namespace kiln
