// Simplify: runs the arithmetic analyzer over every expression of every
// PrimFunc, knowing the range of each enclosing loop variable and the
// conditions of enclosing ifs, and removes the control flow that knowledge
// decides: an if whose condition is provably true or false becomes the
// branch taken, a loop of extent 1 becomes its body with the variable
// replaced by the loop's min, a loop of extent 0 or less becomes a no-op.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 0. Statements produced from another carry its span.
Pass Simplify();

}  // namespace kiln::loop::transform
