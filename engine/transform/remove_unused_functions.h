// RemoveUnusedFunctions: drops module functions no entry function can reach,
// so later stages (lowering, code generation) never compile dead helpers
// (ONNX local functions that were inlined, specializations that lost callers).
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Keeps `main` and every function it reaches through global references,
// transitively; a module without `main` is left as it is (nothing says what
// its entry points are). Loop PrimFuncs are always kept and not walked.
// Opt level 1.
Pass RemoveUnusedFunctions();

}  // namespace kiln::transform
