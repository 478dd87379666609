// Tensors in files, as ONNX and NumPy users keep them: ONNX TensorProto (`.pb`, the backend test
// data's format) and NumPy arrays (`.npy`, format 1.0/2.0, little-endian, C order). The format
// follows the file's extension. For kiln-run and kiln-conformance.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/host_tensor.h"

namespace kiln::tools {

absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

// A bad file is InvalidArgument naming it and what is wrong; at most `max_elements` elements.
absl::StatusOr<loop::HostTensor> ReadTensorFile(const std::string& path,
                                                int64_t max_elements = int64_t{1} << 28);
// The tensors of an ONNX SequenceProto file, or of an OptionalProto file (`optional`): a
// sequence's elements in order, an optional's tensor or sequence, nothing for an empty optional.
struct TensorContainer {
  enum Kind { kSequence, kOptionalTensor, kEmptyOptional } kind = kSequence;
  std::vector<loop::HostTensor> tensors;
};
absl::StatusOr<TensorContainer> ReadTensorContainerFile(const std::string& path, bool optional,
                                                        int64_t max_elements = int64_t{1} << 28);
absl::Status WriteTensorFile(const std::string& path, const loop::HostTensor& tensor,
                             const std::string& name = "");

}  // namespace kiln::tools
