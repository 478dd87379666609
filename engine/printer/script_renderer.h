// Stage two for readers who think in Python: renders the same Doc tree the docsifiers build as
// a Python-like script (the form the loop dialect and mixed modules use). It is for reading,
// not parsed back; the spelling is described in script_renderer.cc.
#pragma once

#include <string>

#include "engine/printer/doc.h"
#include "engine/printer/text_renderer.h"

namespace kiln::printer {

struct ScriptRenderOptions {
  // Prefix of dialect-provided names (operators, typed scalars, helpers): `R.nn.conv2d`.
  std::string dialect_prefix = "R";
};

std::string RenderScript(const Doc& doc, const RenderOptions& options = {},
                         const ScriptRenderOptions& script_options = {});

}  // namespace kiln::printer
