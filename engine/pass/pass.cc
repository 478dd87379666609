// PassNode's instrumented entry point, module passes and function passes.
// Sequential lives in sequential.cc.
#include "engine/pass/pass.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/pass/pass_context.h"

namespace kiln {

const char* PassStageName(PassStage stage) {
  switch (stage) {
    case PassStage::kGraph:
      return "graph";
    case PassStage::kLoop:
      return "loop";
    case PassStage::kLlvm:
      return "llvm";
  }
  return "?";
}

absl::StatusOr<IRModule> PassNode::operator()(const IRModule& module, PassContext& context) const {
  return RunInstrumented(module, context, context.IsRequired(info_.name));
}

absl::StatusOr<IRModule> PassNode::operator()(const IRModule& module) const {
  return (*this)(module, PassContext::Current());
}

absl::StatusOr<IRModule> PassNode::RunInstrumented(const IRModule& module, PassContext& context,
                                                   bool required, bool* ran) const {
  if (ran != nullptr) *ran = false;
  // Cancellation is not an instrument: no pipeline or override can drop it.
  if (context.budget() != nullptr && !is_sequential()) {
    absl::Status cancelled =
        context.budget()->CheckCancelled(absl::StrCat("before pass ", info_.name));
    if (!cancelled.ok()) return cancelled;
  }
  PassInvocation invocation{*this, context.depth_, required};
  absl::StatusOr<bool> should_run = context.InstrumentBeforePass(module, invocation);
  if (!should_run.ok()) return should_run.status();
  if (!*should_run) return module;
  if (ran != nullptr) *ran = true;

  absl::StatusOr<IRModule> result;
  ++context.depth_;
  context.running_passes_.push_back(info_.name);
  try {
    result = Run(module, context);
  } catch (const std::exception& e) {
    result = absl::InternalError(absl::StrCat("threw: ", e.what()));
  } catch (...) {
    result = absl::InternalError("threw a non-standard exception");
  }
  --context.depth_;
  context.running_passes_.pop_back();
  if (result.ok() && !result->defined()) result = absl::InternalError("returned a null module");

  if (!result.ok()) {
    absl::Status error = result.status();
    // A Sequential's error already names the pass inside it that failed.
    if (!is_sequential()) {
      error = absl::Status(error.code(), absl::StrCat("pass '", info_.name,
                                                      "' failed: ", std::string(error.message())));
    }
    return context.InstrumentAfterPassFailed(module, invocation, error);
  }
  absl::Status after = context.InstrumentAfterPass(*result, invocation);
  if (!after.ok()) {
    return absl::Status(after.code(), absl::StrCat("after pass '", info_.name,
                                                   "': ", std::string(after.message())));
  }
  return result;
}

namespace {

class ModulePassNode final : public PassNode {
 public:
  ModulePassNode(ModulePassFunc func, PassInfo info)
      : PassNode(std::move(info)), func_(std::move(func)) {}

  absl::StatusOr<IRModule> Run(const IRModule& module, PassContext& context) const override {
    return func_(module, context);
  }

 private:
  ModulePassFunc func_;
};

class FunctionPassNode final : public PassNode {
 public:
  FunctionPassNode(FunctionPassFunc func, PassInfo info)
      : PassNode(std::move(info)), func_(std::move(func)) {}

  absl::StatusOr<IRModule> Run(const IRModule& module, PassContext& context) const override {
    // The result shares every function the pass left alone and is the input
    // module itself when nothing changed, so "changed" stays a pointer test.
    IRModule result = module;
    for (const auto& [name, base] : module->functions) {
      const auto* function = base.as<FunctionNode>();
      if (function == nullptr || SkipFunction(*function)) continue;
      Function input = Downcast<FunctionNode>(base);
      absl::StatusOr<Function> updated = func_(input, result, context);
      if (!updated.ok()) {
        return absl::Status(
            updated.status().code(),
            absl::StrCat("in @", name->name_hint, ": ", std::string(updated.status().message())));
      }
      if (!updated->defined()) {
        return absl::InternalError(
            absl::StrCat("in @", name->name_hint, ": returned a null function"));
      }
      if (!updated->same_as(input)) result = WithFunction(result, name, *updated);
    }
    return result;
  }

 private:
  // Primitive functions are fused kernels, already final for the graph
  // passes; SkipOptimization is the user's opt-out.
  static bool SkipFunction(const FunctionNode& function) {
    return function.HasNonzeroAttr(kAttrPrimitive) ||
           function.HasNonzeroAttr(kAttrSkipOptimization);
  }

  FunctionPassFunc func_;
};

}  // namespace

Pass CreateModulePass(ModulePassFunc func, PassInfo info) {
  return std::make_shared<ModulePassNode>(std::move(func), std::move(info));
}

Pass CreateFunctionPass(FunctionPassFunc func, PassInfo info) {
  return std::make_shared<FunctionPassNode>(std::move(func), std::move(info));
}

Pass Sequential(std::vector<Pass> passes, PassInfo info) {
  return std::make_shared<SequentialNode>(std::move(passes), std::move(info));
}

}  // namespace kiln
