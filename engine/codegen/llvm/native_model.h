// NativeModel: a compiled model's object file loaded into this process with ORC LLJIT (the
// object itself, as a build farm would link it, not a second compile), with libkiln_rt and libm
// resolved from the process. Runs `<prefix>_run` on host tensors, checked against the
// signature the object exports.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/loop/host_tensor.h"

namespace kiln::codegen {

class NativeModel {
 public:
  // `native` must have been compiled for this host (EmitNative with an empty target).
  static absl::StatusOr<std::unique_ptr<NativeModel>> Load(const NativeModule& native);
  ~NativeModel();

  // Runs the model: `inputs` and `outputs` in main's order, each of its signature's dtype and
  // size (a mismatch is InvalidArgument naming the tensor). Buffers are copied to and from
  // aligned memory around the call. Not reentrant: one Run at a time per NativeModel.
  absl::Status Run(const std::vector<loop::HostTensor*>& inputs,
                   const std::vector<loop::HostTensor*>& outputs);

  // The entry itself, for callers that own aligned buffers (benchmarks).
  int32_t RunRaw(void* const* inputs, void* const* outputs, void* workspace) const;
  int64_t workspace_bytes() const;
  int num_inputs() const;
  int num_outputs() const;

 private:
  struct Impl;
  explicit NativeModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::codegen
