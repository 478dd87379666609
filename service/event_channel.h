// A bounded hand-off of pass events from a compile job (the producer, on a
// worker) to the RPC thread writing them to the client (the consumer). The
// bound is in bytes: a slow reader blocks its own job instead of growing
// kilnd's memory. Either side can close it; a closed channel refuses pushes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "kiln/v1/compiler.pb.h"

namespace kiln::service {

class EventChannel {
 public:
  explicit EventChannel(int64_t max_buffered_bytes) : max_bytes_(max_buffered_bytes) {}

  // Blocks while the buffer is full (one event always fits an empty buffer);
  // false when the channel is closed, or when `should_stop` (asked every
  // 100 ms while blocked; may be empty) says the producer must give up: a
  // reader that stops reading must not hold its job past its deadline.
  bool Push(v1::PassEvent event, const std::function<bool()>& should_stop = nullptr);
  // Blocks until an event arrives; nullopt once closed and drained.
  std::optional<v1::PassEvent> Pop();
  void Close();

 private:
  const int64_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<v1::PassEvent, int64_t>> events_;
  int64_t bytes_ = 0;
  bool closed_ = false;
};

}  // namespace kiln::service
