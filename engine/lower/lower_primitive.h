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
};

// The kernel name of a primitive function: its `name` attribute (LabelOps),
// else `fused_<index>`.
std::string PrimitiveName(const FunctionNode& func, int index);

absl::StatusOr<LoweredPrimitive> LowerPrimitive(const FunctionNode& func, const std::string& name,
                                                const DefaultScheduleOptions& schedule_options);

}  // namespace kiln::lower
