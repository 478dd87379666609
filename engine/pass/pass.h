// Passes: IRModule -> IRModule transformations with a PassInfo, run under a
// PassContext. Three kinds, as in the seeds: module passes (see the whole
// module), function passes (one graph function at a time; functions marked
// Primitive or SkipOptimization are skipped), and Sequential (runs a list,
// applying the enabling rule: disabled, then required, then opt level, and
// resolving each pass's required passes through the registry).
//
// A pass failure is an absl::Status naming the pass (and, where there is one,
// the node, with its span underlined in the printed IR).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"

namespace kiln {

class PassContext;

// Which IR a pass works on (also the `stage` of pass events).
enum class PassStage { kGraph, kLoop, kLlvm };
const char* PassStageName(PassStage stage);

struct PassInfo {
  std::string name;
  int opt_level = 0;
  // Passes that must run before this one (resolved through the registry).
  std::vector<std::string> required;
  PassStage stage = PassStage::kGraph;
};

class PassNode {
 public:
  virtual ~PassNode() = default;
  const PassInfo& info() const { return info_; }
  // Runs the pass with instrumentation (ShouldRun, RunBeforePass, RunAfterPass
  // or RunAfterPassFailed) of `context`.
  absl::StatusOr<IRModule> operator()(const IRModule& module, PassContext& context) const;
  // Runs under the current thread's PassContext.
  absl::StatusOr<IRModule> operator()(const IRModule& module) const;

  // As operator(), for a pass the caller needs whatever the instruments say:
  // with `required`, ShouldRun is not asked (the seed's rule for passes in the
  // context's required list, extended to the passes another pass requires).
  // `ran`, when given, says whether the pass ran (instruments may skip it).
  absl::StatusOr<IRModule> RunInstrumented(const IRModule& module, PassContext& context,
                                           bool required, bool* ran = nullptr) const;

  // The transformation alone, without instrumentation.
  virtual absl::StatusOr<IRModule> Run(const IRModule& module, PassContext& context) const = 0;

  // True for containers (Sequential): instruments such as Bisect and PrintIR
  // count and print the passes inside them, not the container.
  virtual bool is_sequential() const { return false; }

 protected:
  explicit PassNode(PassInfo info) : info_(std::move(info)) {}

 private:
  PassInfo info_;
};
using Pass = std::shared_ptr<const PassNode>;

using ModulePassFunc = std::function<absl::StatusOr<IRModule>(const IRModule&, PassContext&)>;
using FunctionPassFunc =
    std::function<absl::StatusOr<Function>(const Function&, const IRModule&, PassContext&)>;

Pass CreateModulePass(ModulePassFunc func, PassInfo info);
Pass CreateFunctionPass(FunctionPassFunc func, PassInfo info);
Pass Sequential(std::vector<Pass> passes, PassInfo info = {"Sequential", 0, {}, PassStage::kGraph});

// The node Sequential() creates, exposed so pipelines can print it back.
class SequentialNode final : public PassNode {
 public:
  SequentialNode(std::vector<Pass> passes, PassInfo info)
      : PassNode(std::move(info)), passes_(std::move(passes)) {}
  const std::vector<Pass>& passes() const { return passes_; }
  bool is_sequential() const override { return true; }
  absl::StatusOr<IRModule> Run(const IRModule& module, PassContext& context) const override;

 private:
  std::vector<Pass> passes_;
};

}  // namespace kiln
