// Shared by the transform op family's files (transform.cc registers layout and
// shape ops and calls RegisterIndexOps from transform_index.cc) and by the
// frontend's import-time shape folding, which must slice exactly like the
// strided_slice op does.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "engine/op/op_registry.h"

namespace kiln {

void RegisterIndexOps(OpRegistry& registry);  // transform_index.cc

// Checks shared by the family; errors name the argument by `what`.
absl::Status ExpectIntegerDType(const TensorTypeNode* t, const char* what);
absl::Status ExpectSameDType(const TensorTypeNode* a, const TensorTypeNode* b, const char* what);
// A dim's extent as text ("3", "N", "?").
std::string DimToString(const Dim& dim);

// One sliced axis of extent `extent` under ONNX Slice rules: negative bounds
// count from the end, then bounds clamp to the axis ([0, d] for a positive
// stride, [-1, d-1] for a negative one). Element k of the result is input
// element `begin + k * stride`, for k < `count`. `stride` must not be 0.
struct SliceBounds {
  int64_t begin = 0;
  int64_t count = 0;
};
SliceBounds ClampSlice(int64_t extent, int64_t begin, int64_t end, int64_t stride);

}  // namespace kiln
