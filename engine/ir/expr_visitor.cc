// The iterative, memoizing expression visitor.
#include "engine/ir/expr_visitor.h"

#include <vector>

namespace kiln {

void ForEachChild(const ExprNode* expr, const std::function<void(const Expr&)>& fn) {
  switch (expr->kind()) {
    case ObjectKind::kCall: {
      const auto* call = static_cast<const CallNode*>(expr);
      fn(call->op);
      for (const Expr& arg : call->args) fn(arg);
      break;
    }
    case ObjectKind::kTuple:
      for (const Expr& field : static_cast<const TupleNode*>(expr)->elements) fn(field);
      break;
    case ObjectKind::kTupleGetItem:
      fn(static_cast<const TupleGetItemNode*>(expr)->tuple);
      break;
    case ObjectKind::kLet: {
      const auto* let = static_cast<const LetNode*>(expr);
      fn(let->var);
      fn(let->value);
      fn(let->body);
      break;
    }
    case ObjectKind::kIf: {
      const auto* node = static_cast<const IfNode*>(expr);
      fn(node->cond);
      fn(node->true_branch);
      fn(node->false_branch);
      break;
    }
    case ObjectKind::kFunction: {
      const auto* func = static_cast<const FunctionNode*>(expr);
      for (const Var& param : func->params) fn(param);
      fn(func->body);
      break;
    }
    default:
      break;
  }
}

void ExprVisitor::VisitExpr(const Expr& expr) {
  if (!expr || visited_.count(expr.get())) return;
  if (!IsIterativeKind(expr->kind())) {
    visited_.insert(expr.get());
    VisitExpr_(expr);
    return;
  }
  struct Frame {
    const ExprNode* node;
    bool expanded;
  };
  std::vector<Frame> stack{{expr.get(), false}};
  std::vector<const ExprNode*> children;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (visited_.count(top.node)) {
      stack.pop_back();
      continue;
    }
    if (!top.expanded) {
      top.expanded = true;
      children.clear();
      ForEachChild(top.node, [&](const Expr& child) {
        if (child && IsIterativeKind(child->kind()) && !visited_.count(child.get())) {
          children.push_back(child.get());
        }
      });
      // Reverse, so the first child is visited first.
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        stack.push_back({*it, false});
      }
      continue;
    }
    const ExprNode* node = top.node;
    stack.pop_back();
    visited_.insert(node);
    VisitExpr_(Expr(node));
  }
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
