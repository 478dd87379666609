// Bounded outputs: outputs whose extent along one axis only a run decides (NonZero, Compress,
// Unique and NonMaxSuppression where the ONNX model declares no static shape) are compiled at
// their static upper bound, main appending each one's length as an int64 scalar output
// (onnx_frontend's kBoundedOutputsAttr, lower::BoundedOutput). Whoever runs the model cuts each
// to its length and drops the length outputs, leaving the model's own outputs at the extents the
// run filled.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/loop/host_tensor.h"
#include "engine/lower/lower_module.h"

namespace kiln::driver {

// The bounded outputs `imported` records, checked against lowered main's outputs: graph text may
// carry any attribute, so a malformed one is an InvalidArgument error naming it.
absl::StatusOr<std::vector<lower::BoundedOutput>> ReadBoundedOutputs(
    const IRModule& imported, const lower::LoweredModule& lowered);

// After a run of main: each bounded output cut to its length, and the length outputs removed from
// `outputs` and `names` (in step; `names` may be null). A length outside [0, the compiled bound]
// (a module whose attribute names another output as the length) is a FailedPrecondition error.
absl::Status CutBoundedOutputs(const std::vector<lower::BoundedOutput>& bounded,
                               std::vector<loop::HostTensor>* outputs,
                               std::vector<std::string>* names = nullptr);

}  // namespace kiln::driver
