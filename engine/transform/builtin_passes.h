// The one list of builtin graph passes: registers each with its summary and
// options. The driver calls it once on the global registry; tests may fill a
// registry of their own.
#pragma once

#include "engine/pass/pass_registry.h"

namespace kiln {

void RegisterBuiltinPasses(PassRegistry& registry);

}  // namespace kiln
