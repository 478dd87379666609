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

 private:
  std::string name_;
};

}  // namespace kiln
