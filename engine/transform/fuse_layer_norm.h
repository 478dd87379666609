// FuseLayerNorm: a layer normalization written out op by op, as ONNX exporters
// before opset 17 emit it (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
// Mul, Add), becomes one nn.layer_norm, whose compute is one row-wise kernel
// (te::kRowNormalizationTag); op by op it is five kernels that each read the
// tensor. ONNX Runtime's LayerNormFusion does the same.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Matches, with x a float32 tensor of static shape and A its trailing axes
// [axis, rank) (negative or not, as the means write them):
//   d = subtract(x, mean(x, A, keepdims))
//   v = mean(power(d, 2) or multiply(d, d), A, keepdims)
//   n = divide(d, sqrt(add(v, eps))) or multiply(d, rsqrt(add(v, eps)))
//   multiply(n, gamma), then optionally add(., beta)
// (operands of add and multiply in either order) where eps is a scalar
// constant and gamma, beta are constants whose shape is a suffix of x's within
// A, and every node between the multiply and x is used only inside the pattern
// (else its work would stay and the fused op would add a kernel). The match
// becomes nn.layer_norm(x, gamma[, beta], axis, epsilon) carrying
// the spans of every node it replaces. An nn.layer_norm without beta followed
// by the add of such a beta (its only use) takes the beta in. Opt level 3;
// requires InferType.
Pass FuseLayerNorm();

}  // namespace kiln::transform
