// The default schedule heuristics, stage by stage.
#include "engine/lower/default_schedule.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "engine/loop/functor.h"
#include "engine/te/load_rewriter.h"

namespace kiln::lower {
namespace {

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

// The widest vector width that divides `extent`, or 0.
int64_t VectorFactor(int64_t extent) {
  for (int64_t width : kVectorWidths) {
    if (extent >= width && extent % width == 0) return width;
  }
  return 0;
}

bool IsReduction(const te::Stage& stage) {
  return stage.op->body.has_value() && stage.op->body->reduce.has_value();
}

// Whether the kernel being scheduled runs its outer loops in parallel (its work is at least
// DefaultScheduleOptions::min_parallel_work).
struct Parallelism {
  bool enabled = true;
};

// Fuses the leading data-parallel leaves (stopping before `stop`) until the
// loop has kMinParallelExtent iterations, and marks the result parallel.
void ParallelizeOuter(te::Schedule& schedule, const te::Tensor& t, const te::IterVar& stop,
                      Parallelism parallel) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  if (!parallel.enabled || leaves.empty() || leaves[0]->is_reduce || leaves[0] == stop) return;
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size() && fused->extent < kMinParallelExtent; ++i) {
    if (leaves[i]->is_reduce || leaves[i] == stop) break;
    te::IterVar next = schedule.Fuse(t, fused, leaves[i]);
    if (!next) return;  // the error is in schedule.status()
    fused = next;
  }
  schedule.Parallel(t, fused);
}

// Whether every load in `stage`'s body has an index that varies with `axis`.
bool EveryLoadVariesWith(const te::Stage& stage, const te::IterVar& axis) {
  bool every = true;
  te::RewriteLoads(stage.op->body->value,
                   [&](const loop::BufferLoadNode*, const std::vector<loop::PrimExpr>& indices) {
                     bool varies = false;
                     for (const loop::PrimExpr& index : indices) {
                       loop::Substitute(index, [&](const loop::VarNode* var) {
                         varies |= var == axis->var.get();
                         return loop::PrimExpr();
                       });
                     }
                     every &= varies;
                     return loop::PrimExpr();
                   });
  return every;
}

void ScheduleReduction(te::Schedule& schedule, const te::Tensor& t, int64_t vector_lanes,
                       int64_t max_accumulators, Parallelism parallel) {
  std::vector<te::IterVar> axes = schedule.Axes(t);
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(t);
  if (axes.empty()) return;  // a full reduction to a scalar: one serial nest

  const te::IterVar& x = axes.back();
  int64_t lanes = x->extent % vector_lanes == 0 ? vector_lanes : VectorFactor(x->extent);
  if (lanes == 0) {
    ParallelizeOuter(schedule, t, nullptr, parallel);
    return;
  }
  te::IterVar x_outer, x_inner = x;
  if (x->extent > lanes) std::tie(x_outer, x_inner) = schedule.Split(t, x, lanes);

  te::IterVar y_outer, y_inner;
  int64_t rows = 1;
  if (axes.size() >= 2) {
    const te::IterVar& y = axes[axes.size() - 2];
    for (int64_t tile : kReductionRowTiles) {
      if (y->extent > tile && y->extent % tile == 0) {
        std::tie(y_outer, y_inner) = schedule.Split(t, y, tile);
        rows = tile;
        break;
      }
    }
  }
  // The axis before the rows (a convolution's output channels) is tiled too, while the tile
  // keeps at most max_accumulators vectors: each input row loaded then feeds that many channels.
  // Not a matmul's when both operands vary along that axis (a batched matmul's heads in
  // attention): such a tile shares no load, where columns of a row share the row's broadcasts
  // (attention's two products 1.15 -> 0.70 and 0.87 -> 0.50 ms on a Zen 3 core). A matmul whose
  // left operand is shared along it (the packed panels of ConvertLayout) keeps the tile.
  te::IterVar z_outer, z_inner;
  const te::Stage& stage = *schedule.FindStage(t);
  const bool batched_matmul = axes.size() >= 3 && stage.op->tag == "matmul" &&
                              EveryLoadVariesWith(stage, axes[axes.size() - 3]);
  if (axes.size() >= 3 && !batched_matmul) {
    const te::IterVar& z = axes[axes.size() - 3];
    for (int64_t tile : kReductionChannelTiles) {
      if (tile * rows <= max_accumulators && z->extent > tile && z->extent % tile == 0) {
        std::tie(z_outer, z_inner) = schedule.Split(t, z, tile);
        break;
      }
    }
  }

  // Without a channel tile (a matmul's rows x columns), each row of the tile holds several
  // vectors of columns: enough accumulators to hide the FMA latency.
  te::IterVar columns_inner;
  if (!z_inner && x_outer && !reduce_axes.empty()) {
    for (int64_t tile : kReductionColumnTiles) {
      if (tile * rows <= max_accumulators && x_outer->extent > tile &&
          x_outer->extent % tile == 0) {
        std::tie(x_outer, columns_inner) = schedule.Split(t, x_outer, tile);
        break;
      }
    }
  }

  // [outer axes..., z.outer, x.outer, y.outer, reduce axes..., z.inner, y.inner, columns, x.inner]:
  // each reduce step updates a tile of outputs, the vector lanes innermost. A matmul's tiles
  // (rows x several column vectors, no channel tile) take the column tiles outside the rows: the strip of the
  // right operand one column tile reads (K x columns) then stays in L1/L2 while every row tile
  // reads it, where row tiles outside would stream the whole operand once per row tile (a
  // transformer's 1 MiB weights, from L3).
  const bool columns_outside_rows = columns_inner && y_outer;
  std::vector<te::IterVar> order;
  for (size_t i = 0; i + 3 < axes.size(); ++i) order.push_back(axes[i]);
  if (axes.size() >= 3) order.push_back(z_outer ? z_outer : axes[axes.size() - 3]);
  if (columns_outside_rows) order.push_back(x_outer);
  if (axes.size() >= 2) order.push_back(y_outer ? y_outer : axes[axes.size() - 2]);
  if (x_outer && !columns_outside_rows) order.push_back(x_outer);
  order.insert(order.end(), reduce_axes.begin(), reduce_axes.end());
  if (z_inner) order.push_back(z_inner);
  if (y_inner) order.push_back(y_inner);
  if (columns_inner) order.push_back(columns_inner);
  order.push_back(x_inner);
  schedule.Reorder(t, order);
  schedule.Vectorize(t, x_inner);
  // The tile is unrolled: one vector accumulator per row, column vector and
  // reduce step, which code generation keeps in registers.
  if (z_inner) schedule.Unroll(t, z_inner);
  if (y_inner) schedule.Unroll(t, y_inner);
  if (columns_inner) schedule.Unroll(t, columns_inner);
  // The tile loops stay serial: only loops outside the reduction run in parallel.
  ParallelizeOuter(schedule, t, reduce_axes.empty() ? x_inner : reduce_axes.front(), parallel);
}

