// GraphRewriter: the base of the graph passes that match a pattern of calls
// and replace it (FoldGateIntoWeights, FuseLayerNorm): a PostOrderRewriter that
// leaves fused functions alone and knows how many users each node of the
// function it was made for has (a rewrite that absorbs a node must be its only
// user, or the node's work would be done twice).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "engine/ir/expr_mutator.h"

namespace kiln::transform {

class GraphRewriter : public PostOrderRewriter {
 public:
  explicit GraphRewriter(const Function& func);

 protected:
  // Fused (Primitive) functions are finished kernels: never rewritten from outside.
  bool KeepSubtree(const ExprNode* expr) const override;

  // How many nodes of the input function use `node` (one of its nodes, before rewriting).
  int64_t Uses(const ExprNode* node) const;

 private:
  std::unordered_map<const ExprNode*, int64_t> uses_;
};

}  // namespace kiln::transform
