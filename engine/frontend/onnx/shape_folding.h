// Import-time shape arithmetic. ONNX exporters compute reshape targets, slice
// bounds and expand shapes with small integer subgraphs (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape). When such a value is known at import, the
// converter replaces the call computing it by a constant, so the imported
// graph keeps only the real computation. When it is only partly known
// (Shape of a tensor with a symbolic batch dim), Reshape and Expand still use
// what is known and keep the named symbolic dims symbolic.
//
// Deliberately small: int64/int32/bool values of at most kMaxFoldElements
// elements and the dozen graph ops shape arithmetic uses. This is not general
// constant folding: that is the FoldConstant pass, which evaluates any op
// through its one compute definition.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

inline constexpr int64_t kMaxFoldElements = 4096;

// One element of a shape value: a known integer, or unknown. An unknown
// element that is exactly a named symbolic dim (Shape(x)[0] of x: (N, 3))
// carries the dim's name.
struct ShapeElement {
  bool known = true;
  int64_t value = 0;
  std::string symbol;
};

struct ShapeTensor {
  DataType dtype = DataType::kInt64;  // kInt64, kInt32 or kBool
  std::vector<int64_t> shape;
  std::vector<ShapeElement> elements;  // row-major

  bool AllKnown() const;
};

// What import-time shape arithmetic knows of `expr`: small integer and bool
// constants, shape_of of any tensor (static dims known, symbolic ones by
// name), and negative, abs, logical_not, add, subtract, multiply, divide, floor_mod, mod, maximum,
// minimum, equal, less, greater, where, cast, take, concatenate, expand_dims,
// squeeze, reshape, strided_slice and broadcast_to of such values. nullopt for
// anything else or when too large; an error for index out of range or
// division by zero on known values.
absl::StatusOr<std::optional<ShapeTensor>> EvaluateShapeValue(const Expr& expr);

// The same for input `i` of the node `ctx` converts, which may also be a graph input whose
// value the caller fixed (OnnxImportOptions::input_values).
absl::StatusOr<std::optional<ShapeTensor>> EvaluateShapeInput(const ConvertContext& ctx, size_t i);

// `call` (typed, made by ctx.Call) or, when EvaluateShapeValue knows all of
// it, a constant with the node's span.
absl::StatusOr<Expr> FoldShapeArithmetic(ConvertContext& ctx, const Expr& call);

}  // namespace kiln::onnx_frontend