// The register tile of a blocked convolution (te::kBlockedConvTag) whose output is
// (N, O/b, OH, OW, b): `blocks` output-channel blocks x `columns` output columns, one vector of
// b lanes each, updated by every reduce step from one broadcast input value per column and one
// weight vector per block. A depthwise convolution shares no input between blocks: one block.
struct BlockedConvTile {
  int64_t blocks = 1, columns = 1;
};

BlockedConvTile ChooseBlockedConvTile(const std::vector<te::IterVar>& axes, bool depthwise,
                                      int64_t max_accumulators) {
  // The largest tile that fits, and of equal ones the one with more blocks: each reduce step
  // then loads fewer broadcast inputs per multiply-add.
  BlockedConvTile best;
  for (int64_t columns : kBlockedConvColumnTiles) {
    if (axes[3]->extent % columns != 0) continue;
    for (int64_t blocks : kBlockedConvBlockTiles) {
      if ((depthwise && blocks > 1) || axes[1]->extent % blocks != 0 ||
          blocks * columns > max_accumulators) {
        continue;
      }
      int64_t size = blocks * columns, best_size = best.blocks * best.columns;
      if (size > best_size || (size == best_size && blocks > best.blocks)) best = {blocks, columns};
    }
  }
  // A 1-block tile (a block count neither 4 nor 2 divides: 24 channels, ShuffleNet's 116 padded
  // to 120; or a 7- or 14-wide map, where 1 x 7 beats 2 x 2 in size) loads a broadcast input per
  // multiply-add, and each of its blocks reads the whole input again: 3 blocks instead when 3
  // divides the count, as wide as the accumulators, a broadcast per column and a weight vector
  // fit the registers (max_accumulators + 4; as PlanConvInChunks). On AVX2 that is 3 x 3 or
  // 3 x 2 (3 x 4 spilled): ShuffleNet x0.93-0.94, the other models within 1%, paired runs on one
  // Zen 3 core.
  if (!depthwise && best.blocks == 1 && axes[1]->extent % 3 == 0) {
    for (int64_t columns : kBlockedConvColumnTiles) {
      if (axes[3]->extent % columns == 0 && 3 * columns + columns + 1 <= max_accumulators + 4) {
        return {3, columns};
      }
    }
  }
  return best;
}

// A blocked convolution's stride: its input's width over its output's (the input padded or not,
// the quotient rounds down to the stride), at least 1.
int64_t ConvStride(const te::Tensor& conv, const std::vector<te::IterVar>& reduce_axes) {
  for (const te::Tensor& input : conv.op()->inputs) {
    if (input.ndim() == 5 && reduce_axes.size() == 4 && input.shape()[1] == reduce_axes[0]->extent &&
        input.shape()[4] == reduce_axes[3]->extent) {
      return std::max<int64_t>(1, input.shape()[3] / conv.shape()[3]);
    }
  }
  return 1;
}

// Whether a dense blocked convolution with output axes (N, O/b, OH, OW, b), reduce axes (input
// blocks, kernel rows, kernel columns, input lanes) and `stride` splits its parallel loop by
// output rows rather than output-channel blocks. A row split has each thread read all the
// weights and its rows of the input; a block split, its share of the weights and all the input.
// Rows when, per input channel, the input (OH x OW x stride^2) is at least the weights (kernel
// rows x kernel columns x O): the large maps of a network's first stages. Kernels on such maps
// then split alike, and with the thread pool's fixed ranges (engine/runtime/thread_pool.c) each
// thread reads the rows it wrote in the kernel before, on its own core: ResNet-50 and DenseNet
// on 2 threads x0.96-0.98 and x0.92 the time of block splits. Small maps, whose weights are the
// traffic (MobileNetV3's and EfficientNet's 7x7 layers), ran x1.02-1.05 slower split by rows.
bool SplitsByRows(const std::vector<te::IterVar>& axes, const std::vector<te::IterVar>& reduce_axes,
                  int64_t stride) {
  if (axes.size() != 5 || reduce_axes.size() != 4) return false;
  int64_t input_pixels = axes[2]->extent * axes[3]->extent * stride * stride;
  int64_t weights = reduce_axes[1]->extent * reduce_axes[2]->extent * axes[1]->extent * axes[4]->extent;
  return input_pixels >= weights;
}

// The loops of a blocked convolution's output `t` split by `tile`:
// [n, blocks.outer, oh, columns.outer, <middle>..., blocks.inner, columns.inner, b], or with
// `rows_first` [n, oh, blocks.outer, columns.outer, ...], the tile unrolled and b vectorized. An
// axis the tile covers whole is not split (its outer is null). `tile_at` is the loop the tile is
// computed at: the column tiles', or without them the last of the rows and block loops (a tile
// as wide as the row is then computed per row).
struct TiledOutput {
  te::IterVar blocks_outer, columns_outer, tile_at;
};

TiledOutput TileBlockedOutput(te::Schedule& schedule, const te::Tensor& t, BlockedConvTile tile,
                              const std::vector<te::IterVar>& middle, bool rows_first) {
  std::vector<te::IterVar> axes = schedule.Axes(t);
  TiledOutput tiled;
  te::IterVar blocks_inner, columns_inner;
  if (tile.blocks > 1 && axes[1]->extent > tile.blocks) {
    std::tie(tiled.blocks_outer, blocks_inner) = schedule.Split(t, axes[1], tile.blocks);
  } else if (tile.blocks > 1) {
    blocks_inner = axes[1];
  }
  if (tile.columns > 1 && axes[3]->extent > tile.columns) {
    std::tie(tiled.columns_outer, columns_inner) = schedule.Split(t, axes[3], tile.columns);
  } else if (tile.columns > 1) {
    columns_inner = axes[3];
  }
  std::vector<te::IterVar> order = {axes[0]};
  if (rows_first) order.push_back(axes[2]);
  if (tiled.blocks_outer) order.push_back(tiled.blocks_outer);
  if (!blocks_inner) order.push_back(axes[1]);
  if (!rows_first) order.push_back(axes[2]);
  if (tiled.columns_outer) order.push_back(tiled.columns_outer);
  tiled.tile_at = order.back();
  if (!columns_inner) order.push_back(axes[3]);
  order.insert(order.end(), middle.begin(), middle.end());
  if (blocks_inner) order.push_back(blocks_inner);
  if (columns_inner) order.push_back(columns_inner);
  order.push_back(axes[4]);
  schedule.Reorder(t, order);
  schedule.Vectorize(t, axes[4]);
  if (blocks_inner) schedule.Unroll(t, blocks_inner);
  if (columns_inner) schedule.Unroll(t, columns_inner);
  return tiled;
}

