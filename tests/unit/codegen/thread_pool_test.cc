// libkiln_rt's parallel loops (engine/runtime/thread_pool.c): whatever the thread count, the
// extent and how uneven the iterations are, every iteration runs exactly once and the loop has
// finished when kiln_rt_parallel_for returns; a parallel loop inside one runs serially.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/runtime/kiln_runtime.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  bool nested = false;  // each iteration also runs a parallel loop of 3
  std::atomic<int> nested_runs{0};
  explicit Counts(int64_t n) : runs(static_cast<size_t>(n)) {}
};

void CountNested(int64_t begin, int64_t end, void* closure) {
  static_cast<Counts*>(closure)->nested_runs += static_cast<int>(end - begin);
}

void Count(int64_t begin, int64_t end, void* closure) {
  auto* counts = static_cast<Counts*>(closure);
  for (int64_t i = begin; i < end; ++i) {
    // Iterations of uneven cost: every 8th spins for a while.
    if (i % 8 == 0) {
      volatile double sink = 0;
      for (int k = 0; k < 20000; ++k) sink = sink + k;
    }
    counts->runs[static_cast<size_t>(i)] += 1;
    if (counts->nested) kiln_rt_parallel_for(3, CountNested, counts);
  }
}

TEST(ThreadPoolTest, EveryIterationRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    kiln_rt_set_num_threads(threads);
    for (int64_t extent : {1, 2, 7, 64, 1001}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        Counts counts(extent);
        kiln_rt_parallel_for(extent, Count, &counts);
        for (int64_t i = 0; i < extent; ++i) {
          ASSERT_EQ(counts.runs[static_cast<size_t>(i)].load(), 1)
              << "iteration " << i << " of " << extent << " on " << threads << " threads";
        }
      }
    }
  }
  kiln_rt_set_num_threads(0);
}

TEST(ThreadPoolTest, NestedParallelLoopsRunSerially) {
  kiln_rt_set_num_threads(2);
  Counts counts(50);
  counts.nested = true;
  kiln_rt_parallel_for(50, Count, &counts);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(counts.runs[static_cast<size_t>(i)].load(), 1);
  EXPECT_EQ(counts.nested_runs.load(), 50 * 3);
  kiln_rt_set_num_threads(0);
}

// The chunks a loop was cut into, as (begin, end) pairs.
struct Chunks {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> taken;
};

void Record(int64_t begin, int64_t end, void* closure) {
  auto* chunks = static_cast<Chunks*>(closure);
  std::lock_guard<std::mutex> lock(chunks->mutex);
  chunks->taken.emplace_back(begin, end);
}

// Each thread's range is kept in 32-bit halves of one atomic word: a loop of more than
// INT32_MAX iterations (a kernel's flattened elements can be) is counted in units of several
// iterations, and its chunks must still tile [0, extent) with neither gap nor overlap; so must a
// loop just below and just above that limit, and one near INT64_MAX.
TEST(ThreadPoolTest, ChunksOfALoopBeyondThirtyTwoBitsTileItExactly) {
  for (int threads : {2, 3}) {
    kiln_rt_set_num_threads(threads);
    for (int64_t extent : {(int64_t{1} << 33) + 5, int64_t{3} << 31, int64_t{INT32_MAX},
                           int64_t{INT32_MAX} + 1, INT64_MAX - 3}) {
      Chunks chunks;
      kiln_rt_parallel_for(extent, Record, &chunks);
      std::sort(chunks.taken.begin(), chunks.taken.end());
      int64_t covered = 0;
      for (const auto& [begin, end] : chunks.taken) {
        ASSERT_EQ(begin, covered) << "extent " << extent << " on " << threads << " threads";
        ASSERT_LT(begin, end);
        covered = end;
      }
      EXPECT_EQ(covered, extent) << "on " << threads << " threads";
    }
  }
  kiln_rt_set_num_threads(0);
}

}  // namespace
