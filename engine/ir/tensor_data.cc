// Construction of constant tensor storage.
#include "engine/ir/tensor_data.h"

#include <cstring>

namespace kiln {

TensorData MakeTensorData(DataType dtype, std::vector<int64_t> shape, std::string bytes) {
  auto node = MakeRef<TensorDataNode>(dtype, std::move(shape), std::move(bytes));
  KILN_CHECK(static_cast<int64_t>(node->bytes.size()) ==
             node->NumElements() * DataTypeBytes(dtype))
      << "tensor data holds " << node->bytes.size() << " bytes for " << node->NumElements()
      << " elements";
  return node;
}

namespace {
template <typename T>
TensorData Scalar(DataType dtype, T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return MakeTensorData(dtype, {}, std::move(bytes));
}
}  // namespace

TensorData MakeScalar(float value) { return Scalar(DataType::kFloat32, value); }
TensorData MakeScalar(double value) { return Scalar(DataType::kFloat64, value); }
TensorData MakeScalar(int32_t value) { return Scalar(DataType::kInt32, value); }
TensorData MakeScalar(int64_t value) { return Scalar(DataType::kInt64, value); }
TensorData MakeScalar(bool value) { return Scalar(DataType::kBool, static_cast<uint8_t>(value ? 1 : 0)); }

}  // namespace kiln