// A depthwise or strided blocked convolution reads its padding inlined, as bounds tests on the
// input, instead of a padded copy; LoopPartition (loop_transform/loop_partition.h) then splits
// the column-tile and kernel-row loops so the tests remain only at the border. A depthwise one
// does only 9 (or 25) multiply-adds per input value, too few to pay for writing and reading a
// copy. A strided one's copy is the whole input, which it reads only once: memory-bound work a
// second thread does not speed up (3x3 stride 2 at 56x56x128: 1.6 ms with the copy, 1.13 ms
// without on one thread; 1.1 and 0.67 ms on two). A dense stride-1 convolution keeps its copy:
// inline, its border copies of the register tile's unrolled body (up to five per kernel) cost
// ResNet-50 0.5-1 s more code generation for a few percent of run time. Returns whether the
// padding is read inline.
bool ReadPaddingInline(te::Schedule& schedule, const te::Tensor& conv) {
  const te::Stage* stage = schedule.FindStage(conv);
  bool depthwise = schedule.ReduceAxes(conv).size() == 2;
  bool inlined = false;
  for (const te::Tensor& input : stage->op->inputs) {
    if (input.op()->tag != te::kPadTag) continue;
    // (H - 1) * stride + kernel rows padded: at least twice the output's H only when strided.
    bool strided = input.shape().size() == 5 && input.shape()[2] >= 2 * conv.shape()[2];
    if (depthwise || strided) {
      schedule.ComputeInline(input);
      inlined = true;
    }
  }
  return inlined;
}

// The innermost reduce steps of a blocked convolution `conv` unrolled, so each step's loads
// and index arithmetic fold into constant offsets and the tile's multiply-adds issue back to
// back. Which loop, by the reduce axes (`reduce_axes`: dense (input blocks, kernel rows, kernel
// columns, input lanes), depthwise (kernel rows, kernel columns)):
//  * dense, a block's input lanes: 8 whole, 16 (AVX-512) in groups of 4; in pairs when the
//    convolution reads its padding inline (`padding_inline`: strided, so LoopPartition gives
//    its border rows and columns their own copies of the nest): as fast, and ResNet-50
//    compiled 1.2x faster than with its 3x3/2 nests unrolled by 8. A 16-lane block unrolled
//    whole (256 multiply-adds of a 4 x 4 tile in one straight run) measured slower on a Zen 5
//    core than in groups of 2, 4 or 8, which are alike (paired .so runs, one thread, groups of
//    8: ResNet-50 x0.95, MobileNetV2 x0.89-0.92; with chunks off too, DenseNet x0.85);
//  * dense with an unblocked input (1 lane: a stem's 3 channels, ShuffleNet's 116), the kernel
//    columns (a 7x7/2 stem: one block's tile, small even in its border copies), or for a 1x1
//    the input channels `channel_blocks` in groups of up to 8;
//  * depthwise, the kernel columns (each row's 3 taps then read overlapping input vectors LLVM
//    loads once).
// The kernel rows stay a loop (LoopPartition splits them at padded borders). LLVM unrolled
// most of these itself when their bodies were small, but not the 3x3 tiles' (ResNet-50
// x0.90-0.93 on one Zen 3 core, paired runs against the code before; MobileNetV2,
// EfficientNet x0.975, DenseNet x0.99), and code generation now leaves loops around such tiles
// rolled (emit_stmt.cc).
// (kMaxUnrolledReduceSteps stays within UnrollLoop's kDefaultMaxUnrollExtent, which repeats
// such loops' bodies in loop IR; a longer `unroll` loop would reach LLVM as a loop asking to be
// unrolled fully.)
void UnrollInnerReduceSteps(te::Schedule& schedule, const te::Tensor& conv,
                            const std::vector<te::IterVar>& reduce_axes,
                            const te::IterVar& channel_blocks, bool padding_inline) {
  auto unroll_whole = [&](const te::IterVar& axis) {
    if (axis->extent > 1 && axis->extent <= kMaxUnrolledReduceSteps) schedule.Unroll(conv, axis);
  };
  if (reduce_axes.size() == 2) return unroll_whole(reduce_axes[1]);  // depthwise
  if (reduce_axes.size() != 4) return;
  const te::IterVar& lanes = reduce_axes[3];
  if (lanes->extent > 1) {
    if (padding_inline && lanes->extent > 2 && lanes->extent % 2 == 0) {
      schedule.Unroll(conv, schedule.Split(conv, lanes, 2).second);
    } else if (lanes->extent > kMaxWholeLaneSteps && lanes->extent % kLaneStepGroup == 0) {
      schedule.Unroll(conv, schedule.Split(conv, lanes, kLaneStepGroup).second);
    } else {
      unroll_whole(lanes);
    }
    return;
  }
  const te::IterVar& kernel_columns = reduce_axes[2];
  if (kernel_columns->extent > 1) return unroll_whole(kernel_columns);
  if (reduce_axes[1]->extent > 1 || !channel_blocks) return;
  if (channel_blocks->extent <= 8) return unroll_whole(channel_blocks);
  for (int64_t group : {8, 4, 2}) {
    if (channel_blocks->extent % group == 0) {
      schedule.Unroll(conv, schedule.Split(conv, channel_blocks, group).second);
      return;
    }
  }
}

