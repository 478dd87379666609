// FoldConstant: evaluates constant subgraphs at compile time. A call is
// evaluated with the op's own compute definition, lowered by the tensor-
// expression layer and run by the loop-IR interpreter: the same definition
// code generation uses, never a second hand-written kernel per op.
#pragma once

#include <cstdint>

#include "engine/pass/pass.h"

namespace kiln::transform {

// Results larger than this many elements are left unfolded (folding a
// broadcast of a scalar to a huge shape would bloat the model).
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 22;

// Folds, bottom-up in one walk:
//  * a call of an operator whose arguments are all Constants (or tuples of
//    them) into a Constant carrying the call's span (a tuple result becomes a
//    Tuple of Constants). Stateful ops, calls without arguments, device
//    annotations (on_device, device_copy) and results over kMaxFoldedElements
//    are skipped;
//  * shape_of and size of any tensor with a static shape (the data is never
//    read);
//  * TupleGetItem of a Tuple into the field;
//  * If with a constant condition into the branch it takes, carrying the
//    SequentialSpan of that branch and the If (both are where the value came
//    from), as in the seeds' walk-through.
// Fused (Primitive) functions are left alone. Opt level 2; requires InferType.
Pass FoldConstant();

}  // namespace kiln::transform
