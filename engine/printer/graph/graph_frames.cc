// Use counting and metadata numbering for the graph dialect's frames.
#include "engine/printer/graph/graph_frames.h"

#include "engine/ir/expr_visitor.h"
#include "engine/ir/expr_walk.h"
#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

int GraphModuleFrame::MetadataIndex(const Constant& constant) {
  auto [it, inserted] = metadata_index_.emplace(constant.get(), static_cast<int>(metadata_.size()));
  if (inserted) metadata_.push_back(constant);
  return it->second;
}

GraphFunctionFrame::GraphFunctionFrame(const Expr& root) : Frame(/*is_name_scope=*/true) {
  PostOrderVisit(root, [this](const Expr& expr) {
    // Uses, not definitions: parameters and let variables are not counted.
    ForEachChild(expr.get(), ChildSet::kUses, [this](const ExprNode* child) {
      if (!IsAtomic(child)) ++use_counts_[child];
    });
  });
}

}  // namespace kiln::printer::graph
