// Where each node of a function body is computed when its Ifs branch at run time. Scope 0 is
// the body's; each If's branches are scopes inside the If's. A node is computed once, in the
// innermost scope holding all its uses (the lowest common ancestor of its users' scopes; a
// branch's result is used by its branch): a value only one branch reads belongs to that
// branch, one both branches read (or the code after the If) to the If's scope, computed before
// it. Lowering emits each node there (a chain of Ifs, each reading the last one's result, runs
// each kernel once, not 2^n times) and the graph printer binds it there.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "engine/ir/expr.h"
#include "engine/ir/expr_walk.h"

namespace kiln {

class IfScopes {
 public:
  // Walks `body` (its dataflow, If conditions and branches; not nested functions) without
  // recursion.
  explicit IfScopes(const Expr& body);

  // The scope of a node of the body, or -1 for one the walk did not reach.
  int ScopeOf(const ExprNode* node) const;
  // How many Ifs enclose the deepest scope.
  int MaxDepth() const { return max_depth_; }

  // The nodes `if_node`'s branches read (through any depth of nested branches) that belong to
  // `if_node`'s own scope, operands first, leaving out those `done` holds (already computed or
  // bound) and what only they read.
  std::vector<const ExprNode*> ComputedBefore(
      const ExprNode* if_node, const std::function<bool(const ExprNode*)>& done) const;

 private:
  struct Scope {
    int parent;
    int depth;  // Ifs around it
  };
  int CommonScope(int a, int b) const;

  std::vector<Scope> scopes_;
  std::unordered_map<const ExprNode*, int> scope_of_;
  int max_depth_ = 0;
};

// The child edges along which a function body computes: the dataflow (ChildSet::kDataflow),
// an If's condition and its branches.
bool IsComputedEdge(ChildRole role);

}  // namespace kiln
