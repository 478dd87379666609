// DefuseOps: the inverse of FuseOps, for passes and tools that want the flat
// graph back (re-fusing with other rules, debugging a fused kernel).
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Replaces each call of a nested Primitive function by the function's body
// with its parameters replaced by the call's arguments. The body's nodes keep
// their spans and types, so FuseOps followed by DefuseOps gives back the
// graph FuseOps was given. Opt level 0.
Pass DefuseOps();

}  // namespace kiln::transform
