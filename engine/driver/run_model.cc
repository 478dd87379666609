// Running the lowered main with the interpreter or as native code.
#include "engine/driver/run_model.h"

#include "absl/strings/str_cat.h"
#include "engine/loop/prim_func.h"
#include "engine/lower/run_lowered_module.h"

namespace kiln::driver {

ModelTensors MakeModelTensors(const CompileResult& compiled) {
  if (!compiled.lowered) return {};
  const lower::LoweredModule& lowered = *compiled.lowered;
  ModelTensors tensors{lower::MakeInputTensors(lowered), lower::MakeOutputTensors(lowered), {}, {}};
  BaseFunc main = lowered.module->Lookup("main");
  if (const auto* func = main.as<loop::PrimFuncNode>()) {
    for (int i = 0; i < lowered.num_inputs + lowered.num_outputs; ++i) {
      const std::string& name = func->param_buffer(static_cast<size_t>(i))->name;
      (i < lowered.num_inputs ? tensors.input_names : tensors.output_names).push_back(name);
    }
  }
  return tensors;
}

ModelTensors MakeModelTensors(const codegen::NativeModel& model) {
  // A batch known only at run time (-1) is one sample here.
  auto one_sample = [](std::vector<int64_t> shape) {
    for (int64_t& dim : shape) dim = dim < 0 ? 1 : dim;
    return shape;
  };
  ModelTensors tensors;
  for (const codegen::TensorSignature& input : model.inputs()) {
    tensors.inputs.push_back(loop::HostTensor::Zeros(input.dtype, one_sample(input.shape)));
    tensors.input_names.push_back(input.name);
  }
  for (const codegen::TensorSignature& output : model.outputs()) {
    tensors.outputs.push_back(loop::HostTensor::Zeros(output.dtype, one_sample(output.shape)));
    tensors.output_names.push_back(output.name);
  }
  return tensors;
}

absl::Status RunModel(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                      const std::vector<loop::HostTensor*>& outputs,
                      const loop::InterpreterOptions& options) {
  if (!compiled.lowered) return absl::FailedPreconditionError("the compile was not lowered");
  return lower::RunLoweredModule(*compiled.lowered, inputs, outputs, options);
}

const char* BackendName(Backend backend) {
  return backend == Backend::kNative ? "native" : "interp";
}

bool ParseBackend(std::string_view name, Backend* backend) {
  if (name == "native") {
    *backend = Backend::kNative;
  } else if (name == "interp" || name == "interpreter") {
    *backend = Backend::kInterpreter;
  } else {
    return false;
  }
  return true;
}

codegen::CodegenOptions HostCodegenOptions() {
  codegen::CodegenOptions options;
  options.opt_level = 2;
  return options;
}

absl::StatusOr<std::unique_ptr<codegen::NativeModel>> LoadNative(const CompileResult& compiled) {
  if (!compiled.native) {
    return absl::FailedPreconditionError("the compile generated no native code");
  }
  absl::StatusOr<codegen::ResolvedTarget> host = codegen::ResolveTarget({});
  if (!host.ok()) return host.status();
  if (compiled.native->target.triple != host->triple) {
    return absl::FailedPreconditionError(
        absl::StrCat("the native code is for ", compiled.native->target.triple,
                     ", not this machine (", host->triple, ")"));
  }
  return codegen::NativeModel::Load(*compiled.native);
}

absl::Status RunNative(const CompileResult& compiled, const std::vector<loop::HostTensor*>& inputs,
                       const std::vector<loop::HostTensor*>& outputs) {
  absl::StatusOr<std::unique_ptr<codegen::NativeModel>> model = LoadNative(compiled);
  if (!model.ok()) return model.status();
  return (*model)->Run(inputs, outputs);
}

}  // namespace kiln::driver
