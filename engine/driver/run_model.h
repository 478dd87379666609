// Running a compiled model on host tensors: main of the lowered module with the loop-IR
// interpreter (Kiln's reference semantics), or the native object the compile produced, loaded
// with LLJIT. The one way tools run what they compiled.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/codegen/llvm/native_model.h"
#include "engine/driver/driver.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"

namespace kiln::driver {

// Main's inputs and outputs, zero-filled, with their dtypes and shapes (empty
// when the compile was not lowered).
struct ModelTensors {
  std::vector<loop::HostTensor> inputs;
  std::vector<loop::HostTensor> outputs;
  // The graph's names for them (main's parameter buffers).
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};
ModelTensors MakeModelTensors(const CompileResult& compiled);
// The same from a loaded model's signature queries (a shared library holds no loop IR).
ModelTensors MakeModelTensors(const codegen::NativeModel& model);

enum class Backend { kNative, kInterpreter };
const char* BackendName(Backend backend);  // "native", "interp"
bool ParseBackend(std::string_view name, Backend* backend);

// Code generation for this machine (the host target), to run what is compiled in-process.
codegen::CodegenOptions HostCodegenOptions();

// Runs main with the interpreter: `inputs` and `outputs` in main's order, each of its parameter's
// dtype and shape (a mismatch is an InvalidArgument error naming it).
absl::Status RunModel(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                      const std::vector<loop::HostTensor*>& outputs,
                      const loop::InterpreterOptions& options = {});

// The compile's native object loaded into this process (FailedPrecondition when the compile did
// not generate code for the host).
absl::StatusOr<std::unique_ptr<codegen::NativeModel>> LoadNative(const CompileResult& compiled);

// Loads and runs the native object once (same contract as RunModel).
absl::Status RunNative(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                       const std::vector<loop::HostTensor*>& outputs);

}  // namespace kiln::driver
