// LoopPartition: splits a serial loop whose body tests the loop variable against bounds into up
// to three loops (before, where every such test holds, after), so that the middle loop, which
// carries almost all iterations, runs without the tests once Simplify decides them there.
//
// The tests come from a padding read inline (a depthwise convolution's `pad[h, w]` is
// `0 <= h - 1 < H ? x[h - 1] : 0`) and from splits that do not divide. A test is a comparison
// in the condition of a Select or an if whose two sides are linear in the loop variable; the
// rest of the comparison is bounded by the ranges of the other loops (TVM's
// partition_const_loop is the same idea). Each loop is split at most once, only middles are
// split again, at most kMaxPartitionDepth loops deep, and only while the body has at most
// kMaxPartitionBodyNodes nodes: a nest grows to at most 2 * depth + 1 copies of bounded bodies.
#pragma once

#include <cstdint>

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

inline constexpr int kMaxPartitionDepth = 2;
inline constexpr int64_t kMaxPartitionBodyNodes = 4096;

// Stage loop, opt level 0. The new loops carry the span of the loop they replace; the copies of
// its body keep their statements' spans.
Pass LoopPartition();

}  // namespace kiln::loop::transform
