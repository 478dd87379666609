#include "engine/driver/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <climits>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/support/request_limits.h"

namespace kiln::driver {
namespace {

// A run's string input: string_data, one entry per element (ONNX has no raw_data for strings).
absl::StatusOr<loop::HostTensor> StringTensorFromProto(const onnx::TensorProto& proto,
                                                       int64_t max_elements) {
  std::string name = proto.name().empty() ? "" : absl::StrCat(" '", proto.name(), "'");
  auto fail = [&](const std::string& message) {
    return absl::InvalidArgumentError(absl::StrCat("string tensor", name, ": ", message));
  };
  if (proto.dims_size() > kMaxTensorRank) return fail("too many dimensions");
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0 || dim > max_elements) return fail(absl::StrCat("dimension ", dim, " out of range"));
    if (__builtin_mul_overflow(count, dim, &count) || count > max_elements) {
      return fail(absl::StrCat("more than the limit of ", max_elements, " elements"));
    }
    shape.push_back(dim);
  }
  if (proto.string_data_size() != count) {
    return fail(absl::StrCat("holds ", proto.string_data_size(), " strings, expected ", count,
                             " from its dims"));
  }
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(count));
  for (int i = 0; i < proto.string_data_size(); ++i) {
    const std::string& text = proto.string_data(i);
    if (text.find('\0') != std::string::npos) {
      return fail(absl::StrCat("string ", i, " holds a NUL byte (Kiln's string elements are "
                               "NUL-terminated)"));
    }
    values.push_back(text);
  }
  return loop::HostTensor::FromStrings(std::move(shape), std::move(values));
}

}  // namespace

absl::StatusOr<loop::HostTensor> HostTensorFromOnnx(std::string_view serialized,
                                                    int64_t max_elements) {
  onnx::TensorProto proto;
  if (serialized.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
    return absl::InvalidArgumentError("not a serialized ONNX TensorProto");
  }
  if (proto.data_type() == onnx::TensorProto::STRING) return StringTensorFromProto(proto, max_elements);
  absl::StatusOr<TensorData> data = onnx_frontend::TensorFromProto(proto, max_elements);
  if (!data.ok()) return absl::InvalidArgumentError(data.status().message());
  return loop::HostTensor::FromTensorData(*data);
}

}  // namespace kiln::driver
