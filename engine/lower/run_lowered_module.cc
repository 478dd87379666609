// Argument binding for the lowered main.
#include "engine/lower/run_lowered_module.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/prim_func.h"
#include "engine/loop/string_elements.h"
#include "engine/runtime/kiln_runtime.h"
#include "engine/support/status_macros.h"

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

namespace {

absl::Status RunMain(const LoweredModule& lowered, const std::vector<loop::HostTensor*>& inputs,
                     const std::vector<loop::HostTensor*>& outputs,
                     const loop::InterpreterOptions& options) {
  const loop::PrimFuncNode* main = Main(lowered);
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
  if (!loop::ModuleTouchesStrings(lowered.module)) {
    return loop::RunModuleFunction(lowered.module, "main", args, options);
  }
  // As native code's entry does (kiln_runtime.h): the run's strings live in an arena until the
  // string outputs hold copies of their own.
  void* enclosing = kiln_rt_strings_begin();
  absl::Status status = loop::RunModuleFunction(lowered.module, "main", args, options);
  for (loop::HostTensor* output : outputs) {
    if (output->dtype != DataType::kString) continue;
    if (!status.ok()) {  // the words may point into the arena: leave none dangling
      *output = loop::HostTensor::Zeros(DataType::kString, output->shape);
      continue;
    }
    if (kiln_rt_strings_keep(output->bytes.data(), output->NumElements()) != KILN_OK) {
      status = absl::ResourceExhaustedError("copying the string outputs");
    }
    output->AdoptMallocedStrings();
  }
  if (kiln_rt_strings_end(enclosing) != KILN_OK && status.ok()) {
    status = absl::ResourceExhaustedError("the run's strings did not fit in memory");
  }
  return status;
}

// A model compiled per sample: main on each sample's slice of the batched inputs, the outputs
// resized to the batch (the interpreter's side of kiln_rt_run_per_sample). An empty batch still
// runs one sample of zeros, for the outputs every sample shares.
absl::Status RunPerSample(const LoweredModule& lowered, const std::vector<loop::HostTensor*>& inputs,
                          const std::vector<loop::HostTensor*>& outputs,
                          const loop::InterpreterOptions& options) {
  const loop::PrimFuncNode* main = Main(lowered);
  const SampleBatch& batch = *lowered.sample_batch;
  std::optional<int64_t> count;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const loop::Buffer& buffer = main->param_buffer(i);
    const std::vector<int64_t>& shape = inputs[i]->shape;
    bool fits = shape.size() == buffer->shape.size() && inputs[i]->dtype == buffer->dtype;
    for (size_t d = batch.inputs[i] ? 1 : 0; fits && d < shape.size(); ++d) {
      fits = shape[d] == buffer->shape[d];
    }
    if (fits && batch.inputs[i]) {
      fits = shape[0] >= 0 && (!count || *count == shape[0]);
      count = shape[0];
    }
    if (!fits) {
      std::vector<std::string> want;
      for (size_t d = 0; d < buffer->shape.size(); ++d) {
        want.push_back(d == 0 && batch.inputs[i] ? batch.symbol : absl::StrCat(buffer->shape[d]));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", buffer->name, ": the model wants ", DataTypeName(buffer->dtype), "[",
          absl::StrJoin(want, ", "), "] (", batch.symbol, " the same for every input), got ",
          DataTypeName(inputs[i]->dtype), "[", absl::StrJoin(shape, ", "), "]"));
    }
  }
  const int64_t samples = count.value_or(0);
  auto slice_bytes = [](const loop::Buffer& buffer) {
    return static_cast<size_t>(buffer->NumElements() * DataTypeBytes(buffer->dtype));
  };
  for (size_t o = 0; o < outputs.size(); ++o) {
    const loop::Buffer& buffer = main->param_buffer(inputs.size() + o);
    std::vector<int64_t> shape = buffer->shape;
    if (batch.outputs[o]) shape[0] = samples;
    *outputs[o] = loop::HostTensor::Zeros(buffer->dtype, shape);
  }
  std::vector<loop::HostTensor> sample_inputs = MakeInputTensors(lowered);
  std::vector<loop::HostTensor> sample_outputs = MakeOutputTensors(lowered);
  std::vector<loop::HostTensor*> in, out;
  for (loop::HostTensor& tensor : sample_inputs) in.push_back(&tensor);
  for (loop::HostTensor& tensor : sample_outputs) out.push_back(&tensor);
  // An empty batch runs one sample of zeros only for the outputs every sample shares.
  bool shared_outputs = false;
  for (bool batched : batch.outputs) shared_outputs = shared_outputs || !batched;
  const int64_t runs = samples == 0 ? (shared_outputs ? 1 : 0) : samples;
  for (int64_t n = 0; n < runs; ++n) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      size_t bytes = slice_bytes(main->param_buffer(i));
      if (!batch.inputs[i]) {
        sample_inputs[i].bytes = inputs[i]->bytes;
      } else if (samples > 0) {
        sample_inputs[i].bytes.assign(inputs[i]->bytes, static_cast<size_t>(n) * bytes, bytes);
      }
    }
    KILN_RETURN_IF_ERROR(RunMain(lowered, in, out, options));
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (!batch.outputs[o]) {
        outputs[o]->bytes = sample_outputs[o].bytes;
      } else if (samples > 0) {
        size_t bytes = slice_bytes(main->param_buffer(inputs.size() + o));
        outputs[o]->bytes.replace(static_cast<size_t>(n) * bytes, bytes, sample_outputs[o].bytes);
      }
    }
  }
  return absl::OkStatus();
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
  if (lowered.sample_batch) return RunPerSample(lowered, inputs, outputs, options);
  return RunMain(lowered, inputs, outputs, options);
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
