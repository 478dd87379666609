// Running a lowered model on host tensors with the loop-IR interpreter: the
// reference result tools and tests compare against. Binds main's inputs,
// outputs and the constant table (the weights) in main's parameter order.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"
#include "engine/lower/lower_module.h"

namespace kiln::lower {

// Runs "main" of `lowered.module`: `inputs` and `outputs` in main's order,
// each of the parameter's dtype and element count (outputs are overwritten).
// A wrong count, dtype or size is an InvalidArgument error naming the tensor.
absl::Status RunLoweredModule(const LoweredModule& lowered,
                              const std::vector<loop::HostTensor*>& inputs,
                              const std::vector<loop::HostTensor*>& outputs,
                              const loop::InterpreterOptions& options = {});

// The input tensors main reads and the output tensors it writes, zero-filled
// with the right dtypes and shapes (for callers that do not preallocate).
std::vector<loop::HostTensor> MakeInputTensors(const LoweredModule& lowered);
std::vector<loop::HostTensor> MakeOutputTensors(const LoweredModule& lowered);

}  // namespace kiln::lower
