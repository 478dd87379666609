// The default schedule of one fused function's tensors: what every kernel
// gets before any tuning. Elementwise and injective producers are inlined
// into their readers; each remaining stage gets a loop nest whose outer loops
// run in parallel and whose innermost data-parallel loop is vectorized when
// its extent allows. Every primitive goes through te::Schedule, so the
// schedule record shows each decision.
#pragma once

#include <unordered_map>
#include <vector>

#include "engine/te/schedule.h"
#include "engine/te/tensor.h"

namespace kiln::lower {

// Lanes tried for the innermost loop, widest first; an extent that is a
// multiple of none of them is not vectorized (no guarded vector loops).
// 7, 6 and 5 lanes serve the odd widths of CNN feature maps (14, 28, 7, 49):
// LLVM widens such a vector to the next register size, which beats scalar
// code several times over.
inline constexpr int64_t kVectorWidths[] = {8, 7, 6, 5, 4};
// Leading data-parallel loops are fused until the parallel loop has at least
// this many iterations (or no data-parallel loop is left to fuse).
inline constexpr int64_t kMinParallelExtent = 16;
// A kernel doing less work than this (output elements times reduce steps, summed over its
// stages) runs its loops serially: a parallel loop costs a wakeup and a join of the pool's
// threads (about a microsecond each on these VMs), more than splitting a few microseconds of
// work saves. A recurrent layer's step (its gates, its state copies) runs 200 times per run:
// 2 threads took 1.8x one thread's time with every kernel parallel. Measured on 2 threads
// (LSTM of 200 steps / transformer encoder): 2^17 0.62 / 5.71 ms, 2^16 0.48 / 5.74, 2^15
// 0.50 / 5.36, 0 (every kernel parallel) 1.22 / 5.43: its 512 x 128 dense (2^16) gains from
// a second thread, its 2^11-element gates do not.
inline constexpr int64_t kMinParallelWork = 1 << 15;
// The extents the second-innermost output loop of a reduction is tiled by,
// the first that divides it (a register tile with the vector loop).
inline constexpr int64_t kReductionRowTiles[] = {4, 7};
// The extents the third-innermost output loop of a reduction (a convolution's
// output channels) is tiled by, the first that divides it and keeps the
// tile's vector accumulators (channels x rows) at most the options' max_accumulators.
inline constexpr int64_t kReductionChannelTiles[] = {4, 2};
// The most accumulators of any register tile, whatever the target's registers.
inline constexpr int64_t kMaxAccumulators = 16;
// The most accumulators a register tile may hold on a target with `vector_registers` registers:
// the rest hold the reduce step's weight vectors and broadcast input. With AVX2's 16 registers a
// 16-vector tile spilled every reduce step (MobileNetV2 15.5 -> 8.7 ms and ResNet-50 286 -> 115
// ms on one Zen 3 core with 12; a 14-vector tile (2 x 7) spilled too, 2x slower again).
inline constexpr int64_t MaxAccumulatorsFor(int64_t vector_registers) {
  return vector_registers - 4 < kMaxAccumulators ? vector_registers - 4 : kMaxAccumulators;
}
// Vectors per row of a reduction's tile when the third-innermost axis is not
// tiled (a matmul or dense: rows x columns), the first that divides the
// vector count and keeps the tile at most the options' max_accumulators vectors.
inline constexpr int64_t kReductionColumnTiles[] = {4, 2};
// Injective stages (transposes, shuffles, concats) whose rows have at least
// this many elements are scheduled row by row, like paddings.
inline constexpr int64_t kMinInjectiveRowExtent = 16;
// An elementwise stage is inlined into its readers only while its body, with the stages it reads
// inlined too, counts at most this many loads: a stage read twice by each next one doubles at
// every step, so unbounded inlining of a 40-step chain would build 2^40 loads. Past the bound the
// stage is stored and its readers load it once.
inline constexpr int64_t kMaxInlinedSize = 256;
// A blocked convolution's register tile: output columns (a divisor of the
// output width from this list) x output-channel blocks (a divisor of the block
// count from the next), the largest at most the options' max_accumulators vectors, of equal
// ones the one with more blocks (fewer broadcast loads per multiply-add).
// (28 accumulators on a 32-register AVX-512 core measured 1.6x slower: spills.)
inline constexpr int64_t kBlockedConvColumnTiles[] = {8, 7, 6, 5, 4, 3, 2};
inline constexpr int64_t kBlockedConvBlockTiles[] = {4, 2, 1};
// A blocked convolution's innermost reduce loop unrolled whole (a depthwise or unblocked
// input's kernel columns, a block's input lanes) has at most this many steps.
inline constexpr int64_t kMaxUnrolledReduceSteps = 16;
// A block's input lanes are unrolled whole up to kMaxWholeLaneSteps (AVX2's 8); more (an
// AVX-512 block's 16) in groups of kLaneStepGroup.
inline constexpr int64_t kMaxWholeLaneSteps = 8;
inline constexpr int64_t kLaneStepGroup = 4;
// A dense blocked convolution (1x1, 3x3, ...) with output blocks of at most
// kMaxChunkedConvLanes lanes whose output map has at most kSmallMapPixels pixels (7x7 and
// smaller), or whose register tile's weights exceed kPointwiseChunkBytes, is computed a few
// output blocks at a time over the whole map, or over strips of whole rows of at most
// kPointwiseStripPixels pixels, its reduction in chunks whose weights and input fit, with the
// strip's accumulators, in kPointwiseChunkBytes (of a 32 KB L1).
inline constexpr int64_t kMaxChunkedConvLanes = 8;
inline constexpr int64_t kSmallMapPixels = 49;
inline constexpr int64_t kPointwiseStripPixels = 32;
inline constexpr int64_t kPointwiseChunkBytes = 24 * 1024;
// Its parallel loop (batches x block tiles x strips) gets at least this many iterations when it
// runs in parallel, by tiles of fewer blocks.
inline constexpr int64_t kMinPointwiseParallelTiles = 4;

// The schedule of `outputs` (the results of one fused function):
//  * every compute stage that is not an output, does not reduce and does not pad
//    (te::kPadTag) is inlined into its readers (compute_inline);
//  * a reduction stage (conv2d, dense, matmul, pooling, reduce, the maxima and
//    sums of softmax, ...): the innermost output axis is split by a vector
//    width that divides it, the axis before it is tiled by kReductionRowTiles
//    and the one before that by kReductionChannelTiles (or, when it is not, the
//    vectors of a row by kReductionColumnTiles), the reduce loops move
//    inside the outer output loops and outside the tile,
//    the vector loop is vectorized, the row-tile loop unrolled, and the outer
//    loops are fused and run in parallel;
//  * a blocked convolution (nn.conv2d_nchwc): a register tile of output-channel
//    blocks x output columns around the reduce loops; when an elementwise
//    epilogue is its only reader, the epilogue is tiled so and the convolution
//    computed at its tile loop into a tile-sized buffer (registers);
//  * a padding stage, or an injective one whose rows hold at least
//    kMinInjectiveRowExtent elements: the leading axes fused until kMinParallelExtent
//    iterations and parallel, the axes after them serial, each row a loop of its own, vectorized when a vector width divides it (a row of one vector,
//    a channel block, keeps the axis before it serial too), scalar otherwise;
//  * any other stage left (an elementwise or injective output): all axes are
//    fused, split by a vector width that divides the total, the inner loop
//    vectorized and the outer one parallel.
// Primitive errors are kept in the schedule's status() (see schedule.h).
struct DefaultScheduleOptions {
  // Keep a snapshot after every primitive (the schedule record).
  bool keep_record = true;
  // The target's float32 lanes per vector register (codegen's VectorFloatLanes): a reduction
  // whose innermost output extent is a multiple of it is vectorized by it, so each accumulator
  // of its register tile fills a whole register (AVX-512's 16 lanes: half the broadcasts and
  // loads per multiply-add of 8). Other extents use kVectorWidths.
  int64_t vector_lanes = kVectorWidths[0];
  // Kernels doing less work than this run serially (kMinParallelWork; 0: every kernel's
  // outer loops run in parallel).
  int64_t min_parallel_work = kMinParallelWork;
  // The most vector accumulators of a register tile (MaxAccumulatorsFor the target's registers).
  int64_t max_accumulators = kMaxAccumulators;
};
// The size the body of `stage` grows to once the stages it reads that are inlined (sizes by
// buffer) are substituted into it; inlining stops past kMaxInlinedSize, so a chain of stages
// that each read a value twice cannot grow a kernel exponentially.
int64_t InlinedSize(const te::Stage& stage,
                    const std::unordered_map<const loop::BufferNode*, int64_t>& inlined_sizes);

te::Schedule CreateDefaultSchedule(const std::vector<te::Tensor>& outputs,
                                   const DefaultScheduleOptions& options);

}  // namespace kiln::lower
