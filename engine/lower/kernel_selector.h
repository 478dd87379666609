// Finding the kernels of a lowered model a user means: by the position of
// its call in the optimized graph main, by its (fused function) name, or by
// an ONNX layer name its spans mention. Used by `kiln-opt --schedule-record`
// and the GetScheduleRecord RPC.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/lower/lower_module.h"
#include "engine/lower/lower_options.h"

namespace kiln::lower {

// `selector` is tried as, in order: a call index (all digits), a kernel name
// or fused function name, a source (layer) name in a kernel's span. All
// matches are returned in kernel order. No match is a NotFound error listing
// the valid kernel names with their call indices.
absl::StatusOr<std::vector<const LoweredKernel*>> SelectKernels(const LoweredModule& lowered,
                                                                std::string_view selector);

// Whether `selector` could select `kernel` by any of the three rules (a
// superset of what SelectKernels picks): lowering only these kernels
// (LowerOptions::only_kernels) is enough for SelectKernels to answer.
bool KernelMayMatch(std::string_view selector, const KernelCandidate& kernel);

}  // namespace kiln::lower
