// Numeric drift: how far a snapshot of a compile (the module after some graph pass, or the
// finished native code) computes from the module as imported, on the same seeded inputs.
// The reference is the imported module run by the loop-IR interpreter (Kiln's reference
// semantics); a graph snapshot is fused where it is not yet (FuseOps at level 0, so no pass
// under test is repeated), lowered and run by the interpreter too; native code runs in this
// process. A model too large for the interpreter's step budget (the compile's limits) is
// checked with native code throughout instead (each module JIT-compiled for this machine):
// every report names its backend. A pass whose outputs move past a tolerance is the pass that changed the numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/driver/driver.h"
#include "engine/loop/host_tensor.h"
#include "engine/pass/pass_event.h"

namespace kiln::driver {

struct OutputDrift {
  std::string name;
  double max_abs_error = 0;
  // max |got - want| / max(|want|, kDriftRelativeFloor) over the output's elements.
  double max_rel_error = 0;
};

// Inputs and outputs beyond this many bytes are not checked: the check runs every snapshot.
inline constexpr int64_t kMaxCheckedBytes = int64_t{1} << 30;

// Layers compared by AttributeLayers at most (the first ones in `after`'s order).
inline constexpr int kMaxAttributedLayers = 256;

// Values whose magnitude is below this count their error as absolute in the relative figure.
inline constexpr double kDriftRelativeFloor = 1e-6;

// Where a pass's drift shows inside the model: the value of one ONNX layer (or of the set of
// layers a node computes, after fusion) before and after the pass, on the same inputs.
struct LayerDrift {
  std::vector<std::string> layers;
  double max_abs_error = 0;
  double max_rel_error = 0;
};

// One kernel's own precision in native code: the kernel run on exact inputs (the reference's
// values of its arguments) against the reference's value of its result.
struct KernelDrift {
  std::string kernel;               // the compile's kernel (LoweredKernel::name)
  std::vector<std::string> layers;  // the ONNX layers it computes
  double max_abs_error = 0;
  double max_rel_error = 0;
};

struct KernelPrecisionReport {
  // What computed the exact values: "interp", or "native without fast-math" for a model over
  // the interpreter's budget (then only fast-math's loss shows).
  std::string reference;
  std::vector<KernelDrift> kernels;  // one per kernel call, in the order main calls them
  // Calls left out: past the byte budget, or reading or returning tuples.
  int kernels_not_compared = 0;
};

struct DriftReport {
  std::string backend;  // "interp" or "native": what ran the snapshot
  std::vector<OutputDrift> outputs;
  double max_abs_error = 0;  // over all outputs
  double max_rel_error = 0;
};

// max |got - want| and max |got - want| / max(|want|, kDriftRelativeFloor) over two tensors of
// one shape (NaN against NaN and equal infinities count as exact).
std::pair<double, double> ErrorsBetween(const loop::HostTensor& got, const loop::HostTensor& want);

// `module` with main returning its outputs followed by `extra` (nodes of its main).
IRModule WithExtraOutputs(const IRModule& module, const std::vector<Expr>& extra);

// What runs the modules of a check. kAuto: the interpreter (Kiln's reference semantics, so a
// pass's drift is not mixed with code generation's, which the native summary and the kernel
// precision show), native code for a model over the interpreter's step budget; kInterpreter:
// always interpreted (over the budget is an error); kNative: every module, the reference too,
// JIT-compiled for this machine.
enum class DriftBackend { kAuto, kInterpreter, kNative };
// "auto" (or empty), "interp", "native".
bool ParseDriftBackend(std::string_view name, DriftBackend* backend);

class DriftChecker {
 public:
  // Runs `imported` once on inputs drawn from `seed` (floats uniform in [-1, 1), integers in
  // [0, 4), bools 0/1), or on `inputs` when given (a model whose integer inputs must be valid
  // shapes or indices): the reference outputs. `base` supplies the limits, the cancellation
  // and the import options of the compile being checked; its pipeline is not used.
  static absl::StatusOr<std::unique_ptr<DriftChecker>> Create(
      const IRModule& imported, uint64_t seed, const CompileOptions& base,
      std::vector<loop::HostTensor> inputs = {}, DriftBackend backend = DriftBackend::kAuto);

  // The module after a graph pass, against the reference.
  absl::StatusOr<DriftReport> CheckGraphModule(const IRModule& snapshot) const;
  // The loop module after a loop pass of the compile whose graph pipeline ended in
  // `final_graph`: that module is lowered once here (as the compile did; its constants and
  // signature), and the snapshot runs in place of the lowered module, interpreted (or compiled
  // for this machine, for a model over the interpreter's budget).
  absl::StatusOr<DriftReport> CheckLoopModule(const IRModule& snapshot, const IRModule& final_graph);
  // A finished compile's native code (compiled for this machine), against the reference.
  absl::StatusOr<DriftReport> CheckNative(const CompileResult& compiled) const;

  // Which kernels of a finished compile lose precision in native code for this machine (with
  // `fast_math` as the compile asked): every kernel call of its optimized main runs isolated,
  // on the reference's values of its arguments, and its result is compared with the
  // reference's (kernel_precision.cc).
  absl::StatusOr<KernelPrecisionReport> CheckKernels(const CompileResult& compiled,
                                                     bool fast_math) const;

