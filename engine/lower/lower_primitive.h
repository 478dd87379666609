// Lowering one Primitive graph function (a fused kernel) to a loop PrimFunc:
// its tensor expressions (primitive_compute.h), the default schedule
// (default_schedule.h), then te::LowerSchedule. The schedule is returned too,
// so its record can be shown step by step.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/loop/prim_func.h"
#include "engine/lower/default_schedule.h"
#include "engine/te/schedule.h"

namespace kiln::lower {

// The name of a symbolic kernel's last parameter, the symbols' values (and of main's).
inline constexpr char kSymbolsParam[] = "symbols";

struct LoweredPrimitive {
  // Params: the inputs (one per tensor leaf of each parameter, in parameter
  // order), then the outputs (one per tuple field when the function returns a
  // tuple), then one per non-scalar constant of the body (bound to
  // `constants`). Every statement carries a span of the graph call it
  // computes.
  loop::PrimFunc func;
  te::Schedule schedule;
  // The tensors bound to func's params, in order (for lowering the snapshots
  // of the schedule record the same way).
  std::vector<te::Tensor> params;
  std::vector<Constant> constants;
  // Its last parameter is the symbols' values (a kernel over symbolic dims).
  bool takes_symbols = false;
  // What its compute definitions assumed of the symbols (te::SymbolScope::RequireEqual).
  std::vector<te::SymbolEquality> equalities;
};

// `func` (lowered over `symbols`) with each symbol's variable bound, first thing, from `values`
// (element k holds symbol k).
loop::PrimFunc BindSymbols(const loop::PrimFunc& func, const te::SymbolVars& symbols,
                           const loop::Buffer& values);

// The kernel name of a primitive function: its `name` attribute (LabelOps),
// else `fused_<index>`.
std::string PrimitiveName(const FunctionNode& func, int index);

// `symbols`: the model's symbolic dimensions, when it has any. A kernel whose tensors have
// symbolic dims is scheduled by CreateSymbolicSchedule and takes one more parameter after the
// others, an int64 buffer holding the symbols' values in order; its body binds each symbol's
// variable from it first.
absl::StatusOr<LoweredPrimitive> LowerPrimitive(const FunctionNode& func, const std::string& name,
                                                const DefaultScheduleOptions& schedule_options,
                                                const te::SymbolVars* symbols = nullptr);

}  // namespace kiln::lower
