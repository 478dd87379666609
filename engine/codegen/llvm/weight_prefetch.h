// Weight prefetch: a model whose weights and workspace do not stay in the last-level cache
// between runs reads every weight from DRAM, and a kernel's first pass over its weights waits on
// it (MobileNetV2's 1280x1000 classifier: 0.22 ms in the model at DRAM's ~20 GB/s, 0.06 ms with
// its weights in L3). So each large weight is fetched ahead by an earlier kernel that computes
// long enough to hide the traffic: its lines spread over that kernel's loop iterations, a few
// `prefetchnta` per iteration, so the kernel's own loads keep the memory pipeline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/loop/prim_func.h"
#include "engine/lower/lower_module.h"

namespace kiln::codegen {

// Weights at least this large are fetched ahead; the hardware prefetcher catches up with a
// smaller one's stream before it would pay (measured on EfficientNet: the 64-256 KiB weights
// of its early layers cost their hosts more than they saved).
inline constexpr size_t kPrefetchedWeightBytes = size_t{256} << 10;

// What one kernel fetches ahead: at the top of every iteration of `host` (the last of `nest`,
// the loops from the kernel's outermost down to it), `lines_per_iteration` 64-byte lines of
// each target, from line first_line + (iteration index over `nest`) x lines_per_iteration on,
// within the target's `lines` lines.
struct PrefetchPlan {
  const loop::ForNode* host = nullptr;
  std::vector<const loop::ForNode*> nest;
  struct Target {
    size_t weight;  // into LoweredModule::constants
    int64_t first_line;
    int64_t lines;
    int64_t lines_per_iteration;
  };
  std::vector<Target> targets;
};

// The plans by kernel name, empty when the model's footprint (its constants plus
// `workspace_bytes`) is at most `footprint_bytes` or `footprint_bytes` is negative. Each call
// of main with weights of kPrefetchedWeightBytes or more, in a kernel whose FLOPs are few per
// weight byte, gets their lines fetched by the kernels among the 8 calls before it (those
// main calls once), shared in proportion to their reduction FLOPs; a host's loop is the
// deepest on its heaviest loop path whose iterations, counted over its enclosing loops, do not
// exceed the lines it fetches; a host that would fetch more than 32 lines per iteration of that
// loop fetches nothing.
std::map<std::string, PrefetchPlan> PlanWeightPrefetches(const lower::LoweredModule& lowered,
                                                         int64_t workspace_bytes,
                                                         int64_t footprint_bytes);

}  // namespace kiln::codegen
