// Expanding and rendering schedule records.
#include "engine/lower/schedule_record.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/support/status_macros.h"
#include "engine/te/schedule_record.h"
#include "engine/te/verify_schedule.h"
#include "nlohmann/json.hpp"

namespace kiln::lower {
namespace {

// The source names of the stage a step acts on: its first argument names
// the stage (the step's own snapshot still has it, cache stages included).
std::vector<std::string> StepSpans(const LoweredKernel& kernel, const te::ScheduleStep& step) {
  if (step.primitive != "vanilla" && !step.arguments.empty()) {
    for (const te::StagePtr& stage : step.snapshot.stages()) {
      if (stage->name() == step.arguments[0]) return SpanSourceNames(stage->op->span);
    }
  }
  return SpanSourceNames(kernel.span);
}

std::string LoopText(const loop::PrimFunc& func, const PrintOptions& options) {
  PrintOptions script = options;
  script.format = PrintOptions::Format::kScript;
  return PrintNode(func, script);
}

}  // namespace

absl::StatusOr<std::vector<ScheduleRecordStep>> ExpandScheduleRecord(
    const LoweredKernel& kernel, uint64_t seed, bool verify,
    const loop::InterpreterOptions& interpreter, const te::StepExecutor& executor) {
  const std::vector<te::ScheduleStep>& record = kernel.schedule.record();
  if (record.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel ", kernel.name,
                     " has no schedule record (te.keep_schedule_record is off)"));
  }
  // A kernel over symbolic dims has no one input size to run its snapshots on: its record is
  // shown, not checked.
  bool symbolic = false;
  for (const te::Tensor& param : kernel.schedule_params) symbolic |= param.is_symbolic();
  verify = verify && !symbolic;
  std::vector<bool> verified;
  if (verify) {
    KILN_ASSIGN_OR_RETURN(verified,
                          te::VerifyScheduleRecord(kernel.schedule, kernel.schedule_params, seed,
                                                   interpreter, executor));
  }
  if (interpreter.is_cancelled && interpreter.is_cancelled()) {
    return absl::CancelledError(
        absl::StrCat("expanding the schedule record of ", kernel.name, " was cancelled"));
  }
  KILN_ASSIGN_OR_RETURN(
      std::vector<loop::PrimFunc> loop_ir,
      te::LowerScheduleRecord(kernel.schedule, kernel.schedule_params, kernel.name));
  std::vector<ScheduleRecordStep> steps;
  for (size_t i = 0; i < record.size(); ++i) {
    ScheduleRecordStep step;
    step.step = static_cast<int>(i);
    step.primitive = record[i].primitive;
    step.arguments = record[i].arguments;
    step.loop_ir = loop_ir[i];
    step.spans = StepSpans(kernel, record[i]);
    step.verified = i < verified.size() && verified[i];
    step.checked = verify;
    steps.push_back(std::move(step));
  }
  return steps;
}

std::string RenderScheduleRecordText(const LoweredKernel& kernel,
                                     const std::vector<ScheduleRecordStep>& steps,
                                     const PrintOptions& options) {
  std::string text;
  for (const ScheduleRecordStep& step : steps) {
    absl::StrAppend(&text, "# ", kernel.name, " step ", step.step, ": ", step.primitive, "(",
                    absl::StrJoin(step.arguments, ", "), ")",
                    !step.checked    ? ""
                    : step.verified ? "  [verified]"
                                    : "  [NOT verified: differs from vanilla]",
                    "\n", LoopText(step.loop_ir, options), "\n");
  }
  return text;
}

std::string RenderScheduleRecordJson(const LoweredKernel& kernel,
                                     const std::vector<ScheduleRecordStep>& steps,
                                     const PrintOptions& options) {
  std::string text;
  for (const ScheduleRecordStep& step : steps) {
    nlohmann::ordered_json object;
    object["kernel"] = kernel.name;
    object["step"] = step.step;
    object["primitive"] = step.primitive;
    object["arguments"] = step.arguments;
    object["loop_ir"] = LoopText(step.loop_ir, options);
    object["spans"] = step.spans;
    if (step.checked) object["verified"] = step.verified;
    absl::StrAppend(&text, object.dump(), "\n");
  }
  return text;
}

}  // namespace kiln::lower
