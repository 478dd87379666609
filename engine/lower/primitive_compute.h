// The tensor expressions of one Primitive graph function: a placeholder per
// parameter, each op call's compute definition (opened under the call's span,
// so every stage knows the layer it came from), tuples flattened. This is the
// step before scheduling; lower_primitive.h schedules and lowers the result.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/te/tensor.h"

namespace kiln::lower {

struct PrimitiveCompute {
  // One placeholder per tensor leaf of each parameter, in parameter order.
  std::vector<te::Tensor> inputs;
  // One compute per tensor leaf of the result. Distinct operations, never a
  // placeholder (a result that is a parameter or repeats is copied), so every
  // output is written by the kernel.
  std::vector<te::Tensor> outputs;
  // Non-scalar constants in the body: placeholders bound, after the outputs,
  // to these constants' data. Scalar constants become immediates instead.
  std::vector<te::Tensor> constant_inputs;
  std::vector<Constant> constants;
};

// Errors a user can cause (symbolic shapes, an op without a compute, an
// unsupported construct) name the op and its span:
// "nn.conv2d (si=conv1): symbolic shapes are not supported".
absl::StatusOr<PrimitiveCompute> BuildPrimitiveCompute(const FunctionNode& func);

}  // namespace kiln::lower
