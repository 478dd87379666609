// Node builders for graph passes. A pass that creates nodes must leave them
// typed: type inference stops at typed nodes, and a parent rebuilt over a
// replaced child keeps its (still valid) checked type, so new nodes under it
// would never be reached by a later InferType. These builders type each new
// node as it is made, from the operator registry's one type relation.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"

namespace kiln {

// A call of operator `op_name` with normalized attributes and its checked
// type when every argument is typed; untyped otherwise (for passes run before
// InferType). A type error means the pass built an ill-typed call: it is
// returned as a status naming the op, never a crash.
absl::StatusOr<Expr> MakeTypedCall(std::string_view op_name, std::vector<Expr> args,
                                   Attrs attrs = nullptr, Span span = nullptr);

// A typed rank-0 constant of `dtype` holding `value` (rounded to nearest for
// float16 and bfloat16, truncated for integers, nonzero -> true for bool).
Expr MakeTypedScalar(DataType dtype, double value, Span span = nullptr);

// Element `index` of a constant as a double (float16 and bfloat16 widened,
// bool 0 or 1). 64-bit integers beyond 2^53 lose precision, which callers
// comparing against small values (0, 1) do not care about.
double ConstantElement(const TensorDataNode& data, int64_t index);

// True when `data` has at least one element and every element equals `value`.
bool AllElementsEqual(const TensorDataNode& data, double value);

}  // namespace kiln
