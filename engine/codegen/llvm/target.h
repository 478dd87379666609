// The TargetMachine a compile uses: LLVM's targets initialized once per process, the request's
// triple/cpu/features resolved (the host's when empty) and checked.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln::codegen {

void InitializeLlvmTargets();

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const ResolvedTarget& target, int opt_level);

}  // namespace kiln::codegen
