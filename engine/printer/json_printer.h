// The machine-readable form of graph IR (`kiln-opt --format=json`, TracePass snapshots,
// dashboards): every function and every node with a stable id, its kind, operator, inputs,
// type, source spans and virtual device. The schema is docs/ir-json.md.
#pragma once

#include <string>
#include <vector>

#include "engine/ir/module.h"

namespace kiln {

// `indent` < 0 prints everything on one line. Deterministic: same module, same bytes.
std::string PrintModuleJson(const IRModule& module, int indent = 2);

// The source names of every node with a span, by the node ids of the JSON
// form, without printing it (for span tables next to IR sent elsewhere).
struct NodeSources {
  std::string function;
  int64_t node = 0;
  std::vector<std::string> sources;
};
std::vector<NodeSources> ModuleSpanTable(const IRModule& module);

}  // namespace kiln
