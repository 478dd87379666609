// NativeModel: LLJIT loading of a model object, and runs on host tensors.
#include "engine/codegen/llvm/native_model.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

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

TensorSignature Signature(const kiln_tensor_info& info) {
  return {info.name, static_cast<DataType>(info.dtype),
          std::vector<int64_t>(info.shape, info.shape + info.ndim)};
}

}  // namespace

struct NativeModel::Impl {
  // What keeps the code loaded: the JIT, or (shared libraries) nothing, since they are
  // linked -z nodelete.
  std::unique_ptr<llvm::orc::LLJIT> jit;
  // <prefix>_run, or for a model compiled per sample <prefix>_run_dynamic (the other null).
  int32_t (*run)(void* const*, void* const*, void*) = nullptr;
  int32_t (*run_dynamic)(void* const*, const int64_t* const*, void**, int64_t* const*, void*) =
      nullptr;
  int64_t workspace_bytes = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  const kiln_tensor_info* (*input_info)(int32_t) = nullptr;
  const kiln_tensor_info* (*output_info)(int32_t) = nullptr;
  std::vector<std::string> kernel_names;
  // The aligned input, output and workspace buffers of Run, allocated by the first call and
  // reused by every later one: a fresh multi-megabyte allocation per call is a fresh mmap whose
  // pages fault in again inside the kernels (a 14x14 depthwise convolution measured 0.11 ms with
  // its 600 KB workspace newly mapped, 0.014 ms reused).
  std::vector<AlignedBuffer> input_buffers, output_buffers;
  AlignedBuffer workspace;
};

namespace {

// The entry points `<prefix>_*`, found by `lookup` (a name to an address, or an error).
absl::StatusOr<std::unique_ptr<NativeModel::Impl>> BindEntryPoints(
    const std::string& prefix, const std::function<absl::StatusOr<void*>(const std::string&)>& lookup) {
  auto impl = std::make_unique<NativeModel::Impl>();
  std::map<std::string, void*> found;
  absl::StatusOr<void*> run = lookup(absl::StrCat(prefix, "_run"));
  if (run.ok()) {
    impl->run = reinterpret_cast<int32_t (*)(void* const*, void* const*, void*)>(*run);
  } else {
    absl::StatusOr<void*> run_dynamic = lookup(absl::StrCat(prefix, "_run_dynamic"));
    if (!run_dynamic.ok()) return run.status();
    impl->run_dynamic = reinterpret_cast<int32_t (*)(void* const*, const int64_t* const*, void**,
                                                     int64_t* const*, void*)>(*run_dynamic);
  }
  for (const char* suffix : {"_workspace_size", "_num_inputs", "_num_outputs", "_input_info",
                             "_output_info", "_num_kernels", "_kernel_name"}) {
    absl::StatusOr<void*> address = lookup(absl::StrCat(prefix, suffix));
    if (!address.ok()) return address.status();
    found[suffix] = *address;
  }
  impl->workspace_bytes = reinterpret_cast<int64_t (*)()>(found["_workspace_size"])();
  impl->num_inputs = reinterpret_cast<int32_t (*)()>(found["_num_inputs"])();
  impl->num_outputs = reinterpret_cast<int32_t (*)()>(found["_num_outputs"])();
  impl->input_info = reinterpret_cast<const kiln_tensor_info* (*)(int32_t)>(found["_input_info"]);
  impl->output_info = reinterpret_cast<const kiln_tensor_info* (*)(int32_t)>(found["_output_info"]);
  auto kernel_name = reinterpret_cast<const char* (*)(int32_t)>(found["_kernel_name"]);
  int32_t kernels = reinterpret_cast<int32_t (*)()>(found["_num_kernels"])();
  for (int32_t i = 0; i < kernels; ++i) impl->kernel_names.emplace_back(kernel_name(i));
  return impl;
}

}  // namespace

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
  define("kiln_rt_profile_enter", &kiln_rt_profile_enter);
  define("kiln_rt_profile_exit", &kiln_rt_profile_exit);
  define("kiln_rt_run_per_sample", &kiln_rt_run_per_sample);
  define("kiln_rt_run_symbolic", &kiln_rt_run_symbolic);
  define("kiln_rt_strings_begin", &kiln_rt_strings_begin);
  define("kiln_rt_strings_keep", &kiln_rt_strings_keep);
  define("kiln_rt_strings_end", &kiln_rt_strings_end);
  define("kiln_rt_string_from_f32", &kiln_rt_string_from_f32);
  define("kiln_rt_string_from_f64", &kiln_rt_string_from_f64);
  define("kiln_rt_string_from_i64", &kiln_rt_string_from_i64);
  define("kiln_rt_string_from_u64", &kiln_rt_string_from_u64);
  define("kiln_rt_string_to_f32", &kiln_rt_string_to_f32);
  define("kiln_rt_string_to_f64", &kiln_rt_string_to_f64);
  define("kiln_rt_string_to_i64", &kiln_rt_string_to_i64);
  define("kiln_rt_string_to_u64", &kiln_rt_string_to_u64);
  define("kiln_rt_string_upper", &kiln_rt_string_upper);
  define("kiln_rt_string_lower", &kiln_rt_string_lower);
  define("kiln_rt_string_equal", &kiln_rt_string_equal);
  if (llvm::Error error = library.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    return absl::InternalError(ErrorText(std::move(error)));
  }
  // Vector math calls glibc's libmvec (vector_math.h), which Kiln's binaries do not link: the
  // JIT opens it the way the dynamic loader would for a linked program. A host without it
  // only fails for objects that call it, naming the missing symbol.
  auto libmvec = llvm::orc::DynamicLibrarySearchGenerator::Load(
      "libmvec.so.1", (*jit)->getDataLayout().getGlobalPrefix());
  if (libmvec) {
    library.addGenerator(std::move(*libmvec));
  } else {
    llvm::consumeError(libmvec.takeError());
  }
  if (llvm::Error error = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(native.object, native.symbol_prefix))) {
    return absl::InternalError(absl::StrCat("loading the object: ", ErrorText(std::move(error))));
  }
  absl::StatusOr<std::unique_ptr<Impl>> impl =
      BindEntryPoints(native.symbol_prefix, [&](const std::string& name) -> absl::StatusOr<void*> {
        auto address = (*jit)->lookup(name);
        if (!address) {
          return absl::InternalError(
              absl::StrCat("resolving ", name, ": ", ErrorText(address.takeError())));
        }
        return address->toPtr<void*>();
      });
  if (!impl.ok()) return impl.status();
  (*impl)->jit = std::move(*jit);
  return std::unique_ptr<NativeModel>(new NativeModel(*std::move(impl)));
}

