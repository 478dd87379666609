// DeadCodeElimination: removes let bindings whose variable is never used.
// Graph-form code has nothing else to remove (an unused node is unreachable
// and simply not part of the expression); A-normal-form code, and code
// after inlining, carries dead lets.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// A binding is dead when its variable is not used by the let's body nor by
// any live binding; chains of dead bindings go in one run. A binding whose
// value calls a stateful operator (random number generation) is kept: its
// effect is observable even when its result is not. Opt level 1.
Pass DeadCodeElimination();

}  // namespace kiln::transform