// A blocked convolution written by its own loops: the reduce loops inside the tile loops, so
// each reduce step updates the tile; the loops outside the reduction parallel.
void ScheduleBlockedConv(te::Schedule& schedule, const te::Tensor& t, int64_t vector_lanes,
                         int64_t max_accumulators, Parallelism parallel) {
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(t);
  if (schedule.Axes(t).size() != 5) {
    return ScheduleReduction(schedule, t, vector_lanes, max_accumulators, parallel);
  }
  BlockedConvTile tile =
      ChooseBlockedConvTile(schedule.Axes(t), reduce_axes.size() == 2, max_accumulators);
  TileBlockedOutput(schedule, t, tile, reduce_axes,
                    SplitsByRows(schedule.Axes(t), reduce_axes, ConvStride(t, reduce_axes)));
  ParallelizeOuter(schedule, t, reduce_axes.empty() ? schedule.Axes(t)[4] : reduce_axes.front(),
                   parallel);
  bool padding_inline = ReadPaddingInline(schedule, t);
  UnrollInnerReduceSteps(schedule, t, reduce_axes,
                         reduce_axes.size() == 4 ? reduce_axes[0] : te::IterVar(), padding_inline);
}

// How ScheduleConvInChunks computes a blocked convolution: `blocks` output-channel blocks at a
// time over a strip of `rows` rows (the whole map when it is small), the reduction in chunks of
// `chunk` input-channel blocks, each updating register tiles of `blocks` x `columns`.
struct ConvChunks {
  int64_t blocks = 1, columns = 1, chunk = 1, rows = 1;
};

// The plan for a dense blocked convolution with output axes (N, O/b, OH, OW, b), b at most
// kMaxChunkedConvLanes, reduce axes
// (input blocks, kernel rows, kernel columns, input lanes) and `stride` when its map has at most
// kSmallMapPixels pixels, or a tile's weights exceed kPointwiseChunkBytes and strips of whole rows
// of at most kPointwiseStripPixels divide the map; else none. Kernels of any size: a 3x3 tile's
// weights are 9x a 1x1's (ResNet-50's 128-channel 3x3: 147 KB for 4 output blocks), and without
// chunks every column tile streamed them from L2 again.
std::optional<ConvChunks> PlanConvInChunks(const std::vector<te::IterVar>& axes,
                                           const std::vector<te::IterVar>& reduce_axes,
                                           int64_t stride, int64_t max_accumulators,
                                           Parallelism parallel) {
  // Blocks of 16 lanes (AVX-512) keep the plain register tiles: in chunks, MobileNetV2,
  // EfficientNet and ResNet-50 ran x1.04, x1.03 and x1.09 slower on a Zen 5 core (paired .so
  // runs, one thread, both with 16 lanes unrolled in groups of 8). A 16-lane block's weights
  // are twice an 8-lane one's bytes, so a chunk holds half the reduce steps between the
  // accumulators' round trips through L1, and its wider register tiles (4 x 4, 2 x 7) already
  // reuse each weight vector across 4-7 pixels.
  if (axes.size() != 5 || axes[4]->extent > kMaxChunkedConvLanes) return std::nullopt;
  if (reduce_axes.size() != 4 || max_accumulators < 1) return std::nullopt;
  int64_t kernel_rows = reduce_axes[1]->extent, kernel_columns = reduce_axes[2]->extent;
  bool pointwise = kernel_rows == 1 && kernel_columns == 1;
  ConvChunks plan;
  for (int64_t blocks : kBlockedConvBlockTiles) {
    if (axes[1]->extent % blocks == 0 && blocks <= max_accumulators) {
      plan.blocks = blocks;
      break;
    }
  }
  // The parallel loop runs over batches, block tiles (and strips): fewer block tiles per tile
  // until it has kMinPointwiseParallelTiles iterations, so that two threads share a kernel
  // evenly (MobileNetV3's 96-channel 7x7 projection: 12 blocks, 3 tiles of 4).
  while (parallel.enabled && plan.blocks > 1 &&
         axes[0]->extent * (axes[1]->extent / plan.blocks) < kMinPointwiseParallelTiles) {
    plan.blocks /= 2;
  }
  // Larger kernels were measured with tiles of 4 blocks (AVX2's 8 lanes); a 1-block tile loads a
  // broadcast per multiply-add and was not.
  if (!pointwise && plan.blocks < 2) return std::nullopt;
  int64_t height = axes[2]->extent, width = axes[3]->extent;
  int64_t lanes = axes[4]->extent, input_lanes = reduce_axes[3]->extent;
  if (height * width <= kSmallMapPixels) {
    plan.rows = height;
  } else {
    // A larger map in strips pays only when the weights are the traffic: with few input
    // channels (MobileNetV2's expansions) the strips ran up to 1.4x slower.
    int64_t weight_bytes =
        4 * reduce_axes[0]->extent * input_lanes * kernel_rows * kernel_columns * plan.blocks * lanes;
    if (weight_bytes <= kPointwiseChunkBytes) return std::nullopt;
    plan.rows = 0;
    for (int64_t rows = 1; rows < height && rows * width <= kPointwiseStripPixels; ++rows) {
      if (height % rows == 0) plan.rows = rows;
    }
    if (plan.rows == 0) return std::nullopt;
  }
  // As few column tiles as fit, as even as can be; a row's last tile may be narrower
  // (LoopPartition splits it off). The tile's accumulators, one broadcast input per column and
  // a weight vector must fit the registers (max_accumulators + 4): code generation loads every
  // column's broadcast first, and a 2 x 6 tile (18 registers) spilled, 1.5-2x slower. A 7-wide
  // row takes 4 x 3 tiles, 3 + 3 + 1, instead of the 1 x 7 tile of a divisor, which loads a
  // broadcast per multiply-add, or 2 x 4 tiles, 4 + 3.
  int64_t widest = std::min({max_accumulators / plan.blocks, width,
                             (max_accumulators + 3) / (plan.blocks + 1)});
  int64_t tiles = (width + widest - 1) / widest;
  plan.columns = (width + tiles - 1) / tiles;
  // A tile that divides the row is taken when it still holds 8 accumulators: no tail to
  // compile (ResNet-50's 14- and 28-wide projections 3-5% faster with 4 x 2 than with 4 x 3
  // and a tail, and 0.2 s less code generation).
  for (int64_t columns = widest; columns >= 2; --columns) {
    if (width % columns == 0 && plan.blocks * columns >= 8) {
      plan.columns = columns;
      break;
    }
  }
  // The largest chunk dividing the input blocks whose weights and input, beside the strip's
  // accumulators, fit kPointwiseChunkBytes.
  int64_t pixels = plan.rows * width;
  int64_t accumulator_bytes = 4 * plan.blocks * pixels * lanes;
  // (A dilated kernel reads a wider strip than this: its chunks may overflow L1, only slower.)
  int64_t input_pixels = pointwise ? pixels
                                   : ((plan.rows - 1) * stride + kernel_rows) *
                                         ((width - 1) * stride + kernel_columns);
  int64_t chunk_bytes =
      4 * input_lanes * (plan.blocks * lanes * kernel_rows * kernel_columns + input_pixels);
  plan.chunk = 0;
  for (int64_t chunk = 1; chunk <= reduce_axes[0]->extent; ++chunk) {
    if (reduce_axes[0]->extent % chunk == 0 &&
        accumulator_bytes + chunk * chunk_bytes <= kPointwiseChunkBytes) {
      plan.chunk = chunk;
    }
  }
  if (plan.chunk == 0) return std::nullopt;
  return plan;
}

