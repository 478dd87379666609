// Small constant tensors for converters: scalars of any dtype and reshapes.
#include "engine/frontend/onnx/scalar_tensors.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/op/type_relations.h"
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
  std::string bytes = DispatchDataType(dtype, [&]<DataType D>() {
    if constexpr (IsSignedInt(D) || IsUnsignedInt(D)) {
      return Bytes(SaturateTo<DataTypeStorage<D>>(value));
    } else {
      return Bytes(ElementFromDouble<D>(value));
    }
  });
  return MakeTensorData(dtype, {}, std::move(bytes));
}

std::optional<double> ScalarValue(const TensorData& data) {
  if (!data || data->NumElements() != 1) return std::nullopt;
  return DispatchDataType(data->dtype, [&]<DataType D>() {
    return ElementToDouble<D>(*data->data<DataTypeStorage<D>>());
  });
}

TensorData Int64Tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  return MakeTensorData(DataType::kInt64, std::move(shape), std::move(bytes));
}

TensorData Float32Tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return MakeTensorData(DataType::kFloat32, std::move(shape), std::move(bytes));
}

TensorData ReshapeTensorData(const TensorData& data, std::vector<int64_t> shape) {
  return MakeTensorData(data->dtype, std::move(shape), data->bytes);
}

absl::StatusOr<Expr> OneElementAsScalar(ConvertContext& ctx, const Expr& value, DataType dtype,
                                        const std::string& what) {
  const auto* type = value->checked_type.as<TensorTypeNode>();
  absl::StatusOr<int64_t> elements = type ? NumElements(type->shape) : int64_t{-1};
  if (type == nullptr || type->dtype != dtype || !elements.ok() || *elements != 1) {
    return ctx.Error(absl::StrCat(what, " must be a ", DataTypeName(dtype),
                                  " tensor of one element, got ",
                                  TypeToString(value->checked_type)));
  }
  if (type->shape.empty()) return value;
  return ctx.Call("reshape", {value}, MakeAttrs({{"newshape", IntArray(std::vector<int64_t>{})}}));
}

}  // namespace kiln::onnx_frontend
