// Running the lowered main with the interpreter.
#include "engine/driver/run_model.h"

#include "engine/lower/run_lowered_module.h"

namespace kiln::driver {

ModelTensors MakeModelTensors(const CompileResult& compiled) {
  if (!compiled.lowered) return {};
  return {lower::MakeInputTensors(*compiled.lowered), lower::MakeOutputTensors(*compiled.lowered)};
}

absl::Status RunModel(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                      const std::vector<loop::HostTensor*>& outputs,
                      const loop::InterpreterOptions& options) {
  if (!compiled.lowered) return absl::FailedPreconditionError("the compile was not lowered");
  return lower::RunLoweredModule(*compiled.lowered, inputs, outputs, options);
}

}  // namespace kiln::driver
