// See merged_spans.h.
#include "engine/lower/merged_spans.h"

#include <unordered_map>
#include <unordered_set>

#include "engine/ir/expr_walk.h"
#include "engine/ir/span.h"

namespace kiln::lower {
namespace {

// The nodes of a function's body in post-order (each once), its parameters not included.
std::vector<const ExprNode*> PostOrder(const Function& func) {
  std::vector<const ExprNode*> order;
  std::unordered_set<const ExprNode*> seen;
  WalkPostOrder(
      func->body.get(), ChildSet::kUses,
      [&](const WalkEdge& edge) {
        return edge.child->kind() != ObjectKind::kVar && seen.insert(edge.child).second;
      },
      [&](const ExprNode* node) { order.push_back(node); });
  return order;
}

}  // namespace

Function MergedSpans(const std::vector<Function>& functions) {
  if (functions.size() < 2) return functions.empty() ? Function() : functions[0];
  std::vector<std::vector<const ExprNode*>> orders;
  for (const Function& func : functions) {
    orders.push_back(PostOrder(func));
    if (orders.back().size() != orders[0].size()) return functions[0];
  }
  std::unordered_map<const ExprNode*, Span> merged;
  for (size_t i = 0; i < orders[0].size(); ++i) {
    std::vector<Span> spans;
    for (const auto& order : orders) {
      if (order[i]->kind() != orders[0][i]->kind()) return functions[0];
      if (order[i]->span) spans.push_back(order[i]->span);
    }
    merged[orders[0][i]] = MakeSequentialSpan(spans);
  }
  std::unordered_map<const ExprNode*, Expr> rebuilt;
  auto map = [&](const Expr& child) -> Expr {
    auto it = rebuilt.find(child.get());
    return it == rebuilt.end() ? child : it->second;
  };
  for (const ExprNode* node : orders[0]) {
    Expr copy = RebuildWithChildren(Expr(node), ChildSet::kUses, map);
    rebuilt[node] = WithSpan(copy, merged.at(node));
  }
  std::vector<Span> function_spans;
  for (const Function& func : functions) {
    if (func->span) function_spans.push_back(func->span);
  }
  const Function& first = functions[0];
  Function result = MakeFunction(first->params, rebuilt.at(first->body.get()), first->ret_type,
                                 first->attrs, MakeSequentialSpan(function_spans));
  return Downcast<FunctionNode>(WithCheckedType(result, first->checked_type));
}

}  // namespace kiln::lower
