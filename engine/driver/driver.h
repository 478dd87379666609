// The driver: the one entry point that runs Kiln's stages in order (import,
// the graph pipeline under a PassContext, lowering to loop IR, the loop
// pipeline). Tools, the conformance runner, the service and tests call it, so
// every consumer compiles a model the same way.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/driver/debug_instruments.h"
#include "engine/driver/passes.h"
#include "engine/frontend/onnx/importer.h"
#include "engine/ir/module.h"
#include "engine/lower/lower_module.h"
#include "engine/pass/instrument.h"
#include "engine/pass/pass_diagnostic.h"
#include "engine/pass/pass_event.h"
#include "engine/support/compile_budget.h"

namespace kiln::driver {

// kConfigure: the PassContext options themselves (an unknown config key, a
// value of the wrong type).
enum class CompileStage { kConfigure, kImport, kGraphPasses, kLower, kLoopPasses, kCodegen };
const char* CompileStageName(CompileStage stage);  // "configure", "import", ...

struct CompileOptions {
  OnnxImportOptions import;
  // Graph text: the file name its errors and spans use, and whether it is
  // held to a request's limits (see CompileGraphText). A local tool reading
  // its user's own files turns them off.
  std::string source_name = "graph_ir_text";
  bool text_request_limits = true;
  // The graph pipeline: `pipeline` when set, else DefaultGraphPipeline(opt_level, the float32
  // lanes of codegen's target, the host's without codegen).
  int opt_level = 3;
  std::string pipeline;
  // False: no graph passes (the module is printed or lowered as imported).
  bool run_graph_passes = true;
  std::vector<std::string> required_passes;
  std::vector<std::string> disabled_passes;
  // PassContext options as "key=value" (an unknown key lists the valid ones).
  std::vector<std::string> config;
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  // Timing, IR dumps, reproducers (see debug_instruments.h).
  DebugOptions debug;
  // Stop after the graph passes (no loop IR).
  bool lower = true;
  // The loop pipeline run on the lowered module, under the same PassContext
  // so instruments see the loop passes too: unset, the default one; empty,
  // none.
  std::optional<std::string> loop_pipeline;
  // When set (and the compile lowers a whole model), LLVM generates native code for the loop
  // module after the loop pipeline (stage kCodegen).
  std::optional<codegen::CodegenOptions> codegen;
  // Without codegen: the target convolution layouts and schedules are chosen for (its vector
  // lanes); empty, the host's. With codegen, codegen->target is.
  codegen::TargetOptions layout_target;
  // When set, lowering produces only the kernels this schedule-record
  // selector may name, and no main (the loop pipeline is then skipped).
  std::string only_kernels_named_by;
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
  std::optional<codegen::NativeModule> native;  // when options.codegen
  // Diagnostics, timing, span coverage.
  CompileReport report;
  // The most bytes of tensor data the compile held at once (its budget's peak).
  int64_t peak_bytes = 0;
  // Wall time of each stage that ran, in order (import is absent for CompileModule).
  struct StageTime {
    CompileStage stage;
    double seconds;
  };
  std::vector<StageTime> stage_times;
};

// A failed compile: which stage failed and why (the status names the node,
// op and layer where the stage knows them).
struct CompileFailure {
  CompileStage stage;
  absl::Status status;
  // What the instruments reported up to the failure.
  CompileReport report;
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

// The default graph pipeline of `opt_level` for code generated for `target`: ConvertLayout blocks
// convolutions by the target's float32 vector lanes. An unknown target is InvalidArgument.
absl::StatusOr<std::string> DefaultGraphPipelineFor(int opt_level,
                                                    const codegen::TargetOptions& target);

// The shared-library artifact of a compile's native code (codegen/llvm/shared_library.h): linked
// on request from the object, so one cached compile serves it too. FailedPrecondition without
// native code or for a target it cannot be linked for.
absl::StatusOr<std::string> LinkSharedLibrary(const CompileResult& compiled);

// The FLOPs of each lowered kernel by name (lower/kernel_flops.h: twice the multiply-adds of its
// reductions), for per-kernel GFLOP/s; empty when the compile did not lower.
std::map<std::string, int64_t> KernelFlopsByName(const CompileResult& compiled);

}  // namespace kiln::driver
