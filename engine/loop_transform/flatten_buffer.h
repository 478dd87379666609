// FlattenBuffer: rewrites every multi-dimensional buffer access into a
// one-index access of a 1-D view of the same storage, so code generation
// and the interpreter only ever compute addresses as data[index].
//
// The flat index is elem_offset + sum(index_k * stride_k) with the buffer's
// EffectiveStrides(); the view it goes through has elem_offset 0, no
// strides, and the shape {elem_offset + the extent the strides reach}, so
// it covers everything the original buffer could address. Vector (Ramp)
// indices flatten the same way and are simplified back into one Ramp.
//
// Decision on the PrimFunc's buffer_map: it keeps the original, shaped
// buffers. They describe the calling convention (what each parameter is:
// the C header, the model metadata and CallKernel arguments need shapes),
// while the body addresses the same storage variables through the flat
// views. (TVM rewrites its buffer_map to the flattened buffers and keeps
// the shapes elsewhere; Kiln's params are the storage Vars, so keeping the
// shaped buffers loses nothing and needs no second map.)
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 0. Statements rewritten keep their spans; a buffer
// that is already 1-D, dense and at offset 0 is left as it is.
Pass FlattenBuffer();

}  // namespace kiln::loop::transform
