// Sequential: runs its passes in order under the seed's enabling rule, first
// running, through the context's registry, the passes each one requires.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/pass/pass.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"

namespace kiln {
namespace {

// Runs the passes of one Sequential, remembering which ran on the current
// module: a required pass is skipped when it already ran and nothing changed
// the module since (InferType twice in a row does nothing new), and runs again
// after any pass changed it (its result may be stale).
class SequentialRunner {
 public:
  SequentialRunner(const SequentialNode& sequential, PassContext& context)
      : sequential_(sequential), context_(context) {}

  absl::StatusOr<IRModule> Run(IRModule module) {
    for (const Pass& pass : sequential_.passes()) {
      if (!context_.PassEnabled(pass->info())) continue;
      std::vector<std::string> resolving;
      absl::StatusOr<IRModule> prepared = RunRequired(module, pass->info(), resolving);
      if (!prepared.ok()) return prepared.status();
      module = *std::move(prepared);
      bool ran = false;
      absl::StatusOr<IRModule> result =
          pass->RunInstrumented(module, context_, context_.IsRequired(pass->info().name), &ran);
      if (!result.ok()) return result.status();
      if (ran) Record(pass->info().name, module, *result);
      module = *std::move(result);
    }
    return module;
  }

 private:
  // Runs what `info` requires (and, first, what those require), unless it
  // already ran on this module. `resolving` holds the chain being resolved, to
  // report a cycle instead of recursing forever.
  absl::StatusOr<IRModule> RunRequired(IRModule module, const PassInfo& info,
                                       std::vector<std::string>& resolving) {
    resolving.push_back(info.name);
    for (const std::string& name : info.required) {
      if (ran_on_current_.count(name) != 0) continue;
      for (const std::string& outer : resolving) {
        if (outer == name) {
          std::string chain;
          for (const std::string& n : resolving) absl::StrAppend(&chain, n, " -> ");
          return absl::FailedPreconditionError(
              absl::StrCat("required passes form a cycle: ", chain, name));
        }
      }
      absl::StatusOr<Pass> required = context_.pass_registry().Create(name);
      if (!required.ok()) {
        return absl::NotFoundError(absl::StrCat("pass '", info.name, "' requires pass '", name,
                                                "': ", std::string(required.status().message())));
      }
      absl::StatusOr<IRModule> prepared =
          RunRequired(std::move(module), (*required)->info(), resolving);
      if (!prepared.ok()) return prepared.status();
      module = *std::move(prepared);
      absl::StatusOr<IRModule> result =
          (*required)->RunInstrumented(module, context_, /*required=*/true);
      // Required passes are never skipped (ShouldRun is not asked).
      if (!result.ok()) return result.status();
      Record(name, module, *result);
      module = *std::move(result);
    }
    resolving.pop_back();
    return module;
  }

  void Record(const std::string& name, const IRModule& before, const IRModule& after) {
    if (!after.same_as(before)) ran_on_current_.clear();
    ran_on_current_.insert(name);
  }

  const SequentialNode& sequential_;
  PassContext& context_;
  std::set<std::string> ran_on_current_;
};

}  // namespace

absl::StatusOr<IRModule> SequentialNode::Run(const IRModule& module, PassContext& context) const {
  return SequentialRunner(*this, context).Run(module);
}

}  // namespace kiln
