#include "engine/driver/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <climits>

#include "engine/frontend/onnx/convert_context.h"

namespace kiln::driver {

absl::StatusOr<loop::HostTensor> HostTensorFromOnnx(std::string_view serialized,
                                                    int64_t max_elements) {
  onnx::TensorProto proto;
  if (serialized.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
    return absl::InvalidArgumentError("not a serialized ONNX TensorProto");
  }
  absl::StatusOr<TensorData> data = onnx_frontend::TensorFromProto(proto, max_elements);
  if (!data.ok()) return absl::InvalidArgumentError(data.status().message());
  return loop::HostTensor::FromTensorData(*data);
}

}  // namespace kiln::driver