absl::StatusOr<std::unique_ptr<NativeModel>> NativeModel::LoadSharedLibrary(
    const std::string& path, const std::string& symbol_prefix) {
  // RTLD_LOCAL: two models (each with its own copy of libkiln_rt) never see each other.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load ", path, ": ", error != nullptr ? error : "unknown error"));
  }
  absl::StatusOr<std::unique_ptr<Impl>> impl =
      BindEntryPoints(symbol_prefix, [&](const std::string& name) -> absl::StatusOr<void*> {
        void* address = dlsym(handle, name.c_str());
        if (address == nullptr) {
          return absl::NotFoundError(absl::StrCat(path, " does not export ", name,
                                                  " (is its symbol prefix ", symbol_prefix, "?)"));
        }
        return address;
      });
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<NativeModel>(new NativeModel(*std::move(impl)));
}

const std::vector<std::string>& NativeModel::kernel_names() const { return impl_->kernel_names; }

std::vector<TensorSignature> NativeModel::inputs() const {
  std::vector<TensorSignature> out;
  for (int i = 0; i < impl_->num_inputs; ++i) out.push_back(Signature(*impl_->input_info(i)));
  return out;
}

std::vector<TensorSignature> NativeModel::outputs() const {
  std::vector<TensorSignature> out;
  for (int i = 0; i < impl_->num_outputs; ++i) out.push_back(Signature(*impl_->output_info(i)));
  return out;
}

int32_t NativeModel::RunRaw(void* const* inputs, void* const* outputs, void* workspace) const {
  if (impl_->run == nullptr) return KILN_ERROR_SHAPE_MISMATCH;  // a per-sample model: RunDynamic
  return impl_->run(inputs, outputs, workspace);
}
bool NativeModel::per_sample() const { return impl_->run_dynamic != nullptr; }
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
  // Allocated once: sizes are fixed by the signature the object exports.
  auto allocate_once = [](std::vector<AlignedBuffer>& buffers, int count,
                          const kiln_tensor_info* (*info)(int32_t)) -> bool {
    for (int i = static_cast<int>(buffers.size()); i < count; ++i) {
      buffers.push_back(AllocateAligned(info(i)->bytes));
      if (buffers.back() == nullptr) {
        buffers.clear();
        return false;
      }
    }
    return true;
  };
  if (impl_->run_dynamic != nullptr) return RunPerSample(inputs, outputs);
  std::vector<void*> input_pointers, output_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (absl::Status s = check(impl_->input_info(static_cast<int32_t>(i)), *inputs[i]); !s.ok()) return s;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (absl::Status s = check(impl_->output_info(static_cast<int32_t>(i)), *outputs[i]); !s.ok()) return s;
  }
  if (!allocate_once(impl_->input_buffers, impl_->num_inputs, impl_->input_info) ||
      !allocate_once(impl_->output_buffers, impl_->num_outputs, impl_->output_info)) {
    return absl::ResourceExhaustedError("allocating the model's input and output buffers");
  }
  if (impl_->workspace == nullptr) impl_->workspace = AllocateAligned(impl_->workspace_bytes);
  if (impl_->workspace == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("allocating the model's workspace of ", impl_->workspace_bytes, " bytes"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->bytes.empty()) {
      std::memcpy(impl_->input_buffers[i].get(), inputs[i]->bytes.data(), inputs[i]->bytes.size());
    }
    input_pointers.push_back(impl_->input_buffers[i].get());
  }
  for (size_t i = 0; i < outputs.size(); ++i) output_pointers.push_back(impl_->output_buffers[i].get());
  int32_t status = impl_->run(input_pointers.data(), output_pointers.data(), impl_->workspace.get());
  if (status != KILN_OK) return RunError(status);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i]->bytes.empty()) std::memcpy(outputs[i]->bytes.data(), output_pointers[i], outputs[i]->bytes.size());
    // The run left strings the caller owns (kiln_runtime.h): the tensor takes them over.
    if (outputs[i]->dtype == DataType::kString) outputs[i]->AdoptMallocedStrings();
  }
  return absl::OkStatus();
}

}  // namespace kiln::codegen

