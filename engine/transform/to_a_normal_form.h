// ToANormalForm: binds every intermediate value of a function to a let
// variable, so evaluation order and sharing are explicit in the text (the
// form an interpreter or a memory planner walking statements wants).
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Each call, tuple, projection, if, let block and nested function becomes
// `let %vN = ...;` in the innermost scope (function body, if branch or let
// body) that contains all of its uses, in dataflow order, operands as
// variables or constants. A value shared by both branches of an if is bound
// once, before the if. The bound values keep their spans (the bindings get
// none: they are names, not computations); nested functions are converted on
// their own; fused (Primitive) functions are left alone. Opt level 0 (a
// utility for pipelines that want it, not an optimization).
Pass ToANormalForm();

}  // namespace kiln::transform
