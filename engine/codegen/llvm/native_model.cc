// NativeModel: LLJIT loading of a model object, and runs on host tensors.
#include "engine/codegen/llvm/native_model.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/target.h"
#include "engine/runtime/kiln_runtime.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

namespace kiln::codegen {
namespace {

struct AlignedFree {
  void operator()(void* pointer) const { std::free(pointer); }
};
using AlignedBuffer = std::unique_ptr<void, AlignedFree>;

AlignedBuffer AllocateAligned(int64_t bytes) {
  size_t rounded = static_cast<size_t>((std::max<int64_t>(bytes, 1) + KILN_ALIGNMENT - 1) /
                                       KILN_ALIGNMENT * KILN_ALIGNMENT);
  return AlignedBuffer(std::aligned_alloc(KILN_ALIGNMENT, rounded));
}

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

struct NativeModel::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int32_t (*run)(void* const*, void* const*, void*) = nullptr;
  int64_t workspace_bytes = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  const kiln_tensor_info* (*input_info)(int32_t) = nullptr;
  const kiln_tensor_info* (*output_info)(int32_t) = nullptr;
};

NativeModel::NativeModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NativeModel::~NativeModel() = default;

absl::StatusOr<std::unique_ptr<NativeModel>> NativeModel::Load(const NativeModule& native) {
  InitializeLlvmTargets();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return absl::InternalError(absl::StrCat("LLJIT: ", ErrorText(jit.takeError())));
  llvm::orc::JITDylib& library = (*jit)->getMainJITDylib();
  // libkiln_rt is linked into this binary, not exported dynamically: define its symbols.
  llvm::orc::SymbolMap runtime;
  auto define = [&](const char* name, auto* function) {
    runtime[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                              llvm::JITSymbolFlags::Exported};
  };
  define("kiln_rt_parallel_for", &kiln_rt_parallel_for);
  define("kiln_rt_ipow", &kiln_rt_ipow);
  define("kiln_rt_alloc", &kiln_rt_alloc);
  define("kiln_rt_free", &kiln_rt_free);
  if (llvm::Error error = library.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    return absl::InternalError(ErrorText(std::move(error)));
  }
  if (llvm::Error error = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(native.object, native.symbol_prefix))) {
    return absl::InternalError(absl::StrCat("loading the object: ", ErrorText(std::move(error))));
  }
  auto impl = std::make_unique<Impl>();
  auto lookup = [&](const std::string& suffix) -> absl::StatusOr<llvm::orc::ExecutorAddr> {
    auto address = (*jit)->lookup(absl::StrCat(native.symbol_prefix, suffix));
    if (!address) {
      return absl::InternalError(absl::StrCat("resolving ", native.symbol_prefix, suffix, ": ",
                                              ErrorText(address.takeError())));
    }
    return *address;
  };
  absl::StatusOr<llvm::orc::ExecutorAddr> run = lookup("_run");
  if (!run.ok()) return run.status();
  absl::StatusOr<llvm::orc::ExecutorAddr> workspace = lookup("_workspace_size");
  if (!workspace.ok()) return workspace.status();
  absl::StatusOr<llvm::orc::ExecutorAddr> inputs = lookup("_num_inputs");
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<llvm::orc::ExecutorAddr> outputs = lookup("_num_outputs");
  if (!outputs.ok()) return outputs.status();
  absl::StatusOr<llvm::orc::ExecutorAddr> input_info = lookup("_input_info");
  if (!input_info.ok()) return input_info.status();
  absl::StatusOr<llvm::orc::ExecutorAddr> output_info = lookup("_output_info");
  if (!output_info.ok()) return output_info.status();
  impl->run = run->toPtr<int32_t (*)(void* const*, void* const*, void*)>();
  impl->workspace_bytes = workspace->toPtr<int64_t (*)()>()();
  impl->num_inputs = inputs->toPtr<int32_t (*)()>()();
  impl->num_outputs = outputs->toPtr<int32_t (*)()>()();
  impl->input_info = input_info->toPtr<const kiln_tensor_info* (*)(int32_t)>();
  impl->output_info = output_info->toPtr<const kiln_tensor_info* (*)(int32_t)>();
  impl->jit = std::move(*jit);
  return std::unique_ptr<NativeModel>(new NativeModel(std::move(impl)));
}

int32_t NativeModel::RunRaw(void* const* inputs, void* const* outputs, void* workspace) const {
  return impl_->run(inputs, outputs, workspace);
}
int64_t NativeModel::workspace_bytes() const { return impl_->workspace_bytes; }
int NativeModel::num_inputs() const { return impl_->num_inputs; }
int NativeModel::num_outputs() const { return impl_->num_outputs; }

absl::Status NativeModel::Run(const std::vector<loop::HostTensor*>& inputs,
                              const std::vector<loop::HostTensor*>& outputs) {
  if (static_cast<int>(inputs.size()) != impl_->num_inputs ||
      static_cast<int>(outputs.size()) != impl_->num_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model takes ", impl_->num_inputs, " inputs and ", impl_->num_outputs,
        " outputs; got ", inputs.size(), " and ", outputs.size()));
  }
  auto check = [](const kiln_tensor_info* info, const loop::HostTensor& tensor) -> absl::Status {
    if (static_cast<int>(tensor.dtype) != info->dtype ||
        static_cast<int64_t>(tensor.bytes.size()) != info->bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", info->name, ": the model wants ", DataTypeName(static_cast<DataType>(info->dtype)),
          " of ", info->bytes, " bytes, got ", DataTypeName(tensor.dtype), " of ",
          tensor.bytes.size(), " bytes"));
    }
    return absl::OkStatus();
  };
  std::vector<AlignedBuffer> buffers;
  std::vector<void*> input_pointers, output_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (absl::Status s = check(impl_->input_info(static_cast<int32_t>(i)), *inputs[i]); !s.ok()) return s;
    buffers.push_back(AllocateAligned(static_cast<int64_t>(inputs[i]->bytes.size())));
    if (buffers.back() == nullptr) return absl::ResourceExhaustedError("allocating an input buffer");
    if (!inputs[i]->bytes.empty()) std::memcpy(buffers.back().get(), inputs[i]->bytes.data(), inputs[i]->bytes.size());
    input_pointers.push_back(buffers.back().get());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (absl::Status s = check(impl_->output_info(static_cast<int32_t>(i)), *outputs[i]); !s.ok()) return s;
    buffers.push_back(AllocateAligned(static_cast<int64_t>(outputs[i]->bytes.size())));
    if (buffers.back() == nullptr) return absl::ResourceExhaustedError("allocating an output buffer");
    output_pointers.push_back(buffers.back().get());
  }
  AlignedBuffer workspace = AllocateAligned(impl_->workspace_bytes);
  if (workspace == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("allocating the model's workspace of ", impl_->workspace_bytes, " bytes"));
  }
  int32_t status = impl_->run(input_pointers.data(), output_pointers.data(), workspace.get());
  if (status != KILN_OK) {
    return absl::InternalError(absl::StrCat("the model's run returned error ", status));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i]->bytes.empty()) std::memcpy(outputs[i]->bytes.data(), output_pointers[i], outputs[i]->bytes.size());
  }
  return absl::OkStatus();
}

}  // namespace kiln::codegen
