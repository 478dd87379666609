// FoldScaleAxis: moves per-channel scaling into the weight of the layer next
// to it (convolution, dense, matmul by a constant), so that FoldConstant then
// computes the scaled weight at compile time and the multiply disappears.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Two rewrites, where s is an expression of constants only (no variables):
//
//  * Backward: multiply(E, s) where E ends in a layer L(x, w) and s varies
//    along L's output channel axis only (or is a single value):
//      multiply(L(x, w), s)              -> L(x, multiply(w, s'))
//      multiply(add(E, b), s)            -> add(E*, multiply(b, s))
//      multiply(nn.bias_add(E, b), s)    -> nn.bias_add(E*, multiply(b, s'))
//      multiply(nn.relu(E), s)           -> nn.relu(E*)   only if every value of
//                                           s is a constant > 0
//    where E* is E with s folded into it, b a bias varying along the channel
//    axis only, and s' is s reshaped to line up with the weight's output
//    channel axis (for conv2d: (C, 1, 1, 1); omitted when s already does).
//  * Forward: L(multiply(x, s), w) with s varying along the axis L reduces
//    over (conv input channels, groups = 1 only; dense input features):
//      L(multiply(x, s), w)              -> L(x, multiply(w, s'))
//
// Layers and channel axes: nn.conv1d/2d/3d (data NC..., weight OI...: output
// axis 1 -> weight axis 0; input axis 1 -> weight axis 1), nn.dense (weight
// (N, K): output last axis -> weight axis 0; input last axis -> weight axis
// 1) and nn.matmul with a constant right operand (output last axis -> b's
// column axis; a's contraction axis -> b's row axis; transposes respected).
// A matmul of two computed values is left alone: scaling one of them at run
// time would cost as much as the multiply it replaces.
//
// Every intermediate value (the layer's result, the bias add, the relu, the
// forward multiply) must have no other user, or it would change for them.
// Values bound by let are not looked through (the pipelines run this pass on
// graph normal form).
// New nodes are typed (the pass runs after InferType and leaves the module
// typed). Spans, through SIBuilder: the new weight multiply and reshape carry
// [scale multiply, layer]; the rebuilt layer [layer, scale multiply] (it now
// computes both); a rebuilt add / bias_add / relu [itself, scale multiply];
// the scaled bias (and its reshape) [scale multiply, add].
// Fused (Primitive) functions are left alone. Opt level 3; requires InferType.
Pass FoldScaleAxis();

}  // namespace kiln::transform
