// The server side of one TracePass stream, as a gRPC write reactor: the job
// (on a worker) pushes pass events, the reactor writes them one at a time as
// the client takes them, and no thread ever waits on the client. Events wait
// in a buffer bounded in bytes: a slow reader makes its own job wait (never
// kilnd's memory grow), up to the call's deadline. A reader that stopped
// reading after the job ended holds nothing but its buffer, and the call's
// deadline cancels it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "grpcpp/support/server_callback.h"
#include "kiln/v1/compiler.pb.h"
#include "service/compile_job.h"
#include "service/rpc_call.h"

namespace kiln::service {

class TraceStream final : public grpc::ServerWriteReactor<v1::PassEvent>, public EventSink {
 public:
  TraceStream(grpc::CallbackServerContext* context, absl::Duration default_deadline,
              Metrics* metrics, int64_t max_buffered_bytes);

  RpcCall& call() { return call_; }

  // On the job's worker: queues `event`, waiting while the buffer is full
  // (an event always fits an empty buffer). False when the reader is gone
  // or the call should stop: the job should stop too.
  bool Push(v1::PassEvent event) override;
  // The client cancelled, went away, or stopped reading until its deadline.
  bool reader_gone() const override { return reader_gone_.load(); }

  // The job's last act: its status. The stream finishes once the events
  // pushed before are written. The job must not touch the stream afterwards.
  void JobDone(grpc::Status status);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class Next { kNothing, kWrite, kFinish };
  // With mutex_ held: what to start next; done after unlocking (a reaction
  // may run on this thread before StartWrite or Finish returns).
  Next Advance();
  void Perform(Next next);

  RpcCall call_;
  const int64_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable space_;
  std::deque<std::pair<v1::PassEvent, int64_t>> pending_;
  int64_t buffered_bytes_ = 0;  // pending and the write in flight
  v1::PassEvent writing_event_;
  int64_t writing_bytes_ = 0;
  bool writing_ = false;
  bool job_done_ = false;
  bool finished_ = false;
  std::atomic<bool> reader_gone_{false};
  grpc::Status status_;
};

}  // namespace kiln::service
