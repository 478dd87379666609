// Small constant tensors for converters: scalars of any dtype and reshapes.
#include "engine/frontend/onnx/scalar_tensors.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/ir/float16.h"
#include "engine/support/check.h"

namespace kiln::onnx_frontend {
namespace {

template <typename T>
std::string Bytes(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

// Integer conversion that saturates instead of overflowing (NaN -> 0).
template <typename T>
T SaturateTo(double value) {
  if (std::isnan(value)) return T{0};
  if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(value);
}

}  // namespace

TensorData ScalarTensor(DataType dtype, double value) {
  std::string bytes;
  switch (dtype) {
    case DataType::kFloat16:
      bytes = Bytes(FloatToHalf(static_cast<float>(value)));
      break;
    case DataType::kBFloat16:
      bytes = Bytes(FloatToBFloat16(static_cast<float>(value)));
      break;
    case DataType::kFloat32:
      bytes = Bytes(static_cast<float>(value));
      break;
    case DataType::kFloat64:
      bytes = Bytes(value);
      break;
    case DataType::kInt8:
      bytes = Bytes(SaturateTo<int8_t>(value));
      break;
    case DataType::kInt16:
      bytes = Bytes(SaturateTo<int16_t>(value));
      break;
    case DataType::kInt32:
      bytes = Bytes(SaturateTo<int32_t>(value));
      break;
    case DataType::kInt64:
      bytes = Bytes(SaturateTo<int64_t>(value));
      break;
    case DataType::kUInt8:
      bytes = Bytes(SaturateTo<uint8_t>(value));
      break;
    case DataType::kUInt16:
      bytes = Bytes(SaturateTo<uint16_t>(value));
      break;
    case DataType::kUInt32:
      bytes = Bytes(SaturateTo<uint32_t>(value));
      break;
    case DataType::kUInt64:
      bytes = Bytes(SaturateTo<uint64_t>(value));
      break;
    case DataType::kBool:
      bytes = Bytes(static_cast<uint8_t>(value != 0 ? 1 : 0));
      break;
  }
  return MakeTensorData(dtype, {}, std::move(bytes));
}

std::optional<double> ScalarValue(const TensorData& data) {
  if (!data || data->NumElements() != 1) return std::nullopt;
  switch (data->dtype) {
    case DataType::kFloat16:
      return HalfToFloat(*data->data<uint16_t>());
    case DataType::kBFloat16:
      return BFloat16ToFloat(*data->data<uint16_t>());
    case DataType::kFloat32:
      return *data->data<float>();
    case DataType::kFloat64:
      return *data->data<double>();
    case DataType::kInt8:
      return *data->data<int8_t>();
    case DataType::kInt16:
      return *data->data<int16_t>();
    case DataType::kInt32:
      return *data->data<int32_t>();
    case DataType::kInt64:
      return static_cast<double>(*data->data<int64_t>());
    case DataType::kUInt8:
      return *data->data<uint8_t>();
    case DataType::kUInt16:
      return *data->data<uint16_t>();
    case DataType::kUInt32:
      return *data->data<uint32_t>();
    case DataType::kUInt64:
      return static_cast<double>(*data->data<uint64_t>());
    case DataType::kBool:
      return *data->data<uint8_t>() != 0 ? 1.0 : 0.0;
  }
  return std::nullopt;
}

TensorData ReshapeTensorData(const TensorData& data, std::vector<int64_t> shape) {
  return MakeTensorData(data->dtype, std::move(shape), data->bytes);
}

}  // namespace kiln::onnx_frontend
