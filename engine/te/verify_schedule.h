// Step verification of a schedule record: every step's loop IR must compute
// what the vanilla schedule computes. Each step is lowered and run (with the
// loop interpreter, or an executor the caller gives, such as native code) on
// the same seeded random inputs, and its outputs are
// compared with the vanilla step's (integers exactly; floats within a
// relative tolerance, because reorder and split may reassociate a sum).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/interpreter.h"
#include "engine/te/schedule.h"

namespace kiln::te {

// One entry per record step (step 0, the vanilla schedule, is true when it
// runs). A later step that fails to lower or to run is false: it does not
// compute what the vanilla step does. Errors: the schedule keeps no record,
// or the vanilla step itself fails to lower or run. `params` as for
// LowerSchedule: placeholders are filled from `seed`, the others are outputs.
// `interpreter` bounds every run (step budget, memory, cancellation); a
// cancelled run ends verification with its Cancelled status.
//
// `executor`, when given, runs each step instead of the interpreter: the
// step's PrimFunc (as LowerSchedule made it) on `args` in param order, where
// `is_input[i]` tells inputs from outputs; it writes the outputs in place.
using StepExecutor = std::function<absl::Status(const loop::PrimFunc& step,
                                                const std::vector<loop::HostTensor*>& args,
                                                const std::vector<bool>& is_input)>;
absl::StatusOr<std::vector<bool>> VerifyScheduleRecord(
    const Schedule& schedule, const std::vector<Tensor>& params, uint64_t seed,
    const loop::InterpreterOptions& interpreter = {}, const StepExecutor& executor = {});

}  // namespace kiln::te
