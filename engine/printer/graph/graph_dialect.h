// The graph dialect's printer: Doc builders for modules, functions, expressions, types,
// attributes, spans, virtual devices and constants, registered under the dispatch token
// "graph" (and as the default layer for graph node kinds, so any dialect's builder can print a
// graph node it holds). Its Docs render as the text of docs/graph-text-format.md.
#pragma once

#include "engine/printer/ir_docsifier.h"

namespace kiln::printer {

inline constexpr char kGraphDispatchToken[] = "graph";

// The one registration call of the graph dialect (called from RegisterBuiltinDialects).
void RegisterGraphDialectPrinter(IRDocsifier::Registry& registry);

}  // namespace kiln::printer
