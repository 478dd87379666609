#include "service/worker_pool.h"

namespace kiln::service {

WorkerPool::WorkerPool(int workers, int queue_depth, LoadObserver observer)
    : queue_depth_(queue_depth), observer_(std::move(observer)) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TrySubmit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || static_cast<int>(queue_.size()) >= queue_depth_ + IdleWorkers()) return false;
    queue_.push_back(std::move(job));
    NotifyLoad();
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void WorkerPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    NotifyLoad();
    lock.unlock();
    job();
    job = nullptr;  // release what the job captured before reporting idle
    lock.lock();
    --busy_;
    NotifyLoad();
  }
}

void WorkerPool::NotifyLoad() {
  if (observer_) observer_(static_cast<int>(queue_.size()), busy_);
}

}  // namespace kiln::service
