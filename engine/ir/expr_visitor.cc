// The iterative, memoizing expression visitor.
#include "engine/ir/expr_visitor.h"

#include "engine/ir/expr_walk.h"

namespace kiln {

void ExprVisitor::VisitExpr(const Expr& expr) {
  if (!expr || visited_.count(expr.get())) return;
  if (!IsIterativeKind(expr->kind())) {
    visited_.insert(expr.get());
    VisitExpr_(expr);
    return;
  }
  // Iterative kinds are walked here; the rest are reached from VisitExpr_
  // through the Visit*_ methods, recursing once per level of nesting.
  WalkPostOrder(
      expr.get(), ChildSet::kAll,
      [this](const WalkEdge& edge) {
        return IsIterativeKind(edge.child->kind()) && !visited_.count(edge.child);
      },
      [this](const ExprNode* node) {
        visited_.insert(node);
        VisitExpr_(Expr(node));
      });
}

void ExprVisitor::VisitVar_(const VarNode*) {}
void ExprVisitor::VisitGlobalVar_(const GlobalVarNode*) {}
void ExprVisitor::VisitConstant_(const ConstantNode*) {}
void ExprVisitor::VisitOp_(const OpNode*) {}

void ExprVisitor::VisitCall_(const CallNode* op) {
  VisitExpr(op->op);
  for (const Expr& arg : op->args) VisitExpr(arg);
}

void ExprVisitor::VisitTuple_(const TupleNode* op) {
  for (const Expr& field : op->elements) VisitExpr(field);
}

void ExprVisitor::VisitTupleGetItem_(const TupleGetItemNode* op) { VisitExpr(op->tuple); }

void ExprVisitor::VisitLet_(const LetNode* op) {
  VisitExpr(op->var);
  VisitExpr(op->value);
  VisitExpr(op->body);
}

void ExprVisitor::VisitIf_(const IfNode* op) {
  VisitExpr(op->cond);
  VisitExpr(op->true_branch);
  VisitExpr(op->false_branch);
}

void ExprVisitor::VisitFunction_(const FunctionNode* op) {
  for (const Var& param : op->params) VisitExpr(param);
  VisitExpr(op->body);
}

namespace {
class PostOrderCallback : public ExprVisitor {
 public:
  explicit PostOrderCallback(const std::function<void(const Expr&)>& fn) : fn_(fn) {}

 protected:
  void VisitExpr_(const Expr& expr) override {
    ExprVisitor::VisitExpr_(expr);
    fn_(expr);
  }

 private:
  const std::function<void(const Expr&)>& fn_;
};
}  // namespace

void PostOrderVisit(const Expr& expr, const std::function<void(const Expr&)>& fn) {
  PostOrderCallback visitor(fn);
  visitor.VisitExpr(expr);
}

}  // namespace kiln
