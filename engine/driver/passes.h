// The passes and config options a consumer may name: the registry the driver
// fills (every builtin graph and loop pass), its listing as data, and the
// PassContext config options, for `kiln-opt --list-passes`, the ListPasses
// RPC and the service's metrics.
#pragma once

#include <cstdint>
#include <string>

#include "engine/pass/pass_config.h"
#include "engine/pass/pass_listing.h"
#include "engine/pass/pass_registry.h"

namespace kiln::driver {

// Registers the builtin graph and loop passes once per process (thread-safe)
// and returns the registry; every driver entry calls it.
const PassRegistry& RegisteredPasses();

// The default pipelines (docs/passes.md), as pipeline text. The graph pipeline's ConvertLayout
// lays convolutions out in blocks of `layout_block` channels: the target's float32 vector lanes
// (codegen::VectorFloatLanes), so one output-channel block fills one register.
std::string DefaultGraphPipeline(int opt_level, int64_t layout_block);
const std::string& DefaultLoopPipeline();

}  // namespace kiln::driver
