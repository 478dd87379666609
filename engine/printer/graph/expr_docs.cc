// Builders for graph expressions. Each writes one node given names for its operands (Denote);
// binding, scoping and order are binding.cc's business.
#include <string>
#include <vector>

#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

Doc BuildVar(const ObjectRef& node, IRDocsifier& d) {
  // A variable bound nowhere (a fragment's free variable) is named at its first use.
  return DefineVar(d, node.as<VarNode>());
}

Doc BuildGlobalVar(const ObjectRef& node, IRDocsifier& d) {
  if (const ExprDoc* doc = d.Lookup(node.get())) return *doc;
  // A reference to a function the module does not define (or printed outside a module).
  auto id = Id(SanitizeName(node.as<GlobalVarNode>()->name_hint), IdKind::kGlobal);
  id->source = node;
  return id;
}

Doc BuildOp(const ObjectRef& node, IRDocsifier& d) {
  // Ops are shared handles: one doc per op per function, reused at every call.
  if (const ExprDoc* doc = d.Lookup(node.get())) return *doc;
  auto id = Id(node.as<OpNode>()->name, IdKind::kOp);
  id->source = node;
  d.DefByDoc(node, id);
  return id;
}

Doc BuildCall(const ObjectRef& node, IRDocsifier& d) {
  const auto* call = node.as<CallNode>();
  ExprDoc callee = Denote(d, call->op);
  std::vector<ExprDoc> args;
  args.reserve(call->args.size());
  for (const Expr& arg : call->args) args.push_back(Denote(d, arg));
  auto doc = std::make_shared<CallDocNode>(std::move(callee), std::move(args));
  AppendAttrKwargs(call->attrs, doc.get());
  doc->source = node;
  doc->comment = SpanComment(d, call->span);
  return doc;
}

Doc BuildTuple(const ObjectRef& node, IRDocsifier& d) {
  const auto* tuple = node.as<TupleNode>();
  std::vector<ExprDoc> elements;
  elements.reserve(tuple->elements.size());
  for (const Expr& element : tuple->elements) elements.push_back(Denote(d, element));
  auto doc = std::make_shared<TupleDocNode>(std::move(elements));
  doc->source = node;
  doc->comment = SpanComment(d, tuple->span);
  return doc;
}

Doc BuildTupleGetItem(const ObjectRef& node, IRDocsifier& d) {
  const auto* item = node.as<TupleGetItemNode>();
  auto doc =
      std::make_shared<AttrAccessDocNode>(Denote(d, item->tuple), std::to_string(item->index));
  doc->source = node;
  doc->comment = SpanComment(d, item->span);
  return doc;
}

Doc BuildIf(const ObjectRef& node, IRDocsifier& d) {
  const auto* branch = node.as<IfNode>();
  BindBeforeIf(d, branch);  // done already when the If is bound to a temporary
  ExprDoc predicate = Denote(d, branch->cond);
  std::vector<StmtDoc> then_branch = EmitScope(d, branch->true_branch, false);
  std::vector<StmtDoc> else_branch = EmitScope(d, branch->false_branch, false);
  auto doc = std::make_shared<IfExprDocNode>(std::move(predicate), std::move(then_branch),
                                             std::move(else_branch));
  doc->source = node;
  doc->comment = SpanComment(d, branch->span);
  return doc;
}

Doc BuildLet(const ObjectRef& node, IRDocsifier& d) {
  // Reached only for a Let used as a value (not continuing its scope): it becomes a block.
  // The block carries no source: the `let` statement inside it is what renders the Let.
  return std::make_shared<BlockExprDocNode>(
      EmitScope(d, Downcast<ExprNode>(node), /*continue_shared_let=*/true));
}

}  // namespace kiln::printer::graph
