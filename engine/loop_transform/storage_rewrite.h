// StorageRewrite: lets allocations whose lifetimes do not overlap share one
// allocation, so a fused kernel's intermediates need less memory.
//
// It plans each statement sequence, together with the chain of Allocates
// directly around it: an Allocate around the sequence lives from the first
// item that uses its storage to the last; an Allocate heading an item lives
// for that item only. Allocations are taken in order of first use, each
// reusing the first earlier allocation of the same dtype and scope whose
// last use came strictly before; the shared allocation takes the larger
// extent, sits around the sequence, and carries the span of the first
// allocation it serves. Buffers viewing a merged allocation are rewritten
// to view the shared storage variable (same shape, offset and strides). An
// allocation around a sequence that no item uses is removed.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 1.
Pass StorageRewrite();

}  // namespace kiln::loop::transform
