// Reading a schedule record (Schedule::record()): a step as text and the
// loop IR after every step, as GetScheduleRecord reports them. The loop IR
// is produced here, on demand; recording itself only keeps snapshots.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/prim_func.h"
#include "engine/te/schedule.h"

namespace kiln::te {

// "split(C, ax0, factor=32)".
std::string FormatScheduleStep(const ScheduleStep& step);

// LowerSchedule of each step's snapshot, in record order (one PrimFunc per
// step, each named `name`). The first step that fails to lower gives the
// error, naming the step.
absl::StatusOr<std::vector<loop::PrimFunc>> LowerScheduleRecord(const Schedule& schedule,
                                                                const std::vector<Tensor>& params,
                                                                const std::string& name);

}  // namespace kiln::te
