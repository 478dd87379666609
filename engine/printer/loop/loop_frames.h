// The frame of the loop dialect's printer: one per PrimFunc, or per statement or expression
// printed on its own. It is the name scope of loop variables and buffers, and it keeps where
// the declaration of a buffer or variable first met without one goes: right after the
// allocation of the buffer's storage when that is being printed, else at the top.
#pragma once

#include <vector>

#include "engine/loop/expr.h"
#include "engine/printer/doc.h"
#include "engine/printer/ir_docsifier.h"

namespace kiln::printer::loop_printer {

class LoopFunctionFrame final : public Frame {
 public:
  // `declare_free`: whether free variables and buffers get declaration statements (a function
  // or statement does; an expression printed alone has nowhere to put them).
  explicit LoopFunctionFrame(bool declare_free)
      : Frame(/*is_name_scope=*/true), declare_free(declare_free) {}

  // An Allocate whose body is being printed, innermost last.
  struct Allocation {
    const loop::VarNode* data;
    std::vector<StmtDoc>* declarations;  // printed right after the allocation
  };

  // Where the declaration of a buffer viewing `data` goes.
  std::vector<StmtDoc>* DeclarationsFor(const loop::VarNode* data) {
    for (auto it = allocations.rbegin(); it != allocations.rend(); ++it) {
      if (it->data == data) return it->declarations;
    }
    return &top_declarations;
  }

  const bool declare_free;
  std::vector<StmtDoc> top_declarations;
  std::vector<Allocation> allocations;
};

}  // namespace kiln::printer::loop_printer
