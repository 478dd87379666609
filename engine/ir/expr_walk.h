// The one way to reach the children of a graph expression, rebuild a node
// over new children, and walk a DAG in post-order without recursion. Every
// traversal (visitor, mutator, hashing, printing, fusion, lowering) is built
// on these, so a new node kind is taught to the compiler here, once.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "engine/ir/expr.h"

namespace kiln {

// What a child is to its parent.
enum class ChildRole : unsigned char {
  kCallee,     // Call::op
  kArgument,   // Call::args
  kElement,    // Tuple::elements
  kTuple,      // TupleGetItem::tuple
  kLetVar,     // the variable a Let defines
  kLetValue,
  kLetBody,
  kCondition,  // If::cond
  kBranch,     // If::true_branch, If::false_branch
  kParam,      // the variables a Function defines
  kBody,       // Function::body
};

// Which children a traversal follows.
enum class ChildSet {
  // Every child, in evaluation order.
  kAll,
  // Every edge that uses a value: kAll without the variables a Let or a
  // Function defines.
  kUses,
  // What must be computed before the node itself: callee, arguments,
  // elements, the tuple of a projection, an If's condition. Scopes (let
  // values and bodies, branches, function bodies) are inside the node.
  kOperands,
  // Values flowing into the node: arguments (not the callee), elements, the
  // tuple of a projection, a Let's value then its body.
  kDataflow,
};

constexpr bool InChildSet(ChildSet set, ChildRole role) {
  switch (set) {
    case ChildSet::kAll:
      return true;
    case ChildSet::kUses:
      return role != ChildRole::kLetVar && role != ChildRole::kParam;
    case ChildSet::kOperands:
      return role == ChildRole::kCallee || role == ChildRole::kArgument ||
             role == ChildRole::kElement || role == ChildRole::kTuple ||
             role == ChildRole::kCondition;
    case ChildSet::kDataflow:
      return role == ChildRole::kArgument || role == ChildRole::kElement ||
             role == ChildRole::kTuple || role == ChildRole::kLetValue ||
             role == ChildRole::kLetBody;
  }
  return false;
}

// One child slot of a node: the child (null when absent, e.g. a missing
// else branch) and what it is to its parent.
struct ChildSlot {
  const ExprNode* node;
  ChildRole role;
};

// The `index`-th child slot of `node` in evaluation order, or nullopt past the
// last. The one place that knows where each kind keeps its children.
inline std::optional<ChildSlot> ChildAt(const ExprNode* node, size_t index) {
  switch (node->kind()) {
    case ObjectKind::kCall: {
      const auto* call = static_cast<const CallNode*>(node);
      if (index == 0) return ChildSlot{call->op.get(), ChildRole::kCallee};
      if (index <= call->args.size()) {
        return ChildSlot{call->args[index - 1].get(), ChildRole::kArgument};
      }
      return std::nullopt;
    }
    case ObjectKind::kTuple: {
      const auto& elements = static_cast<const TupleNode*>(node)->elements;
      if (index < elements.size()) return ChildSlot{elements[index].get(), ChildRole::kElement};
      return std::nullopt;
    }
    case ObjectKind::kTupleGetItem:
      if (index == 0) {
        return ChildSlot{static_cast<const TupleGetItemNode*>(node)->tuple.get(),
                         ChildRole::kTuple};
      }
      return std::nullopt;
    case ObjectKind::kLet: {
      const auto* let = static_cast<const LetNode*>(node);
      switch (index) {
        case 0: return ChildSlot{let->var.get(), ChildRole::kLetVar};
        case 1: return ChildSlot{let->value.get(), ChildRole::kLetValue};
        case 2: return ChildSlot{let->body.get(), ChildRole::kLetBody};
        default: return std::nullopt;
      }
    }
    case ObjectKind::kIf: {
      const auto* branch = static_cast<const IfNode*>(node);
      switch (index) {
        case 0: return ChildSlot{branch->cond.get(), ChildRole::kCondition};
        case 1: return ChildSlot{branch->true_branch.get(), ChildRole::kBranch};
        case 2: return ChildSlot{branch->false_branch.get(), ChildRole::kBranch};
        default: return std::nullopt;
      }
    }
    case ObjectKind::kFunction: {
      const auto* func = static_cast<const FunctionNode*>(node);
      if (index < func->params.size()) return ChildSlot{func->params[index].get(), ChildRole::kParam};
      if (index == func->params.size()) return ChildSlot{func->body.get(), ChildRole::kBody};
      return std::nullopt;
    }
    default:  // leaves: Var, GlobalVar, Constant, Op, PrimFunc
      return std::nullopt;
  }
}

// Calls fn(child, role) for each non-null child of `node` in evaluation order.
template <typename Fn>
void ForEachChildWithRole(const ExprNode* node, Fn&& fn) {
  for (size_t index = 0;; ++index) {
    std::optional<ChildSlot> slot = ChildAt(node, index);
    if (!slot) return;
    if (slot->node != nullptr) fn(slot->node, slot->role);
  }
}

// Calls fn(child) for each non-null child of `node` in `set`, in evaluation order.
template <typename Fn>
void ForEachChild(const ExprNode* node, ChildSet set, Fn&& fn) {
  ForEachChildWithRole(node, [&](const ExprNode* child, ChildRole role) {
    if (InChildSet(set, role)) fn(child);
  });
}

// `expr` with every child in `set` replaced by map(child), other children
// kept; `expr` itself when map changed none. Span, checked type and virtual
// device are kept. map must return a Var for a Var it is given in kLetVar or
// kParam role.
Expr RebuildWithChildren(const Expr& expr, ChildSet set,
                         const std::function<Expr(const Expr&)>& map);

// An edge the walk reaches: `child` is `parent`'s child in role `role`.
struct WalkEdge {
  const ExprNode* parent;
  const ExprNode* child;
  ChildRole role;
};

// Walks the DAG under `root` in post-order with an explicit stack, so chains
// of any length cost no stack depth. When the walk reaches a child of `set`,
// descend(const WalkEdge&) says whether to take it (false: the caller has it
// already, or treats it itself); a taken node is left, leave(node), after
// all its taken children. The root is always taken. Each call of descend
// comes in pre-order, so it also serves pre-order walks. When leave returns
// absl::Status, the first error stops the walk and is returned.
template <typename Descend, typename Leave>
auto WalkPostOrder(const ExprNode* root, ChildSet set, Descend&& descend, Leave&& leave) {
  using LeaveResult = decltype(leave(root));
  constexpr bool kFallible = std::is_same_v<LeaveResult, absl::Status>;
  struct Frame {
    const ExprNode* node;
    size_t next_child;  // the slot ChildAt gives next
  };
  std::vector<Frame> stack{{root, 0}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (std::optional<ChildSlot> slot = ChildAt(top.node, top.next_child++)) {
      if (slot->node != nullptr && InChildSet(set, slot->role) &&
          descend(WalkEdge{top.node, slot->node, slot->role})) {
        stack.push_back({slot->node, 0});  // `top` dangles from here
      }
      continue;
    }
    const ExprNode* node = top.node;
    stack.pop_back();
    if constexpr (kFallible) {
      absl::Status status = leave(node);
      if (!status.ok()) return status;
    } else {
      leave(node);
    }
  }
  if constexpr (kFallible) return absl::OkStatus();
}

}  // namespace kiln
