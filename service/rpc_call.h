// One RPC from its arrival to gRPC's OnDone: the one deadline it has (fixed
// when it arrives: the client's, or kilnd's default when it sent none), an
// alarm that cancels the call when that deadline passes, whatever the call is
// doing then (a job still running, a write waiting on a reader that stopped
// reading), and, when it ends, its metrics and its one log line.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/alarm.h"
#include "grpcpp/server_context.h"
#include "service/compile_job.h"
#include "service/metrics.h"

namespace kiln::service {

class RpcCall final : public JobControl {
 public:
  using Clock = std::chrono::system_clock;

  // `on_end` runs once when the call ends (the service's in-flight count).
  RpcCall(Rpc rpc, grpc::CallbackServerContext* context, absl::Duration default_deadline,
          Metrics* metrics);
  ~RpcCall();
  RpcCall(const RpcCall&) = delete;
  RpcCall& operator=(const RpcCall&) = delete;

  grpc::CallbackServerContext* context() const { return context_; }
  Clock::time_point deadline() const { return deadline_; }
  // Tells a deadline from a cancel once the work stopped, with a little
  // slack: a client cancels at its own deadline, which comes a transit time
  // before the one kilnd computed from the request's timeout, so its cancel
  // arrives just before; that is a deadline, not a cancel.
  bool PastDeadline() const override {
    return Clock::now() + std::chrono::milliseconds(250) >= deadline_;
  }
  // True once the work for this call should stop: the client cancelled or
  // went away, or the deadline passed.
  bool ShouldStop() const override {
    return context_->IsCancelled() || Clock::now() >= deadline_;
  }

  // From now on the call is cancelled at its deadline, whatever it is doing.
  int64_t MillisecondsLeft() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
  }
  void ArmDeadline();
  // What the log line names (set by the job before the call finishes).
  void Describe(std::string compile_id, std::string model_name) override;
  void set_on_end(std::function<void()> on_end) { on_end_ = std::move(on_end); }

  // Just before the call is finished with `status`: its metrics and log
  // line (before, so a client that has its answer finds them recorded).
  void Record(const grpc::Status& status);
  // From the reactor's OnDone: the call is over (runs `on_end`).
  void End();

 private:
  // Shared with the alarm's callback, which may run after the call is gone.
  // Recursive: TryCancel may run the call's reactions, up to its end, on the
  // alarm's own thread before it returns.
  struct AlarmState {
    std::recursive_mutex mutex;
    grpc::CallbackServerContext* context = nullptr;  // null once the call ended
  };

  const Rpc rpc_;
  grpc::CallbackServerContext* const context_;
  Metrics* const metrics_;
  const std::chrono::steady_clock::time_point start_;
  const Clock::time_point deadline_;
  std::shared_ptr<AlarmState> alarm_state_;
  std::unique_ptr<grpc::Alarm> alarm_;
  std::string compile_id_;
  std::string model_name_;
  std::function<void()> on_end_;
};

// A status as it may go to a client: its message travels in a trailer, and
// clients refuse metadata over 8 KiB (gRPC's default), so a long message (a
// list of every kernel, an echo of the request) is cut to 4 KiB.
grpc::Status ForClient(grpc::Status status);

// Every field a client controls is cut to this many bytes in the log.
inline constexpr size_t kMaxLoggedFieldBytes = 256;
std::string TruncatedForLog(const std::string& field);

}  // namespace kiln::service
