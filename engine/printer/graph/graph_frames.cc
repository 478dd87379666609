// Use counting and metadata numbering for the graph dialect's frames.
#include "engine/printer/graph/graph_frames.h"

#include <unordered_set>

#include "engine/ir/expr_visitor.h"
#include "engine/ir/expr_walk.h"
#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

int GraphModuleFrame::MetadataIndex(const Constant& constant) {
  auto [it, inserted] = metadata_index_.emplace(constant.get(), static_cast<int>(metadata_.size()));
  if (inserted) metadata_.push_back(constant);
  return it->second;
}

namespace {

// The scopes of `root`'s body (a function's, or a fragment). Without hoisting when it binds
// values with `let`: a let's variable is in scope only after it, so a value reading one stays
// at its first use.
IfScopes PrintedScopes(const Expr& root) {
  const auto* function = root.as<FunctionNode>();
  const Expr& body = function != nullptr ? function->body : root;
  bool binds_let = false;
  std::unordered_set<const ExprNode*> seen;
  WalkPostOrder(
      body.get(), ChildSet::kAll,
      [&](const WalkEdge& edge) {
        return !binds_let && IsComputedEdge(edge.role) && seen.insert(edge.child).second;
      },
      [&](const ExprNode* node) { binds_let |= node->kind() == ObjectKind::kLet; });
  return IfScopes(binds_let ? Expr() : body);
}

}  // namespace

GraphFunctionFrame::GraphFunctionFrame(const Expr& root)
    : Frame(/*is_name_scope=*/true), if_scopes(PrintedScopes(root)) {
  PostOrderVisit(root, [this](const Expr& expr) {
    // Uses, not definitions: parameters and let variables are not counted.
    ForEachChild(expr.get(), ChildSet::kUses, [this](const ExprNode* child) {
      if (!IsAtomic(child)) ++use_counts_[child];
    });
  });
}

}  // namespace kiln::printer::graph
