// The pass registry as data a tool or client reads: `kiln-opt --list-passes
// --format=json` and the service's ListPasses answer from this one listing.
#pragma once

#include "engine/pass/pass_registry.h"
#include "nlohmann/json.hpp"

namespace kiln {

// [{"name", "stage", "opt_level", "required": [...], "summary",
//   "options": [{"name", "type", "default", "doc"}]}], in name order.
nlohmann::json PassRegistryToJson(const PassRegistry& registry);

}  // namespace kiln
