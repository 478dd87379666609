// Internal to the graph dialect's printer: the builders and helpers its translation units
// share. Nothing outside engine/printer/graph/ includes this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/attrs.h"
#include "engine/ir/expr.h"
#include "engine/ir/span.h"
#include "engine/ir/type.h"
#include "engine/printer/doc.h"
#include "engine/printer/ir_docsifier.h"

namespace kiln::printer::graph {

// Names (docs/graph-text-format.md "Names"): a name hint made into a valid identifier.
std::string SanitizeName(std::string_view hint);

// Spans: the text after `si=` (a source name, a range, or a `[...]` list).
std::string SpanText(const Span& span);
// `key=SPAN` for a comment, or "" when the span is absent or spans are hidden.
std::string SpanComment(const IRDocsifier& d, const Span& span, std::string_view key = "si");

// Attribute values (not IR nodes, so not dispatched) and `key=value` lists.
ExprDoc AttrValueDoc(const AttrValue& value);
void AppendAttrKwargs(const Attrs& attrs, CallDocNode* call);
std::vector<AssignDoc> AttrArgs(const Attrs& attrs);
ExprDoc ShapeDoc(const std::vector<Dim>& dims, bool bare_singleton);
std::shared_ptr<IndexDocNode> TensorTypeDoc(const std::vector<Dim>& dims, DataType dtype);

// Expressions that print inline and are never bound to a temporary.
inline bool IsAtomic(const ExprNode* expr) {
  const ObjectKind kind = expr->kind();
  return kind == ObjectKind::kVar || kind == ObjectKind::kGlobalVar ||
         kind == ObjectKind::kConstant || kind == ObjectKind::kOp;
}

// The doc naming `expr` at the current point of the current scope: an atom as itself, anything
// else as its temporary, binding it (and first its unbound operands, in post-order, with an
// explicit stack) when this is its first use.
ExprDoc Denote(IRDocsifier& d, const Expr& expr);
// Binds, in the scope being printed, what `branch`'s branches read that is computed before it
// (IfScopes: what both branches read, or the code after the If too).
void BindBeforeIf(IRDocsifier& d, const IfNode* branch);
// The statements of a scope whose value is `result`: bindings, `let`s, then a ReturnDoc.
// `continue_shared_let` makes a Let result continue the scope even when it is shared (the
// scope is that Let's own block).
std::vector<StmtDoc> EmitScope(IRDocsifier& d, const Expr& result, bool continue_shared_let);
// A variable's identifier, defined on first sight in the innermost name scope.
ExprDoc DefineVar(IRDocsifier& d, const VarNode* var);
// `%x {virtual_device=...}: TYPE /* si=... */` of a parameter or let variable (no rhs).
std::shared_ptr<AssignDocNode> VarBinding(IRDocsifier& d, const Var& var);

// Builders, one per node kind (registered in register.cc).
Doc BuildModule(const ObjectRef& node, IRDocsifier& d);
Doc BuildFunction(const ObjectRef& node, IRDocsifier& d);
Doc BuildVar(const ObjectRef& node, IRDocsifier& d);
Doc BuildGlobalVar(const ObjectRef& node, IRDocsifier& d);
Doc BuildConstant(const ObjectRef& node, IRDocsifier& d);
Doc BuildOp(const ObjectRef& node, IRDocsifier& d);
Doc BuildCall(const ObjectRef& node, IRDocsifier& d);
Doc BuildTuple(const ObjectRef& node, IRDocsifier& d);
Doc BuildTupleGetItem(const ObjectRef& node, IRDocsifier& d);
Doc BuildLet(const ObjectRef& node, IRDocsifier& d);
Doc BuildIf(const ObjectRef& node, IRDocsifier& d);
Doc BuildTensorType(const ObjectRef& node, IRDocsifier& d);
Doc BuildTupleType(const ObjectRef& node, IRDocsifier& d);
Doc BuildFuncType(const ObjectRef& node, IRDocsifier& d);
Doc BuildVirtualDevice(const ObjectRef& node, IRDocsifier& d);

// An expression printed on its own: a body (bindings and a result) whose free variables are
// named at first use, followed by the metadata table when asked for.
Doc BuildFragment(IRDocsifier& d, const Expr& expr);
// True when `node` is asked for outside any graph function: it must print as a fragment.
bool NeedsFragment(const IRDocsifier& d, const ObjectRef& node);

// The metadata table entries collected so far (`meta[Constant][K] = TYPE 0xHEX`).
std::vector<AssignDoc> MetadataEntries(IRDocsifier& d);

}  // namespace kiln::printer::graph
