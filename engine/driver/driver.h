// The driver: the one entry point that runs Kiln's stages in order (import,
// the graph pipeline under a PassContext, lowering to loop IR, the loop
// pipeline). Tools, the conformance runner, the service and tests call it, so
// every consumer compiles a model the same way.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/importer.h"
#include "engine/ir/module.h"
#include "engine/lower/lower_module.h"
#include "engine/pass/instrument.h"
#include "engine/pass/pass_diagnostic.h"
#include "engine/support/compile_budget.h"

namespace kiln::driver {

// Registers the builtin graph and loop passes in PassRegistry::Global() once
// per process (thread-safe); every driver entry calls it.
void EnsureBuiltinPassesRegistered();

enum class CompileStage { kImport, kGraphPasses, kLower, kLoopPasses };
const char* CompileStageName(CompileStage stage);  // "import", "graph passes", ...

struct CompileOptions {
  OnnxImportOptions import;
  // The graph pipeline: `pipeline` when set, else DefaultPipeline(opt_level).
  int opt_level = 3;
  std::string pipeline;
  std::vector<std::string> required_passes;
  std::vector<std::string> disabled_passes;
  // PassContext options as "key=value" (an unknown key lists the valid ones).
  std::vector<std::string> config;
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  // Stop after the graph passes (no loop IR).
  bool lower = true;
  // Run the default loop pipeline on the lowered module (under the same
  // PassContext, so instruments see the loop passes too).
  bool run_loop_passes = true;
  // When set, lowering produces only the kernels it accepts and no main
  // (LowerOptions::only_kernels; the loop pipeline is then skipped).
  std::function<bool(const lower::KernelCandidate&)> lower_only_kernels;
  // Polled by every stage (between ONNX nodes, before every pass, during
  // constant folding, between kernels of lowering); true stops the compile
  // with Cancelled (a client that went away, an expired deadline). May be empty.
  std::function<bool()> is_cancelled;
  // What the compile may spend (bytes of tensor data, interpreter steps);
  // over it: ResourceExhausted naming the node.
  CompileLimits limits;
};

struct CompileResult {
  IRModule imported;
  IRModule optimized;
  std::optional<lower::LoweredModule> lowered;  // when options.lower
  // Notes and warnings the passes reported, in order.
  std::vector<PassDiagnostic> diagnostics;
  // The most bytes of tensor data the compile held at once (its budget's peak).
  int64_t peak_bytes = 0;
};

// A failed compile: which stage failed and why (the status names the node,
// op and layer where the stage knows them).
struct CompileFailure {
  CompileStage stage;
  absl::Status status;
};

// Compiles ONNX model bytes. On failure returns the status and, through
// `failure` when given, the stage it came from.
absl::StatusOr<CompileResult> CompileOnnx(std::string_view model_bytes,
                                          const CompileOptions& options,
                                          CompileFailure* failure = nullptr);

// Graph IR text (docs/graph-text-format.md), held to the limits ONNX models
// are: the parser's nesting bound, kMaxTensorRank, and the importer's
// element limit on every parameter (options.import.max_tensor_elements).
absl::StatusOr<CompileResult> CompileGraphText(std::string_view text,
                                               const CompileOptions& options,
                                               CompileFailure* failure = nullptr);

// The same from an already imported (or parsed) graph module.
absl::StatusOr<CompileResult> CompileModule(IRModule module, const CompileOptions& options,
                                            CompileFailure* failure = nullptr);

}  // namespace kiln::driver
