// The assembly artifact from the object itself: every function of the object's code sections
// disassembled with LLVM's MC layer, a `.loc` line before each run of instructions that the
// object's DWARF line table gives one loop-IR line, and call and data references named by their
// relocations (`<kiln_rt_parallel_for>`). The object is what users link, so this is exactly
// their code, and it costs a disassembly instead of a second run of code generation.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"

namespace kiln::codegen {

// Text in the shape of LLVM's assembly output (AnnotateAssembly reads it): `name:` labels at
// column 0, tab-indented instructions, `\t.loc\t1 LINE 0` directives.
absl::StatusOr<std::string> DisassembleObject(const std::string& object, const ResolvedTarget& target);

}  // namespace kiln::codegen