// A dense blocked convolution `conv` (1x1 or larger) whose only reader is the elementwise
// `epilogue`, over a small map (the last stage of ImageNet networks: 7x7, up to 1,152 or 2,048 channels in or
// out) or with many input channels (a projection, 480 or 672 -> 80 or 112 at 14x14). There the
// weights are the traffic, not the input: a tile of 4 output blocks reads K x 4 blocks of them
// (up to 150 KB), again for every row of tiles, from L2. So the reduction is cut into chunks
// whose weights and input stay in L1, and the strip (or map) of `plan.blocks` output blocks
// accumulates chunk by chunk in a buffer that stays in L1 too (MLAS's pointwise kernel does the
// same): per chunk, [rows, column tiles, chunk's reduce steps, blocks, columns, b], the tile
// unrolled. The epilogue runs over that strip in the parallel loop over output blocks and strips.
// (One Zen 3 core: ResNet-50's 1x1/2 1,024 -> 2,048 projection 5.9 -> 3.5 ms, EfficientNet's
// 1,152 -> 192 (x3) 1.02 -> 0.86 ms and 672 -> 112 (x2) 0.82 -> 0.69 ms, MobileNetV2's
// 960 -> 320 0.67 -> 0.48 ms. A whole 14x14 map, 4 blocks' accumulators alone 25 KB, ran 1.5x
// slower. ResNet-50's 3x3 convolutions alone, with their padding and layout changes, paired
// runs: 128 channels at 28x28 x0.89, 256 at 14x14 x0.87, 512 at 7x7 x0.74, 128 3x3/2 x0.96.)
void ScheduleConvInChunks(te::Schedule& schedule, const te::Tensor& conv,
                          const te::Tensor& epilogue, ConvChunks plan, Parallelism parallel) {
  std::vector<te::IterVar> axes = schedule.Axes(conv);
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(conv);
  std::vector<te::IterVar> out = schedule.Axes(epilogue);
  // The epilogue: [n, blocks.outer, rows.outer, blocks.inner, rows.inner, ow, b], the first
  // three parallel, the convolution computed inside the third for its blocks and strip.
  te::IterVar blocks_inner = out[1];
  std::vector<te::IterVar> e_order = {out[0]};
  if (out[1]->extent > plan.blocks) {
    te::IterVar blocks_outer;
    std::tie(blocks_outer, blocks_inner) = schedule.Split(epilogue, out[1], plan.blocks);
    e_order.push_back(blocks_outer);
  }
  te::IterVar rows_inner = out[2];
  if (out[2]->extent > plan.rows) {
    te::IterVar rows_outer;
    std::tie(rows_outer, rows_inner) = schedule.Split(epilogue, out[2], plan.rows);
    e_order.push_back(rows_outer);
  }
  e_order.insert(e_order.end(), {blocks_inner, rows_inner, out[3], out[4]});
  schedule.Reorder(epilogue, e_order);
  schedule.Vectorize(epilogue, out[4]);
  ParallelizeOuter(schedule, epilogue, blocks_inner, parallel);
  // The leaf before blocks.inner: n (always a leaf before it) or what n was fused into.
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(epilogue);
  auto inner_at = std::find(leaves.begin(), leaves.end(), blocks_inner);
  if (inner_at == leaves.begin() || inner_at == leaves.end()) return;  // an earlier primitive
                                                                       // failed: in status()
  schedule.ComputeAt(conv, epilogue, *(inner_at - 1));

  auto [chunks, chunk_inner] = schedule.Split(conv, reduce_axes[0], plan.chunk);
  std::vector<te::IterVar> order = {axes[0], chunks, axes[2]};
  te::IterVar columns_inner = axes[3];
  if (axes[3]->extent > plan.columns) {
    te::IterVar columns_outer;
    std::tie(columns_outer, columns_inner) = schedule.Split(conv, axes[3], plan.columns);
    order.push_back(columns_outer);
  }
  order.insert(order.end(), {chunk_inner, reduce_axes[1], reduce_axes[2], reduce_axes[3], axes[1],
                             columns_inner, axes[4]});
  schedule.Reorder(conv, order);
  schedule.Vectorize(conv, axes[4]);
  schedule.Unroll(conv, axes[1]);
  schedule.Unroll(conv, columns_inner);
  bool padding_inline = ReadPaddingInline(schedule, conv);
  UnrollInnerReduceSteps(schedule, conv, reduce_axes, chunk_inner, padding_inline);
}

