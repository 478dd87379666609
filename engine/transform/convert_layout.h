// ConvertLayout: the AlterOpLayout of Kiln. Convolutions run in a blocked
// channel layout, NCHW{b}c, so their kernels vectorize over b output channels
// of one block and broadcast one input value to all of them (no lanes lost to
// odd feature-map widths, no gathers); the layout then follows the values
// through the ops that do not care about it, so transforms happen only where
// an NCHW op or the graph's edge needs NCHW.
#pragma once

#include <cstdint>

#include "engine/pass/pass.h"

namespace kiln::transform {

// Rewrites, in one post-order walk:
//  * nn.conv2d with static float shapes, output channels a multiple of
//    `block`, groups 1 or depthwise (groups = channels), and a constant
//    weight -> nn.conv2d_nchwc over layout_transform(data, NCHW -> NCHW{b}c)
//    and the weight packed here to OIHW{b}i{b}o or OIHW1i{b}o (run after
//    FoldConstant, so folded weights are constants); input channels that are
//    not a multiple of `block` (an image's 3) are read as NCHW1c, a reshape;
//  * elementwise and broadcast ops on 4-D values with channels a multiple of
//    `block` whose operands include a blocked value: computed blocked, other
//    operands re-blocked (per-channel constants packed here, extent-1
//    channels reshaped);
//  * max and average pooling of a blocked value -> 3-D pooling over
//    (H, W, b) with a window of extent 1 along b;
//  * global average and max pooling of a blocked value -> mean / max over
//    axes 2 and 3, keeping the block axis; concatenate along channels of
//    values whose channels are multiples of `block`.
//  * a product by a constant weight (nn.dense's (N, K) of a rank >= 2 input,
//    nn.matmul's (K, N) without transposes), one row with N >= block or
//    more rows with N >= 4 * block -> nn.matmul over the weight packed here
//    into panels (N/b, K, b), then reordered and sliced back to (..., N);
//    a narrower nn.dense -> nn.matmul with the weight transposed here to
//    (K, N) (output columns vectorize over contiguous weights).
// Every converted value is seen by the rest of the graph through one
// layout_transform back to NCHW, dead once all its readers are converted.
// New nodes carry the span of the node they replace. Opt level 3; requires
// InferType. block = 0 turns the pass off.
Pass ConvertLayout(int64_t block);

inline constexpr int64_t kDefaultLayoutBlock = 8;

}  // namespace kiln::transform
