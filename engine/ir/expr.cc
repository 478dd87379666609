// Expression constructors and field replacement.
#include "engine/ir/expr.h"

#include <map>
#include <mutex>

namespace kiln {

bool FunctionNode::HasNonzeroAttr(std::string_view key) const {
  if (!attrs) return false;
  const AttrValue* value = attrs->Find(key);
  if (value == nullptr) return false;
  if (value->is<int64_t>()) return value->get<int64_t>() != 0;
  if (value->is<bool>()) return value->get<bool>();
  return false;
}

Var MakeVar(std::string name_hint, Type type_annotation, Span span,
            VirtualDevice virtual_device) {
  return MakeRef<VarNode>(std::move(name_hint), std::move(type_annotation),
                          ExprFields{std::move(span), nullptr, std::move(virtual_device)});
}

GlobalVar MakeGlobalVar(std::string name_hint) {
  return MakeRef<GlobalVarNode>(std::move(name_hint));
}

Constant MakeConstant(TensorData data, Span span) {
  return MakeRef<ConstantNode>(std::move(data), ExprFields{std::move(span), nullptr, nullptr});
}

Op GetOp(std::string_view name) {
  // Op handles live for the process: the set of operator names is finite.
  static std::mutex mutex;
  static auto* ops = new std::map<std::string, Op, std::less<>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = ops->find(name);
  if (it != ops->end()) return it->second;
  Op op = MakeRef<OpNode>(std::string(name));
  ops->emplace(std::string(name), op);
  return op;
}

Call MakeCall(Expr op, std::vector<Expr> args, Attrs attrs, Span span) {
  return MakeRef<CallNode>(std::move(op), std::move(args), std::move(attrs),
                           ExprFields{std::move(span), nullptr, nullptr});
}

Tuple MakeTuple(std::vector<Expr> elements, Span span) {
  return MakeRef<TupleNode>(std::move(elements), ExprFields{std::move(span), nullptr, nullptr});
}

TupleGetItem MakeTupleGetItem(Expr tuple, int index, Span span) {
  return MakeRef<TupleGetItemNode>(std::move(tuple), index,
                                   ExprFields{std::move(span), nullptr, nullptr});
}

Let MakeLet(Var var, Expr value, Expr body, Span span) {
  return MakeRef<LetNode>(std::move(var), std::move(value), std::move(body),
                          ExprFields{std::move(span), nullptr, nullptr});
}

If MakeIf(Expr cond, Expr true_branch, Expr false_branch, Span span) {
  return MakeRef<IfNode>(std::move(cond), std::move(true_branch), std::move(false_branch),
                         ExprFields{std::move(span), nullptr, nullptr});
}

Function MakeFunction(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs, Span span,
                      VirtualDevice result_virtual_device) {
  return MakeRef<FunctionNode>(std::move(params), std::move(body), std::move(ret_type),
                               std::move(attrs),
                               ExprFields{std::move(span), nullptr, std::move(result_virtual_device)});
}

Expr WithFields(const Expr& expr, ExprFields f) {
  switch (expr->kind()) {
    case ObjectKind::kVar: {
      const auto* n = expr.as<VarNode>();
      return MakeRef<VarNode>(n->name_hint, n->type_annotation, std::move(f));
    }
    case ObjectKind::kGlobalVar:
      return MakeRef<GlobalVarNode>(expr.as<GlobalVarNode>()->name_hint, std::move(f));
    case ObjectKind::kConstant:
      return MakeRef<ConstantNode>(expr.as<ConstantNode>()->data, std::move(f));
    case ObjectKind::kOp:
      return expr;  // Op handles are shared and carry no per-use fields.
    case ObjectKind::kCall: {
      const auto* n = expr.as<CallNode>();
      return MakeRef<CallNode>(n->op, n->args, n->attrs, std::move(f));
    }
    case ObjectKind::kTuple:
      return MakeRef<TupleNode>(expr.as<TupleNode>()->elements, std::move(f));
    case ObjectKind::kTupleGetItem: {
      const auto* n = expr.as<TupleGetItemNode>();
      return MakeRef<TupleGetItemNode>(n->tuple, n->index, std::move(f));
    }
    case ObjectKind::kLet: {
      const auto* n = expr.as<LetNode>();
      return MakeRef<LetNode>(n->var, n->value, n->body, std::move(f));
    }
    case ObjectKind::kIf: {
      const auto* n = expr.as<IfNode>();
      return MakeRef<IfNode>(n->cond, n->true_branch, n->false_branch, std::move(f));
    }
    case ObjectKind::kFunction: {
      const auto* n = expr.as<FunctionNode>();
      return MakeRef<FunctionNode>(n->params, n->body, n->ret_type, n->attrs, std::move(f));
    }
    default:
      KILN_UNREACHABLE() << ObjectKindName(expr->kind());
  }
  return expr;
}

Expr WithSpan(const Expr& expr, Span span) {
  ExprFields f = expr->fields();
  f.span = std::move(span);
  return WithFields(expr, std::move(f));
}

Expr WithCheckedType(const Expr& expr, Type type) {
  ExprFields f = expr->fields();
  f.checked_type = std::move(type);
  return WithFields(expr, std::move(f));
}

}  // namespace kiln
