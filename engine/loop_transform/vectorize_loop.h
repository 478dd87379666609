// VectorizeLoop: turns each loop of kind kVectorized with a constant extent
// into vector code. The loop variable becomes Ramp(min, 1, extent), scalar
// operands meeting vectors are broadcast, loads and stores take the vector
// index. Like TVM's, the pass trusts the schedule that iterations are
// independent (TE marks only data-parallel axes vectorized).
//
// A body that cannot be expressed as one vector step falls back to a serial
// loop (same variable, range, body and span): one containing a loop, an if,
// an allocation or a kernel call, a store whose indices do not depend on the
// loop variable while its value does (a reduction), or vector code already.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 0. The vectorized statements keep their spans.
Pass VectorizeLoop();

}  // namespace kiln::loop::transform
