// IfScopes: scopes by the lowest common ancestor of each node's uses, users before operands.
#include "engine/ir/if_scopes.h"

#include <optional>
#include <unordered_set>

#include "engine/ir/expr_walk.h"

namespace kiln {

bool IsComputedEdge(ChildRole role) {
  return InChildSet(ChildSet::kDataflow, role) || role == ChildRole::kCondition ||
         role == ChildRole::kBranch;
}

IfScopes::IfScopes(const Expr& body) {
  scopes_.push_back(Scope{-1, 0});
  if (!body) return;
  std::vector<const ExprNode*> order;
  std::unordered_set<const ExprNode*> seen{body.get()};
  WalkPostOrder(
      body.get(), ChildSet::kAll,
      [&](const WalkEdge& edge) { return IsComputedEdge(edge.role) && seen.insert(edge.child).second; },
      [&](const ExprNode* node) { order.push_back(node); });
  scope_of_[body.get()] = 0;
  // Reverse post-order: every user before its operands, so a node's scope is final when it is
  // reached.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ExprNode* node = *it;
    int scope = scope_of_.at(node);
    for (size_t i = 0; std::optional<ChildSlot> slot = ChildAt(node, i); ++i) {
      if (slot->node == nullptr || !IsComputedEdge(slot->role)) continue;
      int required = scope;
      if (slot->role == ChildRole::kBranch) {
        required = static_cast<int>(scopes_.size());
        scopes_.push_back(Scope{scope, scopes_[scope].depth + 1});
        max_depth_ = std::max(max_depth_, scopes_.back().depth);
      }
      auto [entry, inserted] = scope_of_.try_emplace(slot->node, required);
      if (!inserted) entry->second = CommonScope(entry->second, required);
    }
  }
}

int IfScopes::ScopeOf(const ExprNode* node) const {
  auto it = scope_of_.find(node);
  return it == scope_of_.end() ? -1 : it->second;
}

int IfScopes::CommonScope(int a, int b) const {
  while (a != b) {
    if (scopes_[a].depth >= scopes_[b].depth) {
      a = scopes_[a].parent;
    } else {
      b = scopes_[b].parent;
    }
  }
  return a;
}

std::vector<const ExprNode*> IfScopes::ComputedBefore(
    const ExprNode* if_node, const std::function<bool(const ExprNode*)>& done) const {
  std::vector<const ExprNode*> before;
  int scope = ScopeOf(if_node);
  if (scope < 0) return before;
  std::unordered_set<const ExprNode*> seen{if_node};
  WalkPostOrder(
      if_node, ChildSet::kAll,
      [&](const WalkEdge& edge) {
        return IsComputedEdge(edge.role) && !done(edge.child) && seen.insert(edge.child).second;
      },
      [&](const ExprNode* node) {
        if (node != if_node && ScopeOf(node) == scope) before.push_back(node);
      });
  return before;
}

}  // namespace kiln
