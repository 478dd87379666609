// Running a compiled model: main of the lowered module on host tensors, with
// the loop-IR interpreter (Kiln's reference semantics). The one way tools run
// what they compiled, so native code joins here once it exists.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "engine/driver/driver.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"

namespace kiln::driver {

// Main's inputs and outputs, zero-filled, with their dtypes and shapes (empty
// when the compile was not lowered).
struct ModelTensors {
  std::vector<loop::HostTensor> inputs;
  std::vector<loop::HostTensor> outputs;
};
ModelTensors MakeModelTensors(const CompileResult& compiled);

// Runs main: `inputs` and `outputs` in main's order, each of its parameter's
// dtype and shape (a mismatch is an InvalidArgument error naming it).
absl::Status RunModel(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                      const std::vector<loop::HostTensor*>& outputs,
                      const loop::InterpreterOptions& options = {});

}  // namespace kiln::driver
