// Stage two for the graph dialect's canonical text: renders a Doc tree as the Relay-style text
// of docs/graph-text-format.md (the `.kir` format the parser reads back).
#pragma once

#include <string>

#include "engine/printer/doc.h"
#include "engine/printer/text_renderer.h"

namespace kiln::printer {

std::string RenderRelay(const Doc& doc, const RenderOptions& options = {});

}  // namespace kiln::printer
