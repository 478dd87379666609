// The frame of a module being printed, shared by every dialect's printer. The module builder
// gives out the global names in it, then marks which function it is printing at the top level
// and under what name, so the builder of that function's own dialect (graph `def @f`, loop
// `@T.prim_func def f`) prints it as a named definition rather than as a nested value.
#pragma once

#include "engine/printer/ir_docsifier.h"

namespace kiln::printer {

class ModuleFrame : public Frame {
 public:
  ModuleFrame() : Frame(/*is_name_scope=*/true) {}

  // The function being printed at the top level (null between functions) and its name. The
  // function's builder clears `pending_definition` once it has taken the name.
  const Object* pending_definition = nullptr;
  IdDoc pending_name;
};

}  // namespace kiln::printer
