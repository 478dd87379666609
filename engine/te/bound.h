// Bound inference for compute_at: the region of a producer that a consumer
// reads while the consumer's loops inside the attach point run through their
// ranges and the loops around it stay fixed. A region per dimension is
// `[min, min + extent)` with `min` an index expression of the fixed loops and
// a constant `extent` (shapes are static, so region buffers are too).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/expr.h"

namespace kiln::te {

struct SymbolicRange {
  loop::PrimExpr min;
  int64_t extent = 1;
};

// Ranges of the variables that run (the relaxed ones), by node; every other
// variable is held at its value. Looked up only, never iterated.
using RelaxedVars = std::unordered_map<const loop::VarNode*, loop::arith::Interval>;

// The values `index` (an int64 expression) takes. Affine arithmetic, floor
// division and modulo by constants, min, max and select are followed;
// nullopt when the extent cannot be bounded by a constant. `analyzer` knows
// the ranges of the fixed variables (used to bound differences of mins).
std::optional<SymbolicRange> EvalSymbolicRange(const loop::PrimExpr& index,
                                               const RelaxedVars& relaxed,
                                               loop::arith::Analyzer* analyzer);

// A range covering both, or nullopt when the distance of the mins is unbounded.
std::optional<SymbolicRange> UnionRange(const SymbolicRange& a, const SymbolicRange& b,
                                        loop::arith::Analyzer* analyzer);

}  // namespace kiln::te
