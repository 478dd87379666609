// FuseOps: groups the operator calls of each graph function into fused
// kernels (functions marked Primitive=1), the unit lowering and code
// generation work on. Dominator-tree fusion by pattern kind, as in the seeds.
#pragma once

#include <cstdint>

#include "engine/pass/pass.h"

namespace kiln::transform {

// The largest number of nodes one fused function may hold by default.
// Also the largest allowed: fused expressions nest this deep in loop IR.
inline constexpr int64_t kDefaultMaxFuseDepth = 256;

// Builds the dataflow graph of each function (post-order, iteratively), its
// post-dominator tree, and fuses each node into its post-dominator when every
// path between them allows it (TVM's rules): conv2d/dense/matmul with the
// elementwise and broadcast ops after them; elementwise and broadcast ops into
// injective or reduction consumers; injective chains; injective ops into
// tuples last. Opaque ops stay alone. With `fuse_opt_level` 0 every operator
// call is its own group. A group holds at most `max_fuse_depth` nodes.
//
// Each group becomes `fn (%p0, %p1, ...) { members }` with Primitive=1, called
// with the group's external inputs (non-scalar constants stay arguments;
// scalar constants are inlined). Members keep their spans; the call and the
// function carry the SequentialSpan of their members in post-order; each
// parameter carries the span of the value it stands for. Everything is built
// typed. Opt level 0; requires InferType.
Pass FuseOps(int64_t fuse_opt_level = 2, int64_t max_fuse_depth = kDefaultMaxFuseDepth);

}  // namespace kiln::transform
