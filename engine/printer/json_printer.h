// The machine-readable form of graph IR (`kiln-opt --format=json`, TracePass snapshots,
// dashboards): every function and every node with a stable id, its kind, operator, inputs,
// type, source spans and virtual device. The schema is docs/ir-json.md.
#pragma once

#include <string>

#include "engine/ir/module.h"

namespace kiln {

// `indent` < 0 prints everything on one line. Deterministic: same module, same bytes.
std::string PrintModuleJson(const IRModule& module, int indent = 2);

}  // namespace kiln
