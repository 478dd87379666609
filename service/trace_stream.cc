#include "service/trace_stream.h"

#include <chrono>

namespace kiln::service {

TraceStream::TraceStream(grpc::CallbackServerContext* context, absl::Duration default_deadline,
                         Metrics* metrics, int64_t max_buffered_bytes)
    : call_(Rpc::kTracePass, context, default_deadline, metrics),
      max_bytes_(max_buffered_bytes) {}

bool TraceStream::Push(v1::PassEvent event) {
  const int64_t size = static_cast<int64_t>(event.ByteSizeLong());
  Next next;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto fits = [&] {
      return reader_gone_ || buffered_bytes_ == 0 || buffered_bytes_ + size <= max_bytes_;
    };
    // Woken by each finished write; the poll notices a passed deadline.
    while (!space_.wait_for(lock, std::chrono::milliseconds(100), fits)) {
      if (call_.ShouldStop()) return false;
    }
    if (reader_gone_) return false;
    pending_.emplace_back(std::move(event), size);
    buffered_bytes_ += size;
    next = Advance();
  }
  Perform(next);
  return true;
}

void TraceStream::JobDone(grpc::Status status) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_done_ = true;
    status_ = ForClient(std::move(status));
    next = Advance();
  }
  Perform(next);
}

void TraceStream::OnWriteDone(bool ok) {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writing_ = false;
    buffered_bytes_ -= writing_bytes_;
    writing_event_.Clear();
    if (!ok) {
      // The stream is broken (cancelled, deadline, connection gone): what is
      // still buffered can never be sent.
      reader_gone_ = true;
      pending_.clear();
      buffered_bytes_ = 0;
    }
    space_.notify_all();
    next = Advance();
  }
  Perform(next);
}

void TraceStream::OnCancel() {
  Next next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reader_gone_ = true;
    space_.notify_all();
    next = Advance();
  }
  Perform(next);
}

void TraceStream::OnDone() {
  call_.End();
  delete this;
}

TraceStream::Next TraceStream::Advance() {
  if (writing_ || finished_) return Next::kNothing;
  if (!pending_.empty() && !reader_gone_) {
    writing_event_ = std::move(pending_.front().first);
    writing_bytes_ = pending_.front().second;
    pending_.pop_front();
    writing_ = true;
    return Next::kWrite;
  }
  if (!job_done_) return Next::kNothing;
  finished_ = true;
  if (reader_gone_ && status_.ok()) {
    status_ = call_.PastDeadline()
                  ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                 "the deadline passed before the client read the trace")
                  : grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the trace");
  }
  return Next::kFinish;
}

void TraceStream::Perform(Next next) {
  switch (next) {
    case Next::kNothing: return;
    case Next::kWrite: StartWrite(&writing_event_); return;
    // status_ is final once finished_ is set; Finish takes a copy.
    case Next::kFinish:
      call_.Record(status_);
      Finish(status_);
      return;
  }
}

}  // namespace kiln::service
