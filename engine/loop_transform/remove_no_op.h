// RemoveNoOp: deletes statements that do nothing, so later passes and the
// code generator never see them: empty sequences, Evaluate of a constant,
// stores of a buffer element to itself, and loops, ifs, lets and
// allocations whose bodies became no-ops.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 0. A statement removed inside a sequence disappears;
// one that was a whole body becomes an empty sequence carrying its span.
Pass RemoveNoOp();

}  // namespace kiln::loop::transform
