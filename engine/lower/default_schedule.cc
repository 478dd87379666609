// The default schedule heuristics, stage by stage.
#include "engine/lower/default_schedule.h"

#include <algorithm>
#include <tuple>

namespace kiln::lower {
namespace {

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

// Fuses the leading data-parallel leaves (stopping before `stop`) until the
// loop has kMinParallelExtent iterations, and marks the result parallel.
void ParallelizeOuter(te::Schedule& schedule, const te::Tensor& t, const te::IterVar& stop) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  if (leaves.empty() || leaves[0]->is_reduce || leaves[0] == stop) return;
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size() && fused->extent < kMinParallelExtent; ++i) {
    if (leaves[i]->is_reduce || leaves[i] == stop) break;
    te::IterVar next = schedule.Fuse(t, fused, leaves[i]);
    if (!next) return;  // the error is in schedule.status()
    fused = next;
  }
  schedule.Parallel(t, fused);
}

void ScheduleReduction(te::Schedule& schedule, const te::Tensor& t) {
  std::vector<te::IterVar> axes = schedule.Axes(t);
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(t);
  if (axes.empty()) return;  // a full reduction to a scalar: one serial nest

  const te::IterVar& x = axes.back();
  int64_t lanes = VectorFactor(x->extent);
  if (lanes == 0) {
    ParallelizeOuter(schedule, t, nullptr);
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
  // keeps at most kMaxAccumulators vectors: each input row loaded then feeds that many channels.
  te::IterVar z_outer, z_inner;
  if (axes.size() >= 3) {
    const te::IterVar& z = axes[axes.size() - 3];
    for (int64_t tile : kReductionChannelTiles) {
      if (tile * rows <= kMaxAccumulators && z->extent > tile && z->extent % tile == 0) {
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
      if (tile * rows <= kMaxAccumulators && x_outer->extent > tile &&
          x_outer->extent % tile == 0) {
        std::tie(x_outer, columns_inner) = schedule.Split(t, x_outer, tile);
        break;
      }
    }
  }

  // [outer axes..., z.outer, y.outer, x.outer, reduce axes..., z.inner, y.inner, columns, x.inner]:
  // each reduce step updates a tile of outputs, the vector lanes innermost.
  std::vector<te::IterVar> order;
  for (size_t i = 0; i + 3 < axes.size(); ++i) order.push_back(axes[i]);
  if (axes.size() >= 3) order.push_back(z_outer ? z_outer : axes[axes.size() - 3]);
  if (axes.size() >= 2) order.push_back(y_outer ? y_outer : axes[axes.size() - 2]);
  if (x_outer) order.push_back(x_outer);
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
  ParallelizeOuter(schedule, t, reduce_axes.empty() ? x_inner : reduce_axes.front());
}

// A blocked convolution (te::kBlockedConvTag), output (N, O/b, OH, OW, b): the register tile
// is `tile_blocks` output-channel blocks x `tile_columns` output columns, one vector of b
// lanes each, updated by every reduce step from one broadcast input value per column and one
// weight vector per block. [n, ob.outer, oh, ow.outer, reduce..., ob.inner, ow.inner, b]:
// the tile unrolled, b vectorized, the loops outside the reduction parallel.
void ScheduleBlockedConv(te::Schedule& schedule, const te::Tensor& t) {
  std::vector<te::IterVar> axes = schedule.Axes(t);
  std::vector<te::IterVar> reduce_axes = schedule.ReduceAxes(t);
  if (axes.size() != 5) return ScheduleReduction(schedule, t);
  // A depthwise convolution (two reduce axes) shares no input between channel blocks.
  const bool depthwise = reduce_axes.size() == 2;
  te::IterVar columns_outer, columns_inner, blocks_outer, blocks_inner;
  int64_t tile_columns = 1;
  for (int64_t tile : kBlockedConvColumnTiles) {
    if (axes[3]->extent % tile == 0) {
      tile_columns = tile;
      break;
    }
  }
  if (tile_columns > 1 && axes[3]->extent > tile_columns) {
    std::tie(columns_outer, columns_inner) = schedule.Split(t, axes[3], tile_columns);
  } else if (tile_columns > 1) {
    columns_inner = axes[3];
  }
  if (!depthwise) {
    for (int64_t tile : kBlockedConvBlockTiles) {
      if (tile * tile_columns <= kMaxAccumulators && axes[1]->extent % tile == 0 &&
          axes[1]->extent > tile) {
        std::tie(blocks_outer, blocks_inner) = schedule.Split(t, axes[1], tile);
        break;
      }
    }
  }
  std::vector<te::IterVar> order = {axes[0], blocks_outer ? blocks_outer : axes[1], axes[2]};
  if (columns_outer) order.push_back(columns_outer);
  if (!columns_inner) order.push_back(axes[3]);
  order.insert(order.end(), reduce_axes.begin(), reduce_axes.end());
  if (blocks_inner) order.push_back(blocks_inner);
  if (columns_inner) order.push_back(columns_inner);
  order.push_back(axes[4]);
  schedule.Reorder(t, order);
  schedule.Vectorize(t, axes[4]);
  if (blocks_inner) schedule.Unroll(t, blocks_inner);
  if (columns_inner) schedule.Unroll(t, columns_inner);
  ParallelizeOuter(schedule, t, reduce_axes.empty() ? axes[4] : reduce_axes.front());
}

void ScheduleElementwise(te::Schedule& schedule, const te::Tensor& t) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  if (leaves.empty()) return;  // a scalar
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size() && fused; ++i) fused = schedule.Fuse(t, fused, leaves[i]);
  if (!fused) return;
  int64_t lanes = VectorFactor(fused->extent);
  if (lanes == 0) {
    schedule.Parallel(t, fused);
  } else if (fused->extent == lanes) {
    schedule.Vectorize(t, fused);
  } else {
    auto [outer, inner] = schedule.Split(t, fused, lanes);
    schedule.Vectorize(t, inner);
    schedule.Parallel(t, outer);
  }
}

