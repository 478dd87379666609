// See merged_spans.h.
#include "engine/lower/merged_spans.h"

#include <cstdint>
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

// Whether `other`'s walk pairs with `first`'s node for node: same kinds, and each node's children
// the counterparts of the first's (a parameter the parameter at the same position). Walks of
// equal length and kinds can still pair wrongly where one function shares a subexpression the
// other repeats (StructuralEqual sees them as equal).
bool Pairs(const Function& first, const std::vector<const ExprNode*>& first_order,
           const Function& other, const std::vector<const ExprNode*>& other_order) {
  if (first_order.size() != other_order.size()) return false;
  std::unordered_map<const ExprNode*, size_t> first_index, other_index;
  for (size_t i = 0; i < first->params.size(); ++i) first_index[first->params[i].get()] = i;
  for (size_t i = 0; i < other->params.size(); ++i) other_index[other->params[i].get()] = i;
  const size_t params = first->params.size();
  for (size_t i = 0; i < first_order.size(); ++i) {
    first_index[first_order[i]] = params + i;
    other_index[other_order[i]] = params + i;
  }
  for (size_t i = 0; i < first_order.size(); ++i) {
    if (first_order[i]->kind() != other_order[i]->kind()) return false;
    std::vector<size_t> a, b;
    ForEachChild(first_order[i], ChildSet::kUses, [&](const ExprNode* child) {
      auto it = first_index.find(child);
      a.push_back(it == first_index.end() ? SIZE_MAX : it->second);
    });
    ForEachChild(other_order[i], ChildSet::kUses, [&](const ExprNode* child) {
      auto it = other_index.find(child);
      b.push_back(it == other_index.end() ? SIZE_MAX : it->second);
    });
    if (a != b) return false;
  }
  return true;
}

}  // namespace

Function MergedSpans(const std::vector<Function>& functions) {
  if (functions.size() < 2) return functions.empty() ? Function() : functions[0];
  const Function& first = functions[0];
  if (first->body->kind() == ObjectKind::kVar) return first;  // nothing to name
  std::vector<std::vector<const ExprNode*>> orders;
  for (const Function& func : functions) {
    orders.push_back(PostOrder(func));
    if (!Pairs(first, orders[0], func, orders.back())) return first;
  }
  std::unordered_map<const ExprNode*, Span> merged;
  for (size_t i = 0; i < orders[0].size(); ++i) {
    std::vector<Span> spans;
    for (const auto& order : orders) {
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
  Function result = MakeFunction(first->params, rebuilt.at(first->body.get()), first->ret_type,
                                 first->attrs, MakeSequentialSpan(function_spans));
  return Downcast<FunctionNode>(WithCheckedType(result, first->checked_type));
}

}  // namespace kiln::lower
