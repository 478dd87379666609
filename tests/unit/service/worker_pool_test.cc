// The worker pool: N jobs run, `queue_depth` wait, the rest are refused at
// once; shutdown runs what was queued.
#include "service/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

namespace kiln::service {
namespace {

TEST(WorkerPoolTest, RefusesJobsBeyondTheWorkersAndTheQueue) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0}, finished{0};
  WorkerPool pool(2, 2);
  auto job = [&] {
    ++started;
    released.wait();
    ++finished;
  };
  int accepted = 0;
  for (int i = 0; i < 6; ++i) accepted += pool.TrySubmit(job) ? 1 : 0;
  EXPECT_EQ(accepted, 4);  // 2 running (or about to), 2 waiting
  release.set_value();
  pool.Shutdown();
  EXPECT_EQ(finished.load(), 4);
  EXPECT_FALSE(pool.TrySubmit(job));  // after shutdown
}

TEST(WorkerPoolTest, ReportsItsLoad) {
  std::atomic<int> max_busy{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  WorkerPool pool(2, 0, [&](int, int busy) {
    int seen = max_busy.load();
    while (busy > seen && !max_busy.compare_exchange_weak(seen, busy)) {
    }
  });
  ASSERT_TRUE(pool.TrySubmit([&] { released.wait(); }));
  ASSERT_TRUE(pool.TrySubmit([&] { released.wait(); }));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (max_busy.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(max_busy.load(), 2);
  release.set_value();
  pool.Shutdown();
}

}  // namespace
}  // namespace kiln::service
