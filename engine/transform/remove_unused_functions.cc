// RemoveUnusedFunctions: reachability over global references from `main`.
#include "engine/transform/remove_unused_functions.h"

#include <set>
#include <string>
#include <vector>

#include "engine/ir/expr_visitor.h"

namespace kiln::transform {
namespace {

constexpr char kEntryFunction[] = "main";

IRModule RemoveUnreachable(const IRModule& module) {
  if (!module->Lookup(kEntryFunction)) return module;
  std::set<std::string> reached{kEntryFunction};
  std::vector<std::string> worklist{kEntryFunction};
  while (!worklist.empty()) {
    BaseFunc func = module->Lookup(worklist.back());
    worklist.pop_back();
    if (!func || func->kind() != ObjectKind::kFunction) continue;
    PostOrderVisit(func, [&](const Expr& expr) {
      if (const auto* gv = expr.as<GlobalVarNode>()) {
        if (reached.insert(gv->name_hint).second) worklist.push_back(gv->name_hint);
      }
    });
  }
  std::vector<IRModuleNode::Entry> kept;
  for (const auto& entry : module->functions) {
    // Loop PrimFuncs are kept: the calls inside them are not graph calls this walk sees.
    if (reached.count(entry.first->name_hint) ||
        entry.second->kind() != ObjectKind::kFunction) {
      kept.push_back(entry);
    }
  }
  if (kept.size() == module->functions.size()) return module;
  return MakeModule(std::move(kept), module->attrs);
}

}  // namespace

Pass RemoveUnusedFunctions() {
  return CreateModulePass(
      [](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        return RemoveUnreachable(module);
      },
      PassInfo{"RemoveUnusedFunctions", 1, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
