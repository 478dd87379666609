// CanonicalizeOps: rewrites operators that are conveniences of the frontend
// into the few the rest of the compiler has to handle well.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// nn.bias_add(x, b, axis) becomes add(x, expand_dims(b, axis=1,
// num_newaxis=rank(x)-axis-1)) (or add(x, b) when `axis` is the last one),
// so the bias is an ordinary broadcast operand that FuseOps fuses into the
// producer's kernel. Every new node carries the bias_add's span and a type.
// Opt level 3; requires InferType.
Pass CanonicalizeOps();

}  // namespace kiln::transform
