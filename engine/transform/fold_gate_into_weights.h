// FoldGateIntoWeights: a per-channel scale computed at run time (the gate of a
// squeeze-excitation block) folded into the weights of the blocked convolution
// that reads the scaled value, when scaling the weights costs less than scaling
// the activation.
//
// Why it is correct: a convolution with one group is linear in each input
// channel, and input channel k meets only weight slice k along the reduced
// axis, so conv(x * s[k], w) = conv(x, w * s[k] along w's input channels).
// Padding channels of a blocked layout carry zero weights: 0 * s stays 0.
//
// Why it pays: a squeeze-excitation block multiplies an H x W x C activation by
// C gates and the projection convolution reads the product; FoldScaleAxis
// cannot fold a gate, which is no constant. Scaling the O x C x KH x KW weights
// instead touches far fewer values early in a network (112 x 112 x 32 values
// against 16 x 32 weights in EfficientNet's first block), and the activation is
// no longer written and read back once more. The fold is made only where the
// activation has at least 8 values per weight; late layers (14 x 14 and 7 x 7
// maps, hundreds of channels) keep the multiply.
//
// The pattern, after ConvertLayout (values in NCHW{b}c, weights packed
// OIHW{ib}i{b}o, shape (O/b, C/ib, KH, KW, ib, b)):
//   nn.conv2d_nchwc(multiply(x, s), w)  ->  nn.conv2d_nchwc(x, multiply(w, s'))
// where x is (1, C/ib, H, W, ib), s is (1, C/ib, 1, 1, ib) (either operand
// order), w is a constant, the convolution has one group, the multiply has no
// other user, and s' = reshape(s, (1, C/ib, 1, 1, ib, 1)) lines the gate up
// with w's input-channel axes. A batch larger than one has a gate per image and
// is left alone.
//
// Spans, through SIBuilder: the weight multiply and s' carry [multiply, conv];
// the rebuilt convolution [conv, multiply] (it now computes both). Fused
// (Primitive) functions are left alone. Opt level 3; requires InferType.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

Pass FoldGateIntoWeights();

}  // namespace kiln::transform
