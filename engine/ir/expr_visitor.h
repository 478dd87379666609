// ExprVisitor: visits every distinct node of an expression DAG exactly once.
// It is the seeds' mixed-mode visitor: Call, Tuple, TupleGetItem and Let are
// walked in post-order with an explicit stack, so a 20,000-node chain costs no
// stack depth; Function and If recurse (bounded by nesting, not by length).
#pragma once

#include <unordered_set>

#include "engine/ir/expr_functor.h"

namespace kiln {

class ExprVisitor : public ExprFunctor<void(const Expr&)> {
 public:
  // Visits `expr` unless it was visited before. Null is ignored.
  void VisitExpr(const Expr& expr) override;

 protected:
  // Called once per distinct node; for iteratively walked kinds, after their
  // children were visited. The default dispatches to the Visit*_ methods.
  virtual void VisitExpr_(const Expr& expr) { Dispatch(expr); }

  void VisitVar_(const VarNode* op) override;
  void VisitGlobalVar_(const GlobalVarNode* op) override;
  void VisitConstant_(const ConstantNode* op) override;
  void VisitOp_(const OpNode* op) override;
  void VisitCall_(const CallNode* op) override;
  void VisitTuple_(const TupleNode* op) override;
  void VisitTupleGetItem_(const TupleGetItemNode* op) override;
  void VisitLet_(const LetNode* op) override;
  void VisitIf_(const IfNode* op) override;
  void VisitFunction_(const FunctionNode* op) override;

  std::unordered_set<const ExprNode*> visited_;
};

// Calls `fn` on every distinct node of `expr` in post-order.
void PostOrderVisit(const Expr& expr, const std::function<void(const Expr&)>& fn);

}  // namespace kiln