// A blocked convolution `conv` whose only reader is the elementwise stage `epilogue` of the same
// shape (bias, activation, residual add, inlined): the epilogue's loops are tiled, and the
// convolution is computed per tile at the epilogue's tile loop into a tile-sized buffer, so its
// accumulators live in registers and the epilogue reads them there: no full-size intermediate
// written and read back.
void ScheduleBlockedConvWithEpilogue(te::Schedule& schedule, const te::Tensor& conv,
                                     const te::Tensor& epilogue, int64_t max_accumulators,
                                     Parallelism parallel) {
  std::vector<te::IterVar> axes = schedule.Axes(conv);
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(conv);
  int64_t stride = ConvStride(conv, reduce_axes);
  if (std::optional<ConvChunks> plan =
          PlanConvInChunks(axes, reduce_axes, stride, max_accumulators, parallel)) {
    return ScheduleConvInChunks(schedule, conv, epilogue, *plan, parallel);
  }
  bool depthwise = reduce_axes.size() == 2;
  BlockedConvTile tile = ChooseBlockedConvTile(axes, depthwise, max_accumulators);
  TiledOutput tiled =
      TileBlockedOutput(schedule, epilogue, tile, {}, SplitsByRows(axes, reduce_axes, stride));
  te::IterVar at = tiled.tile_at;
  if (depthwise) {
    // Too few channel blocks to run in parallel alone: the rows are split, and only their outer
    // part joins the parallel loop, so the inner rows stay a loop of their own that
    // LoopPartition can split at the padded border (a row fused into the parallel index could
    // not be).
    std::vector<te::IterVar> epilogue_axes = schedule.Axes(epilogue);
    int64_t leading = epilogue_axes[0]->extent * epilogue_axes[1]->extent;
    const te::IterVar& rows = epilogue_axes[2];
    if (parallel.enabled && leading < kMinParallelExtent) {
      int64_t chunks = (kMinParallelExtent + leading - 1) / leading;
      while (chunks < rows->extent && rows->extent % chunks != 0) ++chunks;
      if (chunks < rows->extent) {
        te::IterVar inner_rows = schedule.Split(epilogue, rows, rows->extent / chunks).second;
        // A tile as wide as the output is computed per row: now per inner row.
        if (at == rows) at = inner_rows;
      }
    }
  }
  ParallelizeOuter(schedule, epilogue, at, parallel);
  schedule.ComputeAt(conv, epilogue, at);
  // Within the tile: [n, oh, reduce..., ob, ow, b], the extents of n, oh, ob, ow bounded by the
  // region the tile reads.
  std::vector<te::IterVar> order = {axes[0], axes[2]};
  order.insert(order.end(), reduce_axes.begin(), reduce_axes.end());
  order.insert(order.end(), {axes[1], axes[3], axes[4]});
  schedule.Reorder(conv, order);
  schedule.Vectorize(conv, axes[4]);
  schedule.Unroll(conv, axes[1]);
  schedule.Unroll(conv, axes[3]);
  bool padding_inline = ReadPaddingInline(schedule, conv);
  UnrollInnerReduceSteps(schedule, conv, reduce_axes,
                         reduce_axes.size() == 4 ? reduce_axes[0] : te::IterVar(), padding_inline);
}

// True when `op` reads `buffer`, directly or through stages inlined into it.
bool ReadsThroughInlined(const te::Schedule& schedule, const te::Operation& op,
                         const loop::Buffer& buffer) {
  std::vector<te::Operation> pending = {op};
  std::vector<const te::OperationNode*> seen;
  while (!pending.empty()) {
    te::Operation next = pending.back();
    pending.pop_back();
    for (const te::Tensor& input : next->inputs) {
      if (input.op()->buffer.same_as(buffer)) return true;
      if (std::find(seen.begin(), seen.end(), input.op().get()) != seen.end()) continue;
      seen.push_back(input.op().get());
      const te::Stage* stage = schedule.FindStage(input);
      if (stage != nullptr && stage->attach == te::AttachKind::kInline) pending.push_back(stage->op);
    }
  }
  return false;
}

// The one other root stage reading `producer` when it is an elementwise stage of the same shape
// and `producer` is not an output; else null.
te::Tensor ElementwiseEpilogue(const te::Schedule& schedule, const te::Tensor& producer,
                               const std::vector<te::Tensor>& roots) {
  const te::Stage* stage = schedule.FindStage(producer);
  if (stage->is_output) return te::Tensor();
  te::Tensor reader;
  for (const te::Tensor& t : roots) {
    const te::Stage* other = schedule.FindStage(t);
    if (other == stage) continue;
    if (!ReadsThroughInlined(schedule, other->op, stage->buffer())) continue;
    if (reader.defined() || IsReduction(*other) || other->op->tag == te::kPadTag ||
        t.shape() != producer.shape()) {
      return te::Tensor();
    }
    reader = t;
  }
  return reader;
}

void ScheduleElementwise(te::Schedule& schedule, const te::Tensor& t, Parallelism parallel) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  if (leaves.empty()) return;  // a scalar
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size() && fused; ++i) fused = schedule.Fuse(t, fused, leaves[i]);
  if (!fused) return;
  int64_t lanes = VectorFactor(fused->extent);
  if (lanes == 0) {
    if (parallel.enabled) schedule.Parallel(t, fused);
  } else if (fused->extent == lanes) {
    schedule.Vectorize(t, fused);
  } else {
    auto [outer, inner] = schedule.Split(t, fused, lanes);
    schedule.Vectorize(t, inner);
    if (parallel.enabled) schedule.Parallel(t, outer);
  }
}

// Whether the padded copy `pad` is read by a dense blocked convolution that splits its parallel
// loop by rows (SplitsByRows, or a register tile of all its output blocks; not in chunks:
// ScheduleConvInChunks keeps its block split): the copy is then split by rows too, so each
// thread pads the rows its share of the convolution reads.
bool PaddingSplitsByRows(const te::Schedule& schedule, const te::Tensor& pad,
                         const std::vector<te::Tensor>& roots, int64_t max_accumulators,
                         Parallelism parallel) {
  const loop::Buffer& padded = schedule.FindStage(pad)->buffer();
  for (const te::Tensor& conv : roots) {
    const te::Stage* stage = schedule.FindStage(conv);
    if (stage->op->tag != te::kBlockedConvTag) continue;
    for (const te::Tensor& input : stage->op->inputs) {
      const te::Stage* read = schedule.FindStage(input);
      if (read != nullptr && read->buffer().same_as(padded)) {
        std::vector<te::IterVar> axes = schedule.Axes(conv);
        std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(conv);
        int64_t stride = ConvStride(conv, reduce_axes);
        if (axes.size() != 5 || reduce_axes.size() != 4 ||
            PlanConvInChunks(axes, reduce_axes, stride, max_accumulators, parallel)) {
          return false;
        }
        // A tile of every output block leaves the rows the outer loop whatever SplitsByRows says.
        BlockedConvTile tile = ChooseBlockedConvTile(axes, false, max_accumulators);
        return tile.blocks >= axes[1]->extent || SplitsByRows(axes, reduce_axes, stride);
      }
    }
  }
  return false;
}

