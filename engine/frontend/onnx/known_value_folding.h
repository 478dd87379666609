// NonZero and Unique of an input whose value is known at import (a constant, or a graph input
// the caller gives a value for): their output shapes depend on the data, so with the data known
// they are computed at import as constants, as ConstantOfShape and Range are. With the data
// known only at run time they stay the graph ops `nonzero` and `unique`, whose shapes are
// symbolic.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// NonZero(data): int64 [rank, count], the indices of the nonzero elements in row-major order.
absl::StatusOr<Expr> FoldNonZero(ConvertContext& ctx, const TensorData& data);

// Unique(data) as ONNX defines it: Y, indices (first occurrences), inverse_indices and counts;
// over the flattened data without `axis`, else over the slices along it (lexicographic order
// when `sorted`, else first-occurrence order).
absl::StatusOr<std::vector<Expr>> FoldUnique(ConvertContext& ctx, const TensorData& data,
                                             std::optional<int64_t> axis, bool sorted);

}  // namespace kiln::onnx_frontend
