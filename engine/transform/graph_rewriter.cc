// GraphRewriter (graph_rewriter.h).
#include "engine/transform/graph_rewriter.h"

#include "engine/ir/expr_visitor.h"
#include "engine/ir/expr_walk.h"

namespace kiln::transform {

GraphRewriter::GraphRewriter(const Function& func) {
  PostOrderVisit(func, [&](const Expr& expr) {
    ForEachChild(expr.get(), ChildSet::kUses, [&](const ExprNode* child) { ++uses_[child]; });
  });
}

bool GraphRewriter::KeepSubtree(const ExprNode* expr) const {
  const auto* func = Expr(expr).as<FunctionNode>();
  return func != nullptr && func->HasNonzeroAttr(kAttrPrimitive);
}

int64_t GraphRewriter::Uses(const ExprNode* node) const {
  auto it = uses_.find(node);
  return it == uses_.end() ? 0 : it->second;
}

}  // namespace kiln::transform
