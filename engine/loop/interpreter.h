// The loop-IR interpreter: runs a PrimFunc (or a module's entry function and
// the kernels it calls) on host tensors. It is the reference semantics of the
// loop dialect, used by constant folding, tests, schedule-step verification
// and the ONNX conformance runner. Value semantics per dtype are documented
// in interpreter_values.h.
//
// A function is compiled once per run into a tree of dtype-specialized nodes
// (variables resolved to frame slots, buffers to storage slots), then
// executed. Everything a program can get wrong is an error status, never a
// crash: out-of-bounds accesses (naming the buffer and index), integer
// division by zero (naming the expression), exceeding the step budget or the
// memory limit, cancellation. Parallel, vectorized and unrolled loops run
// serially; vectors (up to 64 lanes) are evaluated lane by lane. An innermost
// loop whose body is one store of arithmetic on loads runs 128 iterations per
// node call (same results and errors as one at a time), which is what makes
// folding ResNet-50's weights take ~5 ns per element.
//
// Two deliberate leniencies: Select evaluates only the operand it selects and
// `&&`/`||` on bool short-circuit, so a guarded out-of-bounds load (padding
// written as `select(i >= 1, A[i - 1], 0)`) is not an error here; code
// generators must not evaluate such loads speculatively either.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/ir/module.h"
#include "engine/ir/tensor_data.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/prim_func.h"
#include "engine/support/compile_budget.h"

namespace kiln::loop {

struct InterpreterOptions {
  // Statements, loop iterations and expression nodes evaluated before the run
  // stops with ResourceExhausted, so a huge or hostile program cannot hang a
  // server. A step takes a few nanoseconds: the default allows seconds of work.
  int64_t max_steps = 2'000'000'000;
  // Bytes of Allocate storage live at once (across kernel calls); an
  // Allocate that would exceed it fails with ResourceExhausted before
  // allocating.
  int64_t max_allocation_bytes = int64_t{1} << 30;
  // Polled about every `cancellation_check_interval` steps; returning true
  // stops the run with Cancelled. May be empty.
  std::function<bool()> is_cancelled;
  int64_t cancellation_check_interval = int64_t{1} << 16;
  // The compile this run belongs to (constant folding), or null: its steps
  // and Allocate bytes are charged to it too, and its cancellation polled.
  CompileBudget* budget = nullptr;
};

// Runs `func` with `args[i]` as the storage of `func->params[i]`. Each
// argument's dtype and element count must match the parameter's buffer.
// Arguments are read and written in place (several may be the same tensor).
// A CallKernel statement is an error here (there is no module to look the
// callee up in); use RunModuleFunction.
absl::Status RunPrimFunc(const PrimFunc& func, const std::vector<HostTensor*>& args,
                         const InterpreterOptions& options = {});

// Runs `func` with the constants `inputs` as its first parameters, read in
// place (folded weights are large: copying them would cost more than the
// folding), and `outputs` as the rest. A function that stores to one of its
// inputs is an error.
absl::Status RunPrimFuncOnConstants(const PrimFunc& func, const std::vector<TensorData>& inputs,
                                    const std::vector<HostTensor*>& outputs,
                                    const InterpreterOptions& options = {});

// Runs the PrimFunc `name` of `module`. CallKernel statements run the callee
// PrimFunc of the module on the caller's buffers: a buffer viewing part of a
// larger storage (elem_offset) passes just that view.
absl::Status RunModuleFunction(const IRModule& module, std::string_view name,
                               const std::vector<HostTensor*>& args,
                               const InterpreterOptions& options = {});

}  // namespace kiln::loop
