// FoldFloatBinary: float32 add, subtract, multiply and divide of two constants with NumPy
// broadcasting, computed directly. FoldConstant folds every other op by lowering its compute
// definition and running it in the loop interpreter; these four are most of what a CNN's
// import leaves to fold (a batch norm's scale multiplied into every convolution weight: 23.5M
// of ResNet-50's elements), and the interpreter spends some 50 instructions per element on
// them, a tenth of ResNet-50's whole compile. Each element is the same IEEE float32 operation
// the interpreter and native code apply, so the folded bytes are identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/ir/tensor_data.h"

namespace kiln::transform {

// Whether FoldFloatBinary computes `op`: add, subtract, multiply, divide.
bool IsFloatBinaryFoldable(std::string_view op);

// The result of `op` ("add", "subtract", "multiply" or "divide") on `a` and `b` broadcast to
// `shape`, or nullopt when the op is another, an operand is not float32 or does not broadcast
// to `shape`. The caller charges the result's bytes to its budget first.
std::optional<TensorData> FoldFloatBinary(std::string_view op, const TensorData& a,
                                          const TensorData& b, const std::vector<int64_t>& shape);

}  // namespace kiln::transform
