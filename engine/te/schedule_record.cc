// Schedule record formatting and per-step lowering.
#include "engine/te/schedule_record.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/te/lower_schedule.h"

namespace kiln::te {

std::string FormatScheduleStep(const ScheduleStep& step) {
  return absl::StrCat(step.primitive, "(", absl::StrJoin(step.arguments, ", "), ")");
}

absl::StatusOr<std::vector<loop::PrimFunc>> LowerScheduleRecord(const Schedule& schedule,
                                                                const std::vector<Tensor>& params,
                                                                const std::string& name) {
  std::vector<loop::PrimFunc> funcs;
  const std::vector<ScheduleStep>& record = schedule.record();
  for (size_t i = 0; i < record.size(); ++i) {
    absl::StatusOr<loop::PrimFunc> func = LowerSchedule(record[i].snapshot, params, name);
    if (!func.ok()) {
      return absl::Status(func.status().code(),
                          absl::StrCat("step ", i, " ", FormatScheduleStep(record[i]), ": ",
                                       std::string(func.status().message())));
    }
    funcs.push_back(*std::move(func));
  }
  return funcs;
}

}  // namespace kiln::te
