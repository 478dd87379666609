// Finding the kernels of a lowered model a user means: by the position of
// its call in the optimized graph main, by its (fused function) name, or by
// an ONNX layer name its spans mention. Used by `kiln-opt --schedule-record`
// and the GetScheduleRecord RPC.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/lower/lower_module.h"

namespace kiln::lower {

// `selector` is tried as, in order: a call index (all digits), a kernel name
// or fused function name, a source (layer) name in a kernel's span. All
// matches are returned in kernel order. No match is a NotFound error listing
// the valid kernel names with their call indices.
absl::StatusOr<std::vector<const LoweredKernel*>> SelectKernels(const LoweredModule& lowered,
                                                                std::string_view selector);

}  // namespace kiln::lower
