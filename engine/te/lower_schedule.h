// Lowering a schedule to loop IR: one PrimFunc holding a loop nest per
// stage. Splits and fuses become index arithmetic over the leaf loops (with a
// guard where a factor does not divide the extent), reductions an
// initialization followed by accumulation, inlined stages substitutions, and
// compute_at stages loop nests inside their consumer over just the region it
// reads (bound inference, bound.h), in a buffer of that region's size.
// Every statement carries the span of the operation it computes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/prim_func.h"
#include "engine/te/schedule.h"

namespace kiln::te {

// The PrimFunc's params are the buffers of `params` in the given order
// (placeholders, then outputs, by convention); its kAttrGlobalSymbol is
// `name`. Every placeholder the schedule reads and every output must be a
// param. Other stages that are not inlined get an Allocate of their buffer's
// scope. Errors: the schedule's status(), a missing or unknown param, an
// inlined or compute_at param, a compute_at stage read by a stage other than
// its consumer, a compute_at axis that is no longer a loop of the consumer.
absl::StatusOr<loop::PrimFunc> LowerSchedule(const Schedule& schedule,
                                             const std::vector<Tensor>& params,
                                             const std::string& name);

}  // namespace kiln::te
