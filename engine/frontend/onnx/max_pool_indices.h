// MaxPool's Indices output as graph ops (max_pool_indices.cc).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// The flat index into `x` (input 0 of the MaxPool node `ctx` converts, (N, C, H, W), static) of
// each window's maximum, shaped like `pooled` (the pooled output); `pads` are ONNX's
// [top, left, bottom, right].
absl::StatusOr<Expr> MaxPoolIndices(ConvertContext& ctx, const Expr& x,
                                    const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations,
                                    const std::vector<int64_t>& pads, const Expr& pooled);

}  // namespace kiln::onnx_frontend