// A padding stage whose rows a vector width divides: the leading axes fused and parallel, each
// row vectorized, so its index clamps and bounds tests act on one row's lanes (fusing the row in
// too would divide and take remainders of every vector index). Other widths are scheduled as
// any elementwise stage: one fused vector loop beats a scalar row loop.
void SchedulePadding(te::Schedule& schedule, const te::Tensor& t) {
  std::vector<te::IterVar> leaves = schedule.LeafIterVars(t);
  int64_t lanes = leaves.size() >= 2 ? VectorFactor(leaves.back()->extent) : 0;
  if (lanes == 0) return ScheduleElementwise(schedule, t);
  te::IterVar row = leaves.back();
  te::IterVar fused = leaves[0];
  for (size_t i = 1; i + 1 < leaves.size() && fused; ++i) fused = schedule.Fuse(t, fused, leaves[i]);
  if (!fused) return;
  schedule.Vectorize(t, row->extent == lanes ? row : schedule.Split(t, row, lanes).second);
  schedule.Parallel(t, fused);
}

}  // namespace

te::Schedule CreateDefaultSchedule(const std::vector<te::Tensor>& outputs, bool keep_record) {
  te::Schedule schedule = te::Schedule::Create(outputs, te::ScheduleOptions{keep_record});

  // Stages are replaced as primitives apply, so decide from the operations.
  std::vector<te::Tensor> computes;
  for (const te::StagePtr& stage : schedule.stages()) {
    if (!stage->is_placeholder()) computes.push_back(te::Tensor(stage->op));
  }

  std::vector<te::Tensor> roots;
  for (const te::Tensor& t : computes) {
    const te::Stage* stage = schedule.FindStage(t);
    // A padding stage is computed into its own buffer: inlined, every load of the reduction
    // reading it would be bounds-checked (masked vector loads), in the innermost loop.
    bool is_padding = stage->op->tag == te::kPadTag;
    if (!stage->is_output && !IsReduction(*stage) && !is_padding) {
      schedule.ComputeInline(t);
    } else {
      roots.push_back(t);
    }
  }
  for (const te::Tensor& t : roots) {
    if (schedule.FindStage(t)->op->tag == te::kBlockedConvTag) {
      ScheduleBlockedConv(schedule, t);
    } else if (IsReduction(*schedule.FindStage(t))) {
      ScheduleReduction(schedule, t);
    } else if (schedule.FindStage(t)->op->tag == te::kPadTag) {
      SchedulePadding(schedule, t);
    } else {
      ScheduleElementwise(schedule, t);
    }
  }
  return schedule;
}

}  // namespace kiln::lower
