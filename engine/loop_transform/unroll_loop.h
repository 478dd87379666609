// UnrollLoop: replaces each loop of kind kUnrolled whose min and extent are
// constants and whose extent is at most `max_extent` by its body repeated
// once per iteration, the loop variable replaced by the iteration's value.
// Inner loops unroll first. A loop too long (or with a non-constant range)
// keeps kind kUnrolled, which code generation may pass on as a hint.
#pragma once

#include <cstdint>

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

inline constexpr int64_t kDefaultMaxUnrollExtent = 16;

// Stage loop, opt level 0. The copies keep the spans of the statements
// they copy; the sequence of copies carries the loop's span.
Pass UnrollLoop(int64_t max_extent = kDefaultMaxUnrollExtent);

}  // namespace kiln::loop::transform
