// InferType: the pass form of engine/op/type_inference.h. Every later graph
// pass may rely on checked types and normalized call attributes.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Types every function of the module (opt level 0). Incremental: typed nodes
// are kept with their subtrees, so after a pass that rebuilt a few nodes only
// those are inferred, and an already typed module comes back `same_as` itself.
Pass InferType();

}  // namespace kiln::transform