  // The layers whose values `after` (a graph pass's output) computes differently from `before`
  // (its input): every node of main whose span names the same layers in both, with a value of
  // the same type, becomes an extra output of both (at most kMaxAttributedLayers of them), both
  // run on the reference inputs, and each such layer is compared. In `after`'s order (inputs
  // first); those over both tolerances are what the pass changed.
  absl::StatusOr<std::vector<LayerDrift>> AttributeLayers(const IRModule& before,
                                                          const IRModule& after) const;

 private:
  DriftChecker() = default;
  absl::StatusOr<DriftReport> Compare(std::string backend,
                                      const std::vector<loop::HostTensor>& outputs) const;
  // Compiles `module` at fusion level 0 through lowering (native code too when the check runs
  // natively), with this check's options or with `options`.
  absl::StatusOr<CompileResult> Lower(const IRModule& module) const {
    return LowerWith(module, options_);
  }
  absl::StatusOr<CompileResult> LowerWith(const IRModule& module,
                                          const CompileOptions& options) const;
  // Runs main on `inputs` (each of main's input types), or on the check's inputs.
  absl::StatusOr<std::vector<loop::HostTensor>> Run(
      const CompileResult& compiled, bool native,
      const std::vector<loop::HostTensor>& inputs) const;
  absl::StatusOr<std::vector<loop::HostTensor>> Run(const CompileResult& compiled,
                                                    bool native) const {
    return Run(compiled, native, inputs_);
  }

  CompileOptions options_;
  // CheckLoopModule's lowering of the final graph module (no loop passes), and that module.
  std::optional<CompileResult> loop_base_;
  IRModule loop_base_graph_;
  std::vector<loop::HostTensor> inputs_;
  std::vector<loop::HostTensor> reference_;
  std::vector<std::string> output_names_;
};

// Follows a compile's passes for a trace: the first graph pass's input is the module as imported
// (the observer must attach ir_before to after-events), so the checker is made there; each graph
// pass that changed the module is checked, and a pass that changed nothing repeats the last
// report. A failure to check (a snapshot the interpreter cannot run, the limits) is returned for
// that pass and the next ones try again.
class DriftTracker {
 public:
  DriftTracker(uint64_t seed, CompileOptions base, std::vector<loop::HostTensor> inputs = {},
               DriftBackend backend = DriftBackend::kAuto)
      : seed_(seed), base_(std::move(base)), inputs_(std::move(inputs)), backend_(backend) {}

  absl::StatusOr<DriftReport> AfterGraphPass(const PassEvent& event);
  // A loop pass's output (after the graph passes were followed here).
  absl::StatusOr<DriftReport> AfterLoopPass(const PassEvent& event);
  absl::StatusOr<DriftReport> AfterNative(const CompileResult& compiled);
  // The compile's kernels, each on its own (DriftChecker::CheckKernels, with the fast-math of
  // the compile's codegen options).
  absl::StatusOr<KernelPrecisionReport> KernelPrecision(const CompileResult& compiled);
  // For the pass of `event` (carrying ir_before and ir_after): its layers over the tolerances.
  absl::StatusOr<std::vector<LayerDrift>> Attribute(const PassEvent& event, double rtol,
                                                    double atol);

 private:
  absl::Status EnsureChecker(const IRModule& imported);

  uint64_t seed_;
  CompileOptions base_;
  std::vector<loop::HostTensor> inputs_;  // empty: seeded
  DriftBackend backend_;
  std::unique_ptr<DriftChecker> checker_;
  absl::Status creation_;  // why the checker could not be made
  bool tried_ = false;
  std::optional<DriftReport> last_;
  IRModule last_graph_;  // the module after the last graph pass seen
  std::optional<DriftReport> last_loop_;
};

// One pass's drift, as CheckEveryPass reports it.
struct PassDrift {
  int64_t index = 0;  // the pass's number in the compile's events
  std::string pass;
  std::string stage;  // "graph" or "loop"
  absl::StatusOr<DriftReport> report = absl::UnknownError("not checked");
  // At the first pass whose drift passes the tolerance: the layers it changed past it (or why
  // they could not be compared); empty elsewhere.
  std::vector<LayerDrift> layers;
  absl::Status layers_status;
};

// Adds to `options` an instrument that checks every graph pass of the compile, and every loop
// pass with `loop_passes` (a DriftTracker on `inputs`, or on inputs drawn from `seed` when
// empty), and calls `on_pass` with each one's drift, attributing to layers the first graph pass
// over (rtol, atol): the numerics check for tools, which see no pass events. Returns the tracker
// (the native code is checked with AfterNative once the compile is done).
std::shared_ptr<DriftTracker> CheckEveryPass(
    CompileOptions* options, uint64_t seed, std::vector<loop::HostTensor> inputs, double rtol,
    double atol, bool loop_passes, std::function<void(const PassDrift&)> on_pass,
    DriftBackend backend = DriftBackend::kAuto);

}  // namespace kiln::driver