// A padding stage whose rows a vector width divides: the leading axes fused and parallel (as
// few as give kMinParallelExtent iterations), each
// row vectorized, so its index clamps and bounds tests act on one row's lanes (fusing the row in
// too would divide and take remainders of every vector index). Other widths are scheduled as
// any elementwise stage: one fused vector loop beats a scalar row loop.
void SchedulePadding(te::Schedule& schedule, const te::Tensor& t, Parallelism parallel,
                     bool rows_first) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  // A blocked map (N, C/b, H, W, b) read by a convolution split by rows: rows before channel
  // blocks, so the parallel loop's halves are halves of the rows.
  if (rows_first && leaves.size() == 5) {
    schedule.Reorder(t, {leaves[0], leaves[2], leaves[1], leaves[3], leaves[4]});
    leaves = schedule.LeafIterVars(t);
  }
  // Trailing extent-1 axes (the channel block of NCHW1c data, a stem's 3-channel image) move
  // before the last real axis, which becomes the row.
  if (leaves.size() >= 2 && leaves.back()->extent == 1 && leaves[leaves.size() - 2]->extent > 1) {
    schedule.Reorder(t, {leaves.back(), leaves[leaves.size() - 2]});
    leaves = schedule.LeafIterVars(t);
  }
  int64_t lanes = leaves.size() >= 2 ? VectorFactor(leaves.back()->extent) : 0;
  if (lanes == 0) {
    // Rows no width divides (a 224-wide image padded to 226): a scalar loop per row, the leading
    // axes fused and parallel, rather than one fused vector loop whose lanes each divide and
    // take remainders of the fused index and gather.
    if (leaves.size() < 2) return ScheduleElementwise(schedule, t, parallel);
    if (!parallel.enabled) return;
    te::IterVar fused = leaves[0];
    for (size_t i = 1; i + 1 < leaves.size() && fused; ++i) fused = schedule.Fuse(t, fused, leaves[i]);
    if (fused) schedule.Parallel(t, fused);
    return;
  }
  te::IterVar row = leaves.back();
  // A row of one vector (the channel block of a blocked layout): the axis before it stays a
  // serial loop too, so the bounds tests of the outer axes are computed once per row of vectors
  // rather than dividing the fused index for every vector.
  size_t serial = row->extent == lanes && leaves.size() >= 3 ? 2 : 1;
  // The leading axes are fused only until the parallel loop is long enough; the axes after it
  // stay serial loops, so a row's source position (a channel shuffle's division and remainder of
  // the channel) is computed once per channel rather than once per row of the fused index.
  te::IterVar fused = leaves[0];
  for (size_t i = 1; parallel.enabled && i + serial < leaves.size() && fused &&
                     fused->extent < kMinParallelExtent;
       ++i) {
    fused = schedule.Fuse(t, fused, leaves[i]);
  }
  if (!fused) return;
  schedule.Vectorize(t, row->extent == lanes ? row : schedule.Split(t, row, lanes).second);
  if (parallel.enabled) schedule.Parallel(t, fused);
}

// An injective stage (transpose, channel shuffle, concat, split, layout change) whose rows
// are long: scheduled row by row like a padding, so each row's source is found once (its
// divisions and remainders scalar, outside the vector loop) and the row is read contiguously,
// instead of unravelling every vector lane of one fused index into a gather.
bool IsLongRowInjective(const te::Schedule& schedule, const te::Tensor& t) {
  const te::Stage* stage = schedule.FindStage(t);
  if (stage->op->tag != "injective" || t.ndim() < 2) return false;
  int64_t row = t.shape().back();
  // Short rows too, when the widest vector would straddle them (14, 7: a vector of the fused
  // index divides and takes remainders in every lane); a row of exactly one vector does not.
  return row >= kMinInjectiveRowExtent || row % kVectorWidths[0] != 0;
}

// The row axes of a normalization kernel: when its one output is tagged
// te::kRowNormalizationTag, the leading axes of the output that every other stage's shape
// starts with (the statistics are per row), at most all but the last; else 0.
size_t RowNormalizationAxes(const std::vector<te::Tensor>& outputs,
                            const std::vector<te::Tensor>& computes) {
  if (outputs.size() != 1 || outputs[0].op()->tag != te::kRowNormalizationTag) return 0;
  const te::Tensor& output = outputs[0];
  if (output.ndim() < 2) return 0;
  size_t rows = output.ndim() - 1;
  for (const te::Tensor& t : computes) {
    const std::vector<int64_t>& shape = t.shape();
    size_t common = 0;
    while (common < rows && common < shape.size() && shape[common] == output.shape()[common]) {
      ++common;
    }
    rows = common;
  }
  // A few long rows (a softmax over 100,000 logits) would leave the row loop too short to run
  // in parallel: such a kernel keeps the stage-by-stage schedule, whose loops over a row are.
  int64_t row_count = 1, row_length = 1;
  for (size_t d = 0; d < output.shape().size(); ++d) {
    (d < rows ? row_count : row_length) *= output.shape()[d];
  }
  if (row_count < kMinParallelExtent && row_length >= kMinParallelWork) return 0;
  return rows;
}

// The data-parallel axes of `t` from `first` on fused into one loop, vectorized by a width that
// divides it; the loop is returned (null when there is none).
te::IterVar VectorizeTrailingAxes(te::Schedule& schedule, const te::Tensor& t, size_t first) {
  std::vector<te::IterVar> axes = schedule.Axes(t);
  if (first >= axes.size()) return nullptr;
  te::IterVar fused = axes[first];
  for (size_t i = first + 1; i < axes.size() && fused; ++i) fused = schedule.Fuse(t, fused, axes[i]);
  if (!fused) return nullptr;
  int64_t lanes = VectorFactor(fused->extent);
  if (lanes == 0) return fused;
  te::IterVar inner = fused->extent == lanes ? fused : schedule.Split(t, fused, lanes).second;
  schedule.Vectorize(t, inner);
  return inner;
}

// A normalization over trailing axes (softmax, layer norm): the output's `rows` leading axes
// fused into one row loop, parallel, and every other stored stage (the row's maximum and sums,
// their partial sums, its exponentials) computed inside it over one row, into buffers of a
// row's size that stay in L1; each stage's row vectorized. Stored once per kernel they would
// each read and write the whole tensor.
void ScheduleRowNormalization(te::Schedule& schedule, const te::Tensor& output,
                              const std::vector<te::Tensor>& roots, size_t rows,
                              Parallelism parallel) {
  std::vector<te::IterVar> axes = schedule.Axes(output);
  te::IterVar row = axes[0];
  for (size_t i = 1; i < rows && row; ++i) row = schedule.Fuse(output, row, axes[i]);
  if (!row) return;
  VectorizeTrailingAxes(schedule, output, rows);
  if (parallel.enabled) schedule.Parallel(output, row);
  // Consumers first: every schedule in the record lowers (a statistic is attached only once
  // the stages reading it are).
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
    const te::Tensor& t = *it;
    if (t.same_as(output)) continue;
    schedule.ComputeAt(t, output, row);
    te::IterVar vector = VectorizeTrailingAxes(schedule, t, rows);
    std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(t);
    if (vector && !reduce_axes.empty()) {
      // A partial sum's lanes innermost, inside its reduce loop: one vector accumulator.
      std::vector<te::IterVar> order = reduce_axes;
      order.push_back(vector);
      schedule.Reorder(t, order);
    }
  }
}

