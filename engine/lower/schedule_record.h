// The schedule record of a lowered kernel, step by step, as users see it:
// each primitive with its arguments, the kernel's loop IR after the step, the
// layers the step's stage computes, and whether that loop IR still computes
// what the vanilla schedule does. Rendered as text or as JSON lines (one
// object per step) for `kiln-opt --schedule-record` and GetScheduleRecord.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/interpreter.h"
#include "engine/loop/prim_func.h"
#include "engine/lower/lower_module.h"
#include "engine/printer/printer.h"
#include "engine/te/verify_schedule.h"

namespace kiln::lower {

struct ScheduleRecordStep {
  int step = 0;
  std::string primitive;               // "vanilla", "split", ...
  std::vector<std::string> arguments;  // stage name, axes, "factor=8", ...
  loop::PrimFunc loop_ir;              // the kernel lowered from the step's snapshot
  // Source names of the stage the step acts on (the kernel's for "vanilla").
  std::vector<std::string> spans;
  // The step's loop IR gives the vanilla schedule's results on random inputs
  // (te::VerifyScheduleRecord).
  bool verified = false;
  bool checked = false;  // verification ran (ExpandScheduleRecord's `verify`)
};

// Every step of `kernel`'s record. An empty record (te.keep_schedule_record
// off) is a FailedPrecondition error saying so. With `verify`, every step's
// loop IR runs in the interpreter on random inputs from `seed` against the
// vanilla step (costly for large kernels: the interpreter's step budget
// bounds it, and `interpreter` can cancel it); without, `verified` stays
// false.
// `executor` (te::StepExecutor) runs the steps instead of the interpreter when given.
absl::StatusOr<std::vector<ScheduleRecordStep>> ExpandScheduleRecord(
    const LoweredKernel& kernel, uint64_t seed = 0, bool verify = true,
    const loop::InterpreterOptions& interpreter = {}, const te::StepExecutor& executor = {});

// Text: per step a header line
//   # KERNEL step N: primitive(arguments)  [verified]
// (or `[NOT verified: differs from vanilla]`), then the loop IR as script.
std::string RenderScheduleRecordText(const LoweredKernel& kernel,
                                     const std::vector<ScheduleRecordStep>& steps,
                                     const PrintOptions& options = {});
// JSON lines: one object per step with "kernel", "step", "primitive",
// "arguments", "loop_ir" (script text), "spans" and "verified".
std::string RenderScheduleRecordJson(const LoweredKernel& kernel,
                                     const std::vector<ScheduleRecordStep>& steps,
                                     const PrintOptions& options = {});

}  // namespace kiln::lower