namespace kiln::codegen {

absl::Status NativeModel::RunPerSample(const std::vector<loop::HostTensor*>& inputs,
                                       const std::vector<loop::HostTensor*>& outputs) {
  // Inputs are copied to aligned buffers of this call's sizes; the run allocates the outputs.
  std::vector<AlignedBuffer> input_buffers;
  std::vector<void*> input_pointers;
  std::vector<const int64_t*> input_shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const kiln_tensor_info* info = impl_->input_info(static_cast<int32_t>(i));
    if (static_cast<int>(inputs[i]->dtype) != info->dtype ||
        static_cast<int32_t>(inputs[i]->shape.size()) != info->ndim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", info->name, ": the model wants ", DataTypeName(static_cast<DataType>(info->dtype)),
          " of rank ", info->ndim, ", got ", DataTypeName(inputs[i]->dtype), " of rank ",
          inputs[i]->shape.size()));
    }
    input_buffers.push_back(AllocateAligned(static_cast<int64_t>(inputs[i]->bytes.size())));
    if (input_buffers.back() == nullptr) return absl::ResourceExhaustedError("allocating the inputs");
    if (!inputs[i]->bytes.empty()) {
      std::memcpy(input_buffers.back().get(), inputs[i]->bytes.data(), inputs[i]->bytes.size());
    }
    input_pointers.push_back(input_buffers.back().get());
    input_shapes.push_back(inputs[i]->shape.data());
  }
  if (impl_->workspace == nullptr) impl_->workspace = AllocateAligned(impl_->workspace_bytes);
  if (impl_->workspace == nullptr) return absl::ResourceExhaustedError("allocating the workspace");
  std::vector<void*> output_pointers(outputs.size(), nullptr);
  std::vector<std::vector<int64_t>> output_shapes;
  std::vector<int64_t*> output_shape_pointers;
  for (size_t i = 0; i < outputs.size(); ++i) {
    output_shapes.emplace_back(std::max(impl_->output_info(static_cast<int32_t>(i))->ndim, 1));
    output_shape_pointers.push_back(output_shapes.back().data());
  }
  int32_t status = impl_->run_dynamic(input_pointers.data(), input_shapes.data(),
                                      output_pointers.data(), output_shape_pointers.data(),
                                      impl_->workspace.get());
  if (status != KILN_OK) return RunError(status);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const kiln_tensor_info* info = impl_->output_info(static_cast<int32_t>(i));
    output_shapes[i].resize(static_cast<size_t>(info->ndim));
    *outputs[i] = loop::HostTensor::Zeros(static_cast<DataType>(info->dtype), output_shapes[i]);
    if (!outputs[i]->bytes.empty()) {
      std::memcpy(outputs[i]->bytes.data(), output_pointers[i], outputs[i]->bytes.size());
    }
    kiln_rt_free(output_pointers[i]);
  }
  return absl::OkStatus();
}

absl::Status NativeModel::RunError(int32_t status) {
  if (status == KILN_ERROR_SHAPE_MISMATCH) {
    return absl::InvalidArgumentError(
        "the model's run returned KILN_ERROR_SHAPE_MISMATCH: an input's shape is not the model's, "
        "or an input that decides a shape holds a value other than the one the model's declared "
        "shapes were compiled for");
  }
  if (status == KILN_ERROR_OUT_OF_MEMORY) {
    return absl::ResourceExhaustedError("the model's run could not allocate its outputs");
  }
  return absl::InternalError(absl::StrCat("the model's run returned error ", status));
}

}  // namespace kiln::codegen
