// NativeModel: a compiled model's object file loaded into this process with ORC LLJIT (the
// object itself, as a build farm would link it, not a second compile), with libkiln_rt and libm
// resolved from the process; or a shared-library artifact loaded with dlopen. Runs `<prefix>_run` on host tensors, checked against the
// signature the object exports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/loop/host_tensor.h"

namespace kiln::codegen {

// One input or output as the model's signature queries describe it.
struct TensorSignature {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
};

class NativeModel {
 public:
  struct Impl;

  // `native` must have been compiled for this host (EmitNative with an empty target).
  static absl::StatusOr<std::unique_ptr<NativeModel>> Load(const NativeModule& native);
  // A shared-library artifact (dlopen; never unloaded) exporting `<symbol_prefix>_*`.
  static absl::StatusOr<std::unique_ptr<NativeModel>> LoadSharedLibrary(
      const std::string& path, const std::string& symbol_prefix);
  ~NativeModel();

  // Runs the model: `inputs` and `outputs` in main's order, each of its signature's dtype and
  // size (a mismatch is InvalidArgument naming the tensor). Buffers are copied to and from
  // aligned memory around the call. Not reentrant: one Run at a time per NativeModel.
  absl::Status Run(const std::vector<loop::HostTensor*>& inputs,
                   const std::vector<loop::HostTensor*>& outputs);

  // A model compiled per sample (a symbolic batch dim): its signature has -1 for the batch,
  // Run takes inputs of any batch and resizes `outputs` to the batch's shapes.
  bool per_sample() const;

  // The entry itself, for callers that own aligned buffers (benchmarks); a per-sample model
  // has no `_run` and returns KILN_ERROR_SHAPE_MISMATCH.
  int32_t RunRaw(void* const* inputs, void* const* outputs, void* workspace) const;
  int64_t workspace_bytes() const;
  int num_inputs() const;
  int num_outputs() const;
  std::vector<TensorSignature> inputs() const;
  std::vector<TensorSignature> outputs() const;
  // The kernels in the entry's order: index i is kiln_rt_profile_read's kernel i when the model
  // was compiled with CodegenOptions::profile_kernels (and loaded with the JIT, whose runtime is
  // this process's libkiln_rt; a shared library keeps its own).
  const std::vector<std::string>& kernel_names() const;

 private:
  explicit NativeModel(std::unique_ptr<Impl> impl);
  absl::Status RunPerSample(const std::vector<loop::HostTensor*>& inputs,
                            const std::vector<loop::HostTensor*>& outputs);
  static absl::Status RunError(int32_t status);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::codegen