// How many of `computes` read `t` directly.
int ReaderCount(const std::vector<te::Tensor>& computes, const te::Tensor& t) {
  int count = 0;
  for (const te::Tensor& c : computes) {
    for (const te::Tensor& input : c.op()->inputs) {
      if (input.same_as(t)) {
        ++count;
        break;
      }
    }
  }
  return count;
}

}  // namespace

// The size `stage`'s body grows to once the stages it reads that are inlined are substituted
// into it: 1 plus, per load, the loaded stage's own inlined size (1 when it is stored). A body
// that reads a value twice doubles that value's size, so a chain of such stages (x + x, then
// that + itself, ...) doubles at every link: bounding the size stops the growth.
int64_t InlinedSize(const te::Stage& stage,
                    const std::unordered_map<const loop::BufferNode*, int64_t>& inlined_sizes) {
  int64_t size = 1;
  auto count = [&](const loop::BufferLoadNode* load, const std::vector<loop::PrimExpr>&) {
    auto it = inlined_sizes.find(load->buffer.get());
    size = std::min(size + (it == inlined_sizes.end() ? 1 : it->second), kMaxInlinedSize + 1);
    return loop::PrimExpr();
  };
  te::RewriteLoads(stage.op->body->value, count);
  if (stage.op->body->condition.defined()) te::RewriteLoads(stage.op->body->condition, count);
  return size;
}

te::Schedule CreateDefaultSchedule(const std::vector<te::Tensor>& outputs,
                                   const DefaultScheduleOptions& options) {
  te::Schedule schedule = te::Schedule::Create(outputs, te::ScheduleOptions{options.keep_record});

  // Stages are replaced as primitives apply, so decide from the operations.
  std::vector<te::Tensor> computes;
  for (const te::StagePtr& stage : schedule.stages()) {
    if (!stage->is_placeholder()) computes.push_back(te::Tensor(stage->op));
  }

  const size_t normalized_rows = RowNormalizationAxes(outputs, computes);
  std::vector<te::Tensor> roots;
  // The expression size of each stage inlined so far (by buffer): see InlinedSize.
  std::unordered_map<const loop::BufferNode*, int64_t> inlined_sizes;
  for (const te::Tensor& t : computes) {  // producers first
    const te::Stage* stage = schedule.FindStage(t);
    // A padding stage is computed into its own buffer: inlined, every load of the reduction
    // reading it would be bounds-checked (masked vector loads), in the innermost loop.
    bool is_padding = stage->op->tag == te::kPadTag;
    // A normalization's full-size stage read twice (softmax's exponentials: by the row's sum and
    // by the output) is stored, per row: inlined, each element's exp would be computed twice.
    bool row_values = normalized_rows > 0 && !stage->is_output && ReaderCount(computes, t) > 1 &&
                      t.shape() == outputs[0].shape();
    int64_t size = InlinedSize(*stage, inlined_sizes);
    if (!stage->is_output && !IsReduction(*stage) && !is_padding && !row_values &&
        size <= kMaxInlinedSize) {
      inlined_sizes[stage->buffer().get()] = size;  // before the primitive replaces `stage`
      schedule.ComputeInline(t);
    } else {
      roots.push_back(t);
    }
  }
  // The kernel's work: each stored stage's output elements times its reduce steps.
  int64_t work = 0;
  for (const te::Tensor& t : roots) {
    const te::Stage* stage = schedule.FindStage(t);
    int64_t steps = 1;
    for (int64_t d : t.shape()) steps = SaturatingMul(steps, d);
    if (IsReduction(*stage)) {
      for (const te::IterVar& axis : stage->op->body->reduce_axes) {
        steps = SaturatingMul(steps, axis->extent);
      }
    }
    work = steps > INT64_MAX - work ? INT64_MAX : work + steps;
  }
  const Parallelism parallel{work >= options.min_parallel_work};
  if (normalized_rows > 0) {
    for (const te::Tensor& t : roots) {
      if (t.op()->tag == te::kRowNormalizationTag) {
        ScheduleRowNormalization(schedule, t, roots, normalized_rows, parallel);
      }
    }
    return schedule;
  }
  // Convolutions scheduled with their epilogues, by buffer (stages are replaced as primitives
  // apply; their buffers stay).
  std::vector<loop::Buffer> scheduled;
  for (const te::Tensor& t : roots) {
    if (schedule.FindStage(t)->op->tag != te::kBlockedConvTag || schedule.Axes(t).size() != 5) {
      continue;
    }
    te::Tensor epilogue = ElementwiseEpilogue(schedule, t, roots);
    if (!epilogue.defined() || std::find(scheduled.begin(), scheduled.end(),
                                         schedule.FindStage(epilogue)->buffer()) != scheduled.end()) {
      continue;
    }
    ScheduleBlockedConvWithEpilogue(schedule, t, epilogue, options.max_accumulators, parallel);
    for (const te::Tensor& input : schedule.FindStage(t)->op->inputs) {
      if (schedule.FindStage(input)->attach != te::AttachKind::kRoot) {
        scheduled.push_back(schedule.FindStage(input)->buffer());
      }
    }
    scheduled.push_back(schedule.FindStage(t)->buffer());
    scheduled.push_back(schedule.FindStage(epilogue)->buffer());
  }
  for (const te::Tensor& t : roots) {
    if (std::find(scheduled.begin(), scheduled.end(), schedule.FindStage(t)->buffer()) !=
        scheduled.end()) {
      continue;
    }
    if (schedule.FindStage(t)->op->tag == te::kBlockedConvTag) {
      ScheduleBlockedConv(schedule, t, options.vector_lanes, options.max_accumulators, parallel);
    } else if (IsReduction(*schedule.FindStage(t))) {
      ScheduleReduction(schedule, t, options.vector_lanes, options.max_accumulators, parallel);
    } else if (schedule.FindStage(t)->op->tag == te::kPadTag || IsLongRowInjective(schedule, t)) {
      SchedulePadding(schedule, t, parallel,
                      schedule.FindStage(t)->op->tag == te::kPadTag &&
                          PaddingSplitsByRows(schedule, t, roots, options.max_accumulators,
                                              parallel));
    } else {
      ScheduleElementwise(schedule, t, parallel);
    }
  }
  return schedule;
}

}  // namespace kiln::lower
