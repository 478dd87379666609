// Compile jobs run on a fixed set of worker threads behind a bounded queue:
// a full queue refuses at once (the caller answers RESOURCE_EXHAUSTED) rather
// than letting requests pile up in memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::service {

class WorkerPool {
 public:
  // Called with (queued, busy) whenever either changes (for the gauges).
  using LoadObserver = std::function<void(int queued, int busy)>;

  WorkerPool(int workers, int queue_depth, LoadObserver observer = nullptr);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`; false (and `job` is dropped) when `queue_depth` jobs are
  // already waiting or the pool is shutting down.
  bool TrySubmit(std::function<void()> job);

  // Refuses new jobs, runs the queued ones, joins the workers.
  void Shutdown();

  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  void WorkerLoop();
  void NotifyLoad();  // with mutex_ held
  // Workers neither running a job nor about to take a queued one.
  int IdleWorkers() const {
    int idle = static_cast<int>(threads_.size()) - busy_;
    return idle > 0 ? idle : 0;
  }

  const int queue_depth_;
  LoadObserver observer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  int busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kiln::service
