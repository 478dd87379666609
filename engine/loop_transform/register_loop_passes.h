// The loop passes' entries in the pass registry, and the default loop
// pipeline. Kept beside the passes (the graph passes' table is
// engine/transform/builtin_passes.cc) because the loop layer does not
// depend on the graph transform layer; whoever fills a registry calls both.
#pragma once

#include <string>

#include "engine/pass/pass_registry.h"

namespace kiln::loop::transform {

// Simplify, RemoveNoOp, FlattenBuffer, VectorizeLoop, UnrollLoop{max_extent},
// StorageRewrite, LowerIntrin; all with stage loop. A name already
// registered is an internal error (each name is registered once).
void RegisterLoopPasses(PassRegistry& registry);

// The pipeline lowering runs on loop IR, as pipeline text (docs/passes.md,
// "Loop passes", explains the order).
const std::string& DefaultLoopPipeline();

}  // namespace kiln::loop::transform
