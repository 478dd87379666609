#include "service/event_channel.h"

#include <chrono>

namespace kiln::service {

bool EventChannel::Push(v1::PassEvent event, const std::function<bool()>& should_stop) {
  const int64_t size = static_cast<int64_t>(event.ByteSizeLong());
  std::unique_lock<std::mutex> lock(mutex_);
  auto fits = [&] { return closed_ || events_.empty() || bytes_ + size <= max_bytes_; };
  while (!changed_.wait_for(lock, std::chrono::milliseconds(100), fits)) {
    if (should_stop && should_stop()) return false;
  }
  if (closed_) return false;
  events_.emplace_back(std::move(event), size);
  bytes_ += size;
  changed_.notify_all();
  return true;
}

std::optional<v1::PassEvent> EventChannel::Pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return closed_ || !events_.empty(); });
  if (events_.empty()) return std::nullopt;
  auto [event, size] = std::move(events_.front());
  events_.pop_front();
  bytes_ -= size;
  changed_.notify_all();
  return std::move(event);
}

void EventChannel::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

}  // namespace kiln::service
