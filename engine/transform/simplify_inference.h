// SimplifyInference: rewrites inference-only normalization ops into the
// elementwise and reduction ops they compute, so later passes (constant
// folding of the per-channel factors, scale folding into convolutions,
// fusion) can see through them.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// nn.batch_norm and nn.instance_norm become multiply / add / rsqrt / mean
// steps (exact forms in simplify_inference.cc); nn.layer_norm stays, its
// compute being one row-wise kernel. Every new node carries the span of the op
// it replaces (SIBuilder::RecursivelyFillSpan). Opt level 0: code generation
// has no kernels for batch_norm and instance_norm, so every pipeline needs
// this pass. Requires InferType.
Pass SimplifyInference();

}  // namespace kiln::transform
