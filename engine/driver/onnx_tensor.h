// A tensor from the bytes of a serialized onnx.TensorProto (the ONNX backend test data's
// `input_N.pb`): how clients and tools hand Kiln concrete values (the numerics check's inputs,
// kiln-run, kiln-conformance) without linking ONNX themselves.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/loop/host_tensor.h"

namespace kiln::driver {

// Bytes that are no TensorProto, an unsupported dtype, or dims that disagree with the data or
// exceed `max_elements` are InvalidArgument (checked before anything is allocated).
absl::StatusOr<loop::HostTensor> HostTensorFromOnnx(std::string_view serialized,
                                                    int64_t max_elements);

}  // namespace kiln::driver
