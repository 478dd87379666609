// The one list of dialects whose printers Kiln ships. A new dialect adds its registration call
// to RegisterBuiltinDialects and nothing else: the docsifier, the renderers and the public API
// stay untouched.
#pragma once

#include "engine/printer/ir_docsifier.h"

namespace kiln::printer {

void RegisterBuiltinDialects(IRDocsifier::Registry& registry);

// The registry with every built-in dialect, built once (std::call_once) on first use and
// read-only afterwards, so concurrent prints share it safely.
const IRDocsifier::Registry& BuiltinDocRegistry();

}  // namespace kiln::printer
