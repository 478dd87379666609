// CreateSymbolicSchedule: inlining, row statistics inside the row loop, one parallel loop.
#include "engine/lower/symbolic_schedule.h"

#include <unordered_map>

#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/lower/default_schedule.h"

namespace kiln::lower {
namespace {

bool IsReduction(const te::Stage& stage) {
  return stage.op->body.has_value() && stage.op->body->reduce.has_value();
}

// The row axes of a normalization kernel (see RowNormalizationAxes in default_schedule.cc):
// its one output tagged te::kRowNormalizationTag, and the leading dims every stored stage's
// shape shares with it, at most all but the last; 0 otherwise.
size_t RowAxes(const std::vector<te::Tensor>& outputs, const std::vector<te::Tensor>& roots) {
  if (outputs.size() != 1 || outputs[0].op()->tag != te::kRowNormalizationTag) return 0;
  std::vector<loop::PrimExpr> out = outputs[0].dims();
  if (out.size() < 2) return 0;
  size_t rows = out.size() - 1;
  for (const te::Tensor& t : roots) {
    std::vector<loop::PrimExpr> dims = t.dims();
    size_t common = 0;
    while (common < rows && common < dims.size() &&
           loop::arith::ExprDeepEqual(dims[common], out[common])) {
      ++common;
    }
    rows = common;
  }
  return rows;
}

bool SameDims(const te::Tensor& a, const te::Tensor& b) {
  std::vector<loop::PrimExpr> da = a.dims(), db = b.dims();
  if (da.empty() || da.size() != db.size()) return false;
  for (size_t d = 0; d < da.size(); ++d) {
    if (!loop::arith::ExprDeepEqual(da[d], db[d])) return false;
  }
  return true;
}

// The outermost data-parallel loop of `t` over a symbolic dimension (null when none): the one
// loop that runs in parallel. Static loops stay serial, since their work is unknown and
// usually small beside the run-time one.
te::IterVar ParallelAxis(const te::Schedule& schedule, const te::Tensor& t, size_t limit) {
  const std::vector<te::IterVar>& axes = schedule.Axes(t);
  for (size_t d = 0; d < axes.size() && d < limit; ++d) {
    if (axes[d]->is_symbolic()) return axes[d];
  }
  return nullptr;
}

// The lanes a static extent is vectorized by: `lanes` or a smaller power of two dividing it;
// 0 when none does.
int64_t Lanes(int64_t extent, int64_t lanes) {
  for (int64_t width = lanes; width >= 4; width /= 2) {
    if (extent >= width && extent % width == 0) return width;
  }
  return 0;
}

// The innermost data-parallel axis of `t`, when static, vectorized (split by the lanes).
te::IterVar VectorizeLastAxis(te::Schedule& schedule, const te::Tensor& t, int64_t lanes) {
  const std::vector<te::IterVar>& axes = schedule.Axes(t);
  if (axes.empty() || axes.back()->is_symbolic()) return nullptr;
  int64_t width = Lanes(axes.back()->extent, lanes);
  if (width == 0) return nullptr;
  te::IterVar inner =
      axes.back()->extent == width ? axes.back() : schedule.Split(t, axes.back(), width).second;
  schedule.Vectorize(t, inner);
  return inner;
}

// A reduction whose innermost data-parallel axis is static: that axis inside the reduce loops,
// vectorized, so each step of the reduction reads a contiguous row of the operand indexed by
// it (a matmul's right operand) into a vector of accumulators.
void ReduceIntoRows(te::Schedule& schedule, const te::Tensor& t, int64_t lanes) {
  std::vector<te::IterVar> reduce = schedule.ReduceAxes(t);
  const std::vector<te::IterVar>& axes = schedule.Axes(t);
  if (reduce.empty() || axes.empty() || axes.back()->is_symbolic()) return;
  te::IterVar last = axes.back();
  std::vector<te::IterVar> order = reduce;
  order.push_back(last);
  schedule.Reorder(t, order);
  VectorizeLastAxis(schedule, t, lanes);
}

}  // namespace

te::Schedule CreateSymbolicSchedule(const std::vector<te::Tensor>& outputs, int64_t vector_lanes) {
  te::Schedule schedule = te::Schedule::Create(outputs);
  std::vector<te::Tensor> computes;
  for (const te::StagePtr& stage : schedule.stages()) {
    if (!stage->is_placeholder()) computes.push_back(te::Tensor(stage->op));
  }
  std::vector<te::Tensor> roots;
  std::unordered_map<const loop::BufferNode*, int64_t> inlined_sizes;
  for (const te::Tensor& t : computes) {  // producers first
    const te::Stage* stage = schedule.FindStage(t);
    int64_t size = InlinedSize(*stage, inlined_sizes);
    if (!stage->is_output && !IsReduction(*stage) && size <= kMaxInlinedSize) {
      inlined_sizes[stage->buffer().get()] = size;
      schedule.ComputeInline(t);
    } else {
      roots.push_back(t);
    }
  }

  const size_t rows = RowAxes(outputs, roots);
  if (rows > 0) {
    const te::Tensor& output = outputs[0];
    std::vector<te::IterVar> axes = schedule.Axes(output);
    if (te::IterVar parallel = ParallelAxis(schedule, output, rows)) {
      schedule.Parallel(output, parallel);
    }
    // Consumers first (a statistic is attached once the stages reading it are).
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
      if (!it->same_as(output)) schedule.ComputeAt(*it, output, axes[rows - 1]);
    }
    return schedule;
  }
  // A reduction whose one reader is an output of its shape (a matmul's bias and activation):
  // computed per output row into a row of accumulators when the row's length is static (the
  // output's row then vectorized alike), else per element into a scalar.
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
    const te::Tensor& t = *it;
    if (outputs.size() != 1 || t.same_as(outputs[0]) || !SameDims(t, outputs[0])) continue;
    const te::Tensor& output = outputs[0];
    std::vector<te::IterVar> axes = schedule.Axes(output);
    if (axes.size() >= 2 && !axes.back()->is_symbolic()) {
      schedule.ComputeAt(t, output, axes[axes.size() - 2]);
      ReduceIntoRows(schedule, t, vector_lanes);
      VectorizeLastAxis(schedule, output, vector_lanes);
    } else {
      schedule.ComputeAt(t, output, axes.back());
    }
  }
  for (const te::Tensor& t : roots) {
    if (schedule.FindStage(t)->attach != te::AttachKind::kRoot) continue;
    if (te::IterVar parallel = ParallelAxis(schedule, t, schedule.Axes(t).size())) {
      schedule.Parallel(t, parallel);
    }
    // A reduction at root writes its output directly: rows of it, vectorized, when static.
    if (!schedule.ReduceAxes(t).empty()) ReduceIntoRows(schedule, t, vector_lanes);
  }
  return schedule;
}

}  // namespace kiln::lower
