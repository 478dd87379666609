// Large weights kept out of LLVM's copies. Given to LLVM as constant data, ResNet-50's 100 MB
// of weights were copied into the module, then into the object streamer's fragments, then
// into the object: each copy 25,600 fresh pages, each page a fault. Declared instead (the
// optimizer needs their addresses, not their values), they get zeros just before code
// generation, which the object writer lays out as a fill it never stores, and their bytes are
// written over those zeros in the finished object.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/lower/lower_module.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::codegen {

struct DeferredWeight {
  llvm::GlobalVariable* global;
  size_t constant_index;  // into LoweredModule::constants
};

// Weights this large or larger are deferred; smaller ones keep their bytes in the module, where
// the optimizer may fold a scalar's value into the code that reads it.
inline constexpr size_t kDeferredWeightBytes = size_t{64} << 10;

// Defines each deferred weight, after optimization and before code generation: as zeros for
// PatchDeferredWeights to fill when the object is ELF (then returns true), as its bytes
// otherwise.
bool DefineDeferredWeights(const std::vector<DeferredWeight>& weights,
                           const lower::LoweredModule& lowered, const llvm::Triple& triple);

// Writes each deferred weight's bytes over its zeros in `object`, found by its symbol; an
// Internal error if one is missing or not where its bytes fit (a Kiln bug).
absl::Status PatchDeferredWeights(const std::vector<DeferredWeight>& weights,
                                  const lower::LoweredModule& lowered, std::string& object);

}  // namespace kiln::codegen
