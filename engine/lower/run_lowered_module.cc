// Argument binding for the lowered main.
#include "engine/lower/run_lowered_module.h"

#include <algorithm>
#include <cstring>
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

// "float32[1, S, 16]": a tensor of `dims` (SymbolicSignature's encoding).
std::string SignatureString(const SymbolicSignature& signature, DataType dtype,
                            const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) {
    parts.push_back(d >= 0 ? absl::StrCat(d) : signature.symbols[-1 - d]);
  }
  return absl::StrCat(DataTypeName(dtype), "[", absl::StrJoin(parts, ", "), "]");
}

// `coefficient` x the values of `symbols` x `element_bytes`, or nullopt past INT64_MAX.
std::optional<int64_t> BytesOf(int64_t coefficient, const std::vector<int>& symbols,
                               const std::vector<int64_t>& values, int64_t element_bytes) {
  int64_t bytes = element_bytes;
  if (__builtin_mul_overflow(bytes, coefficient, &bytes)) return std::nullopt;
  for (int k : symbols) {
    if (__builtin_mul_overflow(bytes, values[k], &bytes)) return std::nullopt;
  }
  return bytes;
}

// A model over symbolic dims (SymbolicSignature): the symbols bound from the inputs' shapes, the
// outputs and the values between kernels allocated at their sizes for this run (charged to the
// interpreter's allocation limit first), then main.
absl::Status RunSymbolic(const LoweredModule& lowered, const std::vector<loop::HostTensor*>& inputs,
                         const std::vector<loop::HostTensor*>& outputs,
                         const loop::InterpreterOptions& options) {
  const loop::PrimFuncNode* main = Main(lowered);
  const SymbolicSignature& signature = *lowered.symbolic;
  std::vector<int64_t> values(signature.symbols.size(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const loop::Buffer& buffer = main->param_buffer(i);
    const std::vector<int64_t>& want = signature.input_dims[i];
    const std::vector<int64_t>& shape = inputs[i]->shape;
    bool fits = inputs[i]->dtype == buffer->dtype && shape.size() == want.size();
    for (size_t d = 0; fits && d < shape.size(); ++d) {
      if (want[d] >= 0) {
        fits = shape[d] == want[d];
        continue;
      }
      int64_t& value = values[-1 - want[d]];
      fits = shape[d] >= 0 && shape[d] <= KILN_MAX_SYMBOL_VALUE && (value < 0 || value == shape[d]);
      value = shape[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", buffer->name, ": the model wants ",
          SignatureString(signature, buffer->dtype, want),
          " (each symbol the same in every input, at most ", KILN_MAX_SYMBOL_VALUE, "), got ",
          DataTypeName(inputs[i]->dtype), "[",
          absl::StrJoin(shape, ", "), "]"));
    }
  }
  for (const SymbolicSignature::Equality& equality : signature.equalities) {
    std::optional<int64_t> left =
        BytesOf(equality.left.coefficient, equality.left.symbols, values, 1);
    std::optional<int64_t> right =
        BytesOf(equality.right.coefficient, equality.right.symbols, values, 1);
    if (!left || !right || *left != *right) {
      std::vector<std::string> bound;
      for (size_t k = 0; k < values.size(); ++k) {
        bound.push_back(absl::StrCat(signature.symbols[k], " = ", values[k]));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "the inputs' shapes (", absl::StrJoin(bound, ", "),
          ") break what the model's types assume at ", equality.what));
    }
  }
  int64_t total = 0;
  auto charge = [&](std::optional<int64_t> bytes, const std::string& what) -> absl::Status {
    if (!bytes || __builtin_add_overflow(total, *bytes, &total) ||
        total > options.max_allocation_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, " of this run does not fit the interpreter's ", options.max_allocation_bytes,
          " bytes of storage"));
    }
    return absl::OkStatus();
  };
  std::vector<std::vector<int64_t>> output_shapes;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const loop::Buffer& buffer = main->param_buffer(inputs.size() + o);
    std::vector<int64_t> shape;
    std::optional<int64_t> bytes = DataTypeBytes(buffer->dtype);
    for (int64_t d : signature.output_dims[o]) {
      shape.push_back(d >= 0 ? d : values[-1 - d]);
      if (bytes) bytes = BytesOf(*bytes, {}, values, shape.back());
    }
    KILN_RETURN_IF_ERROR(charge(bytes, absl::StrCat("output ", buffer->name)));
    output_shapes.push_back(std::move(shape));
  }
  std::vector<loop::HostTensor> dynamic;
  for (const SymbolicSignature::DynamicBuffer& buffer : signature.dynamic) {
    std::optional<int64_t> bytes = BytesOf(buffer.elements.coefficient, buffer.elements.symbols,
                                           values, DataTypeBytes(buffer.dtype));
    KILN_RETURN_IF_ERROR(charge(bytes, "a value between kernels"));
    dynamic.push_back(loop::HostTensor::Zeros(buffer.dtype, {*bytes / DataTypeBytes(buffer.dtype)}));
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    *outputs[o] = loop::HostTensor::Zeros(main->param_buffer(inputs.size() + o)->dtype,
                                          output_shapes[o]);
  }
  loop::HostTensor symbols = loop::HostTensor::Zeros(DataType::kInt64,
                                                     {static_cast<int64_t>(values.size())});
  std::memcpy(symbols.bytes.data(), values.data(), values.size() * sizeof(int64_t));
  std::vector<loop::HostTensor> constants;
  constants.reserve(lowered.constants.size());
  for (const auto& [buffer, data] : lowered.constants) {
    constants.push_back(loop::HostTensor::FromTensorData(data));
  }
  std::vector<loop::HostTensor*> args(inputs.begin(), inputs.end());
  args.insert(args.end(), outputs.begin(), outputs.end());
  for (loop::HostTensor& constant : constants) args.push_back(&constant);
  for (loop::HostTensor& value : dynamic) args.push_back(&value);
  args.push_back(&symbols);
  return loop::RunModuleFunction(lowered.module, "main", args, options);
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
  if (lowered.symbolic) return RunSymbolic(lowered, inputs, outputs, options);
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
    // A symbolic model's tensors: each symbol 1 until a run's inputs say otherwise.
    std::vector<int64_t> shape = param->shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    tensors.push_back(loop::HostTensor::Zeros(param->dtype, shape));
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
