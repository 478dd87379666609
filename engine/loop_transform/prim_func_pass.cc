// Module passes over PrimFuncs.
#include "engine/loop_transform/prim_func_pass.h"

#include <utility>
#include <vector>

#include "engine/support/status_macros.h"

namespace kiln::loop::transform {

Pass CreatePrimFuncPass(PrimFuncPassFunc func, PassInfo info) {
  info.stage = PassStage::kLoop;
  return CreateModulePass(
      [func = std::move(func)](const IRModule& module,
                               PassContext& context) -> absl::StatusOr<IRModule> {
        std::vector<IRModuleNode::Entry> functions;
        functions.reserve(module->functions.size());
        bool changed = false;
        for (const IRModuleNode::Entry& entry : module->functions) {
          const auto* prim_func = entry.second.as<PrimFuncNode>();
          if (prim_func == nullptr) {
            functions.push_back(entry);
            continue;
          }
          PrimFunc input = Downcast<PrimFuncNode>(entry.second);
          KILN_ASSIGN_OR_RETURN(PrimFunc output, func(input, context));
          changed |= !output.same_as(input);
          functions.emplace_back(entry.first, std::move(output));
        }
        if (!changed) return module;
        return MakeModule(std::move(functions), module->attrs);
      },
      std::move(info));
}

Pass CreatePrimFuncBodyPass(std::function<Stmt(const PrimFunc&, PassContext&)> rewrite_body,
                            PassInfo info) {
  return CreatePrimFuncPass(
      [rewrite_body = std::move(rewrite_body)](const PrimFunc& func,
                                               PassContext& context) -> absl::StatusOr<PrimFunc> {
        return WithBody(func, rewrite_body(func, context));
      },
      std::move(info));
}

}  // namespace kiln::loop::transform
