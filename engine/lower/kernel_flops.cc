// KernelFlops: counted from the schedule's stages, which hold every reduction's extents.
#include "engine/lower/kernel_flops.h"

#include <limits>
#include <vector>

namespace kiln::lower {
namespace {

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) {
    return std::numeric_limits<int64_t>::max();
  }
  return a * b;
}

}  // namespace

int64_t KernelFlops(const LoweredKernel& kernel) {
  int64_t flops = 0;
  for (const te::StagePtr& stage : kernel.schedule.stages()) {
    if (stage->is_placeholder() || !stage->op->body.has_value() ||
        !stage->op->body->reduce.has_value()) {
      continue;
    }
    int64_t count = 2;
    std::vector<te::IterVar> axes = stage->op->axis;
    axes.insert(axes.end(), stage->op->body->reduce_axes.begin(),
                stage->op->body->reduce_axes.end());
    for (const te::IterVar& axis : axes) {
      if (axis->is_symbolic()) return 0;  // a run decides: no static count
      count = SaturatingMultiply(count, axis->extent);
    }
    flops = count > std::numeric_limits<int64_t>::max() - flops ? std::numeric_limits<int64_t>::max()
                                                                 : flops + count;
  }
  return flops;
}

}  // namespace kiln::lower
