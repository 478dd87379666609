// Verifier: checks between passes that the module is still well formed, so a
// pass that breaks the IR is named at once instead of by a crash three passes
// later. Well-formedness: every variable is used inside the scope that binds
// it, no variable is bound twice, every global referenced is defined. Given
// a type inference, the module is also copied without its checked types and
// re-inferred, and every type a pass left on a node must equal the re-inferred
// one (stale types are the classic bug of a
// rewrite that forgot to re-type). Only when asked: it costs a full walk, or
// a full type inference, per pass.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/pass/instrument.h"

namespace kiln {

// Infers the checked types of a module. The pass layer knows no operators, so
// whoever builds the verifier supplies it (the driver: InferType of
// engine/op/type_inference.h).
using ModuleTypeInference = std::function<absl::StatusOr<IRModule>(const IRModule&)>;

struct VerifierOptions {
  // Set: also check that every checked type equals the re-inferred one.
  ModuleTypeInference infer_types;
};

// InvalidArgument with the offending node underlined in the printed module.
absl::Status VerifyModule(const IRModule& module, const VerifierOptions& options = {});

class Verifier final : public PassInstrument {
 public:
  explicit Verifier(VerifierOptions options = {});
  // Checks after every pass except Sequential containers (their result was
  // checked after their last pass).
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override;

 private:
  VerifierOptions options_;
};

}  // namespace kiln
