// The C header artifact of a compiled model: its entry points (kiln_runtime.h's ABI under the
// model's symbol prefix) and, as comments and macros, its inputs, outputs and workspace size.
#pragma once

#include <cstdint>
#include <string>

#include "engine/lower/lower_module.h"

namespace kiln::codegen {

std::string ModelHeader(const lower::LoweredModule& lowered, const std::string& prefix,
                        int64_t workspace_bytes);

}  // namespace kiln::codegen
