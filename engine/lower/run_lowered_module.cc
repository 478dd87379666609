// Argument binding for the lowered main.
#include "engine/lower/run_lowered_module.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/prim_func.h"

namespace kiln::lower {
namespace {

const loop::PrimFuncNode* Main(const LoweredModule& lowered) {
  if (!lowered.module) return nullptr;
  BaseFunc main = lowered.module->Lookup("main");
  return main ? main.as<loop::PrimFuncNode>() : nullptr;
}

absl::Status CheckTensor(const loop::HostTensor& tensor, const loop::Buffer& param,
                         const char* role) {
  if (tensor.dtype == param->dtype && tensor.shape == param->shape) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      role, " '", param->name, "' expects ", DataTypeName(param->dtype), "[",
      absl::StrJoin(param->shape, ", "), "], got ", DataTypeName(tensor.dtype), "[",
      absl::StrJoin(tensor.shape, ", "), "]"));
}

}  // namespace

absl::Status RunLoweredModule(const LoweredModule& lowered,
                              const std::vector<loop::HostTensor*>& inputs,
                              const std::vector<loop::HostTensor*>& outputs,
                              const loop::InterpreterOptions& options) {
  const loop::PrimFuncNode* main = Main(lowered);
  if (main == nullptr) return absl::InvalidArgumentError("the lowered module has no main");
  if (static_cast<int>(inputs.size()) != lowered.num_inputs ||
      static_cast<int>(outputs.size()) != lowered.num_outputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("main takes ", lowered.num_inputs, " inputs and ", lowered.num_outputs,
                     " outputs, got ", inputs.size(), " and ", outputs.size()));
  }
  std::vector<loop::HostTensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::Status status = CheckTensor(*inputs[i], main->param_buffer(i), "input");
    if (!status.ok()) return status;
    args.push_back(inputs[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    absl::Status status = CheckTensor(*outputs[i], main->param_buffer(inputs.size() + i), "output");
    if (!status.ok()) return status;
    args.push_back(outputs[i]);
  }
  // Kernels never write constants, but the interpreter takes mutable storage.
  std::vector<loop::HostTensor> constants;
  constants.reserve(lowered.constants.size());
  for (const auto& [buffer, data] : lowered.constants) {
    constants.push_back(loop::HostTensor::FromTensorData(data));
  }
  for (loop::HostTensor& constant : constants) args.push_back(&constant);
  return loop::RunModuleFunction(lowered.module, "main", args, options);
}

namespace {

// Zero-filled tensors for main's parameters [first, first + count).
std::vector<loop::HostTensor> ZeroParams(const LoweredModule& lowered, int first, int count) {
  std::vector<loop::HostTensor> tensors;
  const loop::PrimFuncNode* main = Main(lowered);
  if (main == nullptr) return tensors;
  for (int i = first; i < first + count; ++i) {
    const loop::Buffer& param = main->param_buffer(i);
    tensors.push_back(loop::HostTensor::Zeros(param->dtype, param->shape));
  }
  return tensors;
}

}  // namespace

std::vector<loop::HostTensor> MakeInputTensors(const LoweredModule& lowered) {
  return ZeroParams(lowered, 0, lowered.num_inputs);
}

std::vector<loop::HostTensor> MakeOutputTensors(const LoweredModule& lowered) {
  return ZeroParams(lowered, lowered.num_inputs, lowered.num_outputs);
}

}  // namespace kiln::lower
