// Lowering a whole optimized graph module to loop IR: every distinct
// Primitive function becomes a kernel PrimFunc, and the graph `main` becomes
// a PrimFunc "main" that calls the kernels (CallKernel) on planned buffers.
//
// Main's parameters: the graph main's inputs (tuple inputs flattened), then
// its outputs (a tuple result flattened), then the constants it needs (the
// weights: graph constants in main and non-scalar constants inside fused
// functions), whose data LoweredModule::constants carries for the runner to
// bind. Values between kernels live in one workspace Allocate per dtype; each
// is a buffer viewing it at a planned offset, and values whose lifetimes do
// not overlap share space (memory_plan.h). A value that becomes a result is
// written straight into the output parameter. A call whose function only
// reinterprets its input's shape (an op marked non_computational, such as
// reshape, squeeze, expand_dims) is no kernel at all: its result is a view of
// the input's storage. A result that is an input, a constant, or another
// result's storage is copied by a small copy kernel at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/loop/buffer.h"
#include "engine/lower/lower_options.h"
#include "engine/lower/sample_batch.h"
#include "engine/te/schedule.h"

namespace kiln::lower {

struct LoweredKernel {
  // The kernel's name in the lowered module: the fused function's `name`
  // (LabelOps) or fused_<index>, with _1, _2, ... appended to repeats in order
  // of first call.
  std::string name;
  // The fused function's own name, before repeats were told apart.
  std::string function_name;
  // Positions, among the calls of the optimized graph main in evaluation
  // order (post-order, arguments left to right; 0-based), of the calls this
  // kernel runs for. Empty for a copy kernel.
  std::vector<int> call_indices;
  // The fused function's span: the layers the kernel computes.
  Span span;
  // The default schedule and the tensors bound to the kernel's params (to
  // lower the snapshots of the schedule record the same way).
  te::Schedule schedule;
  std::vector<te::Tensor> schedule_params;
};

// An output of main whose extent along `axis` only a run decides, compiled at its static bound:
// after a run, main's scalar int64 output `length` holds how many entries along the axis it
// filled (onnx_frontend's kBoundedOutputsAttr; driver/bounded_outputs.h cuts them).
struct BoundedOutput {
  int output;
  int axis;
  int length;
};

// A model whose inputs have symbolic dims that are not a per-sample batch (a sequence length):
// compiled once for every value of its symbols. Main then takes, after the constants, one
// buffer per value of run-time size between kernels (`dynamic`, allocated by the caller for the
// run) and last the symbols' values (int64, in `symbols` order), read by the kernels too.
struct SymbolicSignature {
  // A dim of an input or output: its static extent (>= 0), or -1 - k for symbol k.
  static int64_t SymbolDim(int k) { return -1 - k; }
  std::vector<std::string> symbols;
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<std::vector<int64_t>> output_dims;
  // `coefficient` times the value of each listed symbol (repeats multiply again).
  struct Monomial {
    int64_t coefficient = 1;
    std::vector<int> symbols;
  };
  // A value between kernels of run-time size: `elements` of `dtype`.
  struct DynamicBuffer {
    DataType dtype;
    Monomial elements;
  };
  std::vector<DynamicBuffer> dynamic;
  // What the type relations assumed of the symbols (x[N, 3] + y[4, 3] typed as (4, 3): N = 4),
  // checked when a run binds them; `what` names the graph call for the error.
  struct Equality {
    Monomial left, right;
    std::string what;
  };
  std::vector<Equality> equalities;
};

struct LoweredModule {
  // The kernels in order of first call, then "main".
  IRModule module;
  // One per kernel PrimFunc of `module`, in the same order.
  std::vector<LoweredKernel> kernels;
  // Main's params: num_inputs inputs, num_outputs outputs, then one per entry
  // of `constants`.
  int num_inputs = 0;
  int num_outputs = 0;
  std::vector<std::pair<loop::Buffer, TensorData>> constants;
  // Bytes of the workspace Allocates of main (also main's `workspace_bytes`
  // attribute).
  int64_t workspace_bytes = 0;
  // Set when main computes one sample of a model with a symbolic batch dim (sample_batch.h):
  // code generation then exports `<prefix>_run_dynamic`, which runs main once per sample.
  std::optional<SampleBatch> sample_batch;
  // Outputs (indices among main's outputs) compiled at a static bound (none for most models).
  std::vector<BoundedOutput> bounded_outputs;
  // Set for a model compiled over symbolic dims (see SymbolicSignature): main's params are then
  // the inputs, outputs, constants, one per `symbolic->dynamic`, and the symbols' values.
  std::optional<SymbolicSignature> symbolic;
};

// `optimized` must have a graph function "main" calling fused (Primitive)
// functions, typed with static shapes or with symbolic dims each named by a
// symbol of main's inputs (SymbolicSignature): the default pipelines' output. Other
// operator calls left in main are lowered as single-op kernels. Unsupported
// input (symbolic shapes, calls of global functions, control flow, an op
// without a compute definition) is an error naming the node and its span.
absl::StatusOr<LoweredModule> LowerModule(const IRModule& optimized,
                                          const LowerOptions& options = {});

}  // namespace kiln::lower
