// PassInstrument: an object observing every pass run under a PassContext,
// with the seed's hooks (EnterPassContext, ExitPassContext, ShouldRun,
// RunBeforePass, RunAfterPass) plus RunAfterPassFailed (MLIR's
// runAfterPassFailed), so timing, printing, checking and crash reproduction
// are written once and never inserted into pipelines by hand.
//
// Every hook returns absl::Status; a hook that throws is turned into an
// internal error by PassContext. The order in which PassContext calls the
// hooks, and what happens when one fails, is documented there
// (pass_context.h) and in docs/passes.md.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/pass/pass.h"

namespace kiln {

// What an instrument learns about one run of a pass.
struct PassInvocation {
  const PassNode& pass;
  // 0 for a pass run directly, 1 for a pass inside a top-level Sequential, ...
  int depth = 0;
  // In the context's required list, or run because another pass requires it:
  // ShouldRun is not asked.
  bool required = false;

  const PassInfo& info() const { return pass.info(); }
  const std::string& name() const { return pass.info().name; }
};

// A pass of a backend's own pass manager (LLVM's), reported after it ran. Backends run their
// passes outside PassContext, so they describe each run instead of handing over an IRModule.
struct BackendPassRun {
  PassStage stage = PassStage::kLlvm;
  std::string name;
  int depth = 0;
  double duration_ms = 0;
  bool changed = false;
  // The backend's IR after the pass as text (capped by the backend); empty when it has none
  // to show. Called only by instruments that want it, during the report.
  std::function<std::string()> ir_after;
};

class PassInstrument {
 public:
  explicit PassInstrument(std::string name) : name_(std::move(name)) {}
  virtual ~PassInstrument() = default;
  PassInstrument(const PassInstrument&) = delete;
  PassInstrument& operator=(const PassInstrument&) = delete;

  const std::string& name() const { return name_; }

  // When a PassContext with this instrument becomes current (Scope) or the
  // instrument is installed by OverrideInstruments.
  virtual absl::Status EnterPassContext() { return absl::OkStatus(); }
  // When the context stops being current, or the instrument is overridden.
  virtual absl::Status ExitPassContext() { return absl::OkStatus(); }
  // Whether the pass should run at all (not asked for required passes). All
  // instruments are asked; the pass runs only when every one says true.
  virtual absl::StatusOr<bool> ShouldRun(const IRModule& /*module*/,
                                         const PassInvocation& /*pass*/) {
    return true;
  }
  // Just before the pass runs, with its input.
  virtual absl::Status RunBeforePass(const IRModule& /*module*/, const PassInvocation& /*pass*/) {
    return absl::OkStatus();
  }
  // Just after the pass succeeded, with its output.
  virtual absl::Status RunAfterPass(const IRModule& /*module*/, const PassInvocation& /*pass*/) {
    return absl::OkStatus();
  }
  // After the pass returned `error`, with the pass's input.
  virtual absl::Status RunAfterPassFailed(const IRModule& /*module_before*/,
                                          const PassInvocation& /*pass*/,
                                          const absl::Status& /*error*/) {
    return absl::OkStatus();
  }
  // After a backend's pass ran (PassContext::ReportBackendPass).
  virtual void RunAfterBackendPass(const BackendPassRun& /*run*/) {}

 private:
  std::string name_;
};

}  // namespace kiln
