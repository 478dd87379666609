// The compile's diagnostics (notes and warnings the passes reported), printed
// on stderr by every command that receives a compile summary.
#pragma once

#include "kiln/v1/compiler.pb.h"

namespace kiln::cli {

// One `kiln: SEVERITY: [PASS] message (layers: a, b)` line per diagnostic.
void PrintDiagnostics(const kiln::v1::CompileResponse& response);

}  // namespace kiln::cli
