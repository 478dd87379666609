// SimplifyExpr: local algebraic simplifications that remove layout and
// conversion work the importer leaves behind (ONNX graphs are full of
// Reshape/Flatten chains, Transpose pairs around layout changes, and Casts).
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Rewrites, applied bottom-up until none matches (see simplify_expr.cc):
// chains of reshape / squeeze / expand_dims into one reshape, transposes into
// one transpose or none, casts into one cast or none, and identities
// (x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1, reshape to the same shape) into
// their operand. A node that replaces several carries the SequentialSpan of
// all of them (SIBuilder(entry, inputs)). Only type-preserving rewrites are
// made: the replacement has exactly the type of the node it replaces.
// Opt level 2; requires InferType.
Pass SimplifyExpr();

}  // namespace kiln::transform
