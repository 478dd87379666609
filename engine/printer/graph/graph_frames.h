// Frames of the graph dialect's printer. A module frame owns the global names and the table of
// large constants; a function frame (one per top-level function, or per fragment) owns the
// local names, the temporary counter, the use counts that decide how a scope's result prints,
// and the statement list the current scope's bindings go to.
#pragma once

#include <unordered_map>
#include <vector>

#include "engine/ir/expr.h"
#include "engine/ir/if_scopes.h"
#include "engine/printer/ir_docsifier.h"
#include "engine/printer/module_frame.h"

namespace kiln::printer::graph {

// The pending top-level definition lives in the dialect-neutral ModuleFrame, so a module's
// functions of other dialects (loop PrimFuncs) print as named definitions too.
class GraphModuleFrame final : public ModuleFrame {
 public:
  // K of `meta[Constant][K]` for `constant`, numbering distinct nodes in order of first print.
  int MetadataIndex(const Constant& constant);
  const std::vector<Constant>& metadata() const { return metadata_; }

 private:
  std::vector<Constant> metadata_;
  std::unordered_map<const ConstantNode*, int> metadata_index_;
};

class GraphFunctionFrame final : public Frame {
 public:
  // Counts, for every non-atomic node under `root`, how many edges point at it.
  explicit GraphFunctionFrame(const Expr& root);

  int UseCount(const ExprNode* node) const {
    auto it = use_counts_.find(node);
    return it == use_counts_.end() ? 0 : it->second;
  }

  // Where the body computes each node: an If's branches print inside it only what they alone
  // read, as lowering runs them.
  const IfScopes if_scopes;
  int next_temp = 0;
  // Where bindings of the scope being printed go (EmitScope swaps it per scope).
  std::vector<StmtDoc>* stmts = nullptr;

 private:
  std::unordered_map<const ExprNode*, int> use_counts_;
};

}  // namespace kiln::printer::graph
