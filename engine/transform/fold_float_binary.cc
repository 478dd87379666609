// FoldFloatBinary (fold_float_binary.h).
#include "engine/transform/fold_float_binary.h"

#include <cstring>
#include <string>

namespace kiln::transform {
namespace {

// Per dimension of `shape`, the element stride of `operand` broadcast to it (0 along a
// broadcast dimension); nullopt when it does not broadcast.
std::optional<std::vector<int64_t>> BroadcastStrides(const std::vector<int64_t>& operand,
                                                     const std::vector<int64_t>& shape) {
  if (operand.size() > shape.size()) return std::nullopt;
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  size_t lead = shape.size() - operand.size();
  for (size_t d = operand.size(); d-- > 0;) {
    if (operand[d] != shape[lead + d] && operand[d] != 1) return std::nullopt;
    if (operand[d] != 1) strides[lead + d] = stride;
    stride *= operand[d];
  }
  return strides;
}

template <typename Op>
void Apply(const float* a, const std::vector<int64_t>& a_strides, const float* b,
           const std::vector<int64_t>& b_strides, const std::vector<int64_t>& shape, float* out,
           Op op) {
  size_t rank = shape.size();
  if (rank == 0) {
    out[0] = op(a[0], b[0]);
    return;
  }
  int64_t inner = shape[rank - 1], a_step = a_strides[rank - 1], b_step = b_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t a_at = 0, b_at = 0;
  for (;;) {
    // The innermost dimension as one loop, the outer ones as an odometer.
    for (int64_t i = 0; i < inner; ++i) *out++ = op(a[a_at + i * a_step], b[b_at + i * b_step]);
    size_t d = rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++index[d] < shape[d]) {
        a_at += a_strides[d];
        b_at += b_strides[d];
        break;
      }
      a_at -= (shape[d] - 1) * a_strides[d];
      b_at -= (shape[d] - 1) * b_strides[d];
      index[d] = 0;
    }
  }
}

}  // namespace

bool IsFloatBinaryFoldable(std::string_view op) {
  return op == "add" || op == "subtract" || op == "multiply" || op == "divide";
}

std::optional<TensorData> FoldFloatBinary(std::string_view op, const TensorData& a,
                                          const TensorData& b, const std::vector<int64_t>& shape) {
  if (!IsFloatBinaryFoldable(op) || a->dtype != DataType::kFloat32 ||
      b->dtype != DataType::kFloat32) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> a_strides = BroadcastStrides(a->shape, shape);
  std::optional<std::vector<int64_t>> b_strides = BroadcastStrides(b->shape, shape);
  if (!a_strides || !b_strides) return std::nullopt;
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  std::string bytes(static_cast<size_t>(elements) * sizeof(float), '\0');
  auto* out = reinterpret_cast<float*>(bytes.data());
  const float* x = a->data<float>();
  const float* y = b->data<float>();
  if (elements > 0) {
    if (op == "add") {
      Apply(x, *a_strides, y, *b_strides, shape, out, [](float p, float q) { return p + q; });
    } else if (op == "subtract") {
      Apply(x, *a_strides, y, *b_strides, shape, out, [](float p, float q) { return p - q; });
    } else if (op == "multiply") {
      Apply(x, *a_strides, y, *b_strides, shape, out, [](float p, float q) { return p * q; });
    } else {
      Apply(x, *a_strides, y, *b_strides, shape, out, [](float p, float q) { return p / q; });
    }
  }
  return MakeTensorData(DataType::kFloat32, shape, std::move(bytes));
}

}  // namespace kiln::transform
