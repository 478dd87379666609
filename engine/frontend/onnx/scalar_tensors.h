// Small constant tensors for converters: scalars of any dtype, reading a
// one-element constant, and the same data under another shape; and one-element
// operands (a trip count, a threshold) as rank-0 values.
#pragma once

#include <optional>
#include <vector>

#include "engine/frontend/onnx/convert_context.h"
#include "engine/ir/tensor_data.h"

namespace kiln::onnx_frontend {

// A rank-0 tensor of `dtype` holding `value` (rounded to nearest for float16
// and bfloat16, saturating for integers, nonzero -> true for bool).
TensorData ScalarTensor(DataType dtype, double value);

// The value of a one-element tensor as a double, or nullopt for any other count.
std::optional<double> ScalarValue(const TensorData& data);

// An int64 or float32 tensor of `shape` holding `values` (row-major; counts must match).
TensorData Int64Tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values);
TensorData Float32Tensor(std::vector<int64_t> shape, const std::vector<float>& values);

// The same elements under another shape (the element count must match).
TensorData ReshapeTensorData(const TensorData& data, std::vector<int64_t> shape);

// A one-element tensor of `dtype` (`what`: "the trip count M") as a rank-0 tensor.
absl::StatusOr<Expr> OneElementAsScalar(ConvertContext& ctx, const Expr& value, DataType dtype,
                                        const std::string& what);

}  // namespace kiln::onnx_frontend
