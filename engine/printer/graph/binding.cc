// How a graph function body becomes statements (docs/graph-text-format.md "Body"): every
// non-atomic expression is bound once to a numbered temporary at its first use, operands
// first; a scope ends with its result. Dataflow chains are walked with an explicit stack and
// let-chains with a loop, so a 20,000-node chain costs no stack depth; only scopes nested in
// the IR (if-branches, nested functions, blocks) recurse.
#include <string>
#include <vector>

#include "engine/ir/expr_walk.h"
#include "engine/ir/virtual_device.h"
#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/graph/graph_frames.h"
#include "engine/support/check.h"

namespace kiln::printer::graph {

namespace {

GraphFunctionFrame* FunctionFrame(IRDocsifier& d) {
  GraphFunctionFrame* frame = d.GetFrame<GraphFunctionFrame>();
  KILN_CHECK(frame != nullptr) << "graph expression printed outside a function or fragment";
  return frame;
}

void Bind(IRDocsifier& d, GraphFunctionFrame* frame, const ExprNode* node) {
  if (node->kind() == ObjectKind::kIf) BindBeforeIf(d, static_cast<const IfNode*>(node));
  // Numbered before its value is built, so temporaries inside a bound if or function come
  // after it and the numbers increase in text order.
  auto temp = Id(std::to_string(frame->next_temp++), IdKind::kTemp);
  Expr expr(node);
  ExprDoc value = d.AsExprDoc(expr);
  frame->stmts->push_back(std::make_shared<AssignDocNode>(temp, std::move(value), nullptr));
  d.DefByDoc(expr, std::move(temp));
}

// Binds `root` and its unbound non-atomic operands in post-order. Operands are
// what must be named before a node can be written; scopes (branches, function
// and let bodies) are printed inside it.
void BindPostOrder(IRDocsifier& d, const ExprNode* root) {
  GraphFunctionFrame* frame = FunctionFrame(d);
  WalkPostOrder(
      root, ChildSet::kOperands,
      [&](const WalkEdge& edge) { return !IsAtomic(edge.child) && !d.IsDefined(edge.child); },
      [&](const ExprNode* node) { Bind(d, frame, node); });
}

void EmitLet(IRDocsifier& d, GraphFunctionFrame* frame, const Let& let) {
  ExprDoc value = Denote(d, let->value);
  std::shared_ptr<AssignDocNode> statement = VarBinding(d, let->var);
  statement->rhs = std::move(value);
  statement->is_let = true;
  statement->comment = SpanComment(d, let->span, "let_si");
  statement->source = let;
  frame->stmts->push_back(std::move(statement));
}

}  // namespace

void BindBeforeIf(IRDocsifier& d, const IfNode* branch) {
  const IfScopes& scopes = FunctionFrame(d)->if_scopes;
  for (const ExprNode* before : scopes.ComputedBefore(
           branch, [&](const ExprNode* n) { return IsAtomic(n) || d.IsDefined(n); })) {
    if (!d.IsDefined(before)) BindPostOrder(d, before);
  }
}

ExprDoc Denote(IRDocsifier& d, const Expr& expr) {
  if (!expr) return NoneLiteral();
  if (IsAtomic(expr.get())) return d.AsExprDoc(expr);
  if (const ExprDoc* doc = d.Lookup(expr.get())) return *doc;
  BindPostOrder(d, expr.get());
  return *d.Lookup(expr.get());
}

std::vector<StmtDoc> EmitScope(IRDocsifier& d, const Expr& result, bool continue_shared_let) {
  GraphFunctionFrame* frame = FunctionFrame(d);
  std::vector<StmtDoc> stmts;
  struct RestoreStmts {
    GraphFunctionFrame* frame;
    std::vector<StmtDoc>* saved;
    ~RestoreStmts() { frame->stmts = saved; }
  } restore{frame, frame->stmts};
  frame->stmts = &stmts;

  Expr current = result;
  bool first = true;
  while (current && current->kind() == ObjectKind::kLet && !d.IsDefined(current.get()) &&
         ((first && continue_shared_let) || frame->UseCount(current.get()) <= 1)) {
    Let let = Downcast<LetNode>(current);
    EmitLet(d, frame, let);
    current = let->body;
    first = false;
  }

  ExprDoc value;
  if (!current || IsAtomic(current.get()) || d.IsDefined(current.get()) ||
      frame->UseCount(current.get()) > 1) {
    value = Denote(d, current);
  } else {
    value = d.AsExprDoc(current);  // the result prints inline, with its own span comment
  }
  stmts.push_back(std::make_shared<ReturnDocNode>(std::move(value)));
  return stmts;
}

ExprDoc DefineVar(IRDocsifier& d, const VarNode* var) {
  if (const ExprDoc* doc = d.Lookup(var)) return *doc;
  return d.DefByName(Var(var), SanitizeName(var->name_hint), IdKind::kLocal);
}

std::shared_ptr<AssignDocNode> VarBinding(IRDocsifier& d, const Var& var) {
  ExprDoc annotation = var->type_annotation ? d.AsExprDoc(var->type_annotation) : nullptr;
  auto binding =
      std::make_shared<AssignDocNode>(DefineVar(d, var.get()), nullptr, std::move(annotation));
  if (!IsFullyUnconstrained(var->virtual_device)) {
    binding->lhs_attrs.emplace_back("virtual_device", d.AsExprDoc(var->virtual_device));
  }
  binding->lhs_comment = SpanComment(d, var->span);
  return binding;
}

}  // namespace kiln::printer::graph
