// Building the LLVM module of a lowered model: one internal function per kernel PrimFunc, the
// exported entry `<prefix>_run` that runs main's kernel calls in order on a caller-provided
// workspace (main's values at planned offsets, then one scratch area the kernels share for
// their own Allocates), the weights as aligned constant data (the large ones declared, their
// bytes deferred), and the signature queries of engine/runtime/kiln_runtime.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/codegen/llvm/deferred_weights.h"
#include "engine/codegen/llvm/module_context.h"
#include "engine/lower/lower_module.h"
#include "engine/codegen/llvm/vector_math.h"
#include "llvm/IR/Module.h"

namespace kiln::codegen {

struct BuiltModule {
  std::unique_ptr<llvm::Module> module;
  int64_t workspace_bytes = 0;
  // The weights declared without their bytes, for DefineDeferredWeights.
  std::vector<DeferredWeight> deferred_weights;
};

// The symbol of main's entry: `<prefix>_run`, or for a model compiled per sample
// (lowered.sample_batch) the internal `<prefix>_run_sample` that `<prefix>_run_dynamic` calls.
std::string EntryName(const lower::LoweredModule& lowered, const std::string& prefix);

// `module` settings (triple, data layout) are the caller's; this fills in the functions, with
// debug info pointing into the printed loop IR when `source` is given and vector math through
// the libmvec variants `vector_math` allows. An unsupported
// construct is an Unimplemented error naming the kernel; a module without main is
// FailedPrecondition.
absl::StatusOr<BuiltModule> BuildModule(llvm::LLVMContext& context,
                                        const lower::LoweredModule& lowered,
                                        const CodegenOptions& options,
                                        const VectorMathTarget& vector_math,
                                        const LoopSourceLines* source = nullptr);

}  // namespace kiln::codegen
