// Structural equality of loop expressions for the simplifier: same operators,
// types and immediates, the same variables and buffers (by identity). Spans
// are ignored: two occurrences of `i * 8` from different layers are equal.
#pragma once

#include "engine/loop/expr.h"

namespace kiln::loop::arith {

bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b);

}  // namespace kiln::loop::arith
