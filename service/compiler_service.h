// The kiln.v1.Compiler service: a thin adapter from RPCs to the driver.
// Every compile runs as a job on the worker pool (a full queue is
// RESOURCE_EXHAUSTED at once), watches its client (a cancel or an expired
// deadline stops it at the next pass boundary), reports each pass to the
// metrics, and leaves its result in the cache under its compile id.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <memory>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "service/metrics.h"
#include "service/result_cache.h"
#include "service/worker_pool.h"

namespace kiln::service {

struct ServiceOptions {
  int workers = 2;
  int queue_depth = 4;
  // Bytes of pass events a TracePass may buffer ahead of its reader.
  int64_t max_event_bytes = int64_t{64} << 20;
  // For requests that carry no deadline of their own.
  absl::Duration default_deadline = absl::Minutes(5);
  int64_t cache_bytes = int64_t{1} << 30;
  // Bearer tokens accepted on the Compiler service; empty: no authentication.
  std::set<std::string> auth_tokens;
};

class CompilerService final : public v1::Compiler::Service {
 public:
  CompilerService(ServiceOptions options, Metrics* metrics);
  ~CompilerService() override;

  grpc::Status Compile(grpc::ServerContext* context, const v1::CompileRequest* request,
                       v1::CompileResponse* response) override;
  grpc::Status TracePass(grpc::ServerContext* context, const v1::TraceRequest* request,
                         grpc::ServerWriter<v1::PassEvent>* writer) override;
  grpc::Status GetScheduleRecord(grpc::ServerContext* context,
                                 const v1::ScheduleRecordRequest* request,
                                 v1::ScheduleRecord* response) override;
  grpc::Status ListPasses(grpc::ServerContext* context, const v1::ListPassesRequest* request,
                          v1::ListPassesResponse* response) override;

  // Graceful shutdown, first step: new calls get UNAVAILABLE from now on.
  void StartDraining();
  // Waits until no call is in flight or `timeout` passes; true when idle.
  bool WaitForIdle(absl::Duration timeout);
  // Refuses new jobs and waits for the running and queued ones.
  void Shutdown();

 private:
  class Job;
  struct Outcome;
  class Completion;

  // Starts the compile of `request`: from the cache, or queued for a worker.
  // A `job` with an event channel (TracePass) always compiles, and has its
  // channel closed when the compile ends. The caller must Wait() on the
  // result before `context`, `request` or `job` go away.
  std::shared_ptr<Completion> StartCompile(grpc::ServerContext* context,
                                           const v1::CompileRequest& request, Job* job);
  class CallGuard;
  grpc::Status Authorize(const grpc::ServerContext* context) const;
  // Runs `work` on a worker and waits for it (RESOURCE_EXHAUSTED with
  // retry pushback when the queue is full).
  grpc::Status RunOnWorker(grpc::ServerContext* context, const std::function<grpc::Status()>& work);

  ServiceOptions options_;
  Metrics* metrics_;
  ResultCache cache_;
  WorkerPool pool_;
  std::mutex calls_mutex_;
  std::condition_variable calls_changed_;
  int calls_in_flight_ = 0;
  bool draining_ = false;
};

}  // namespace kiln::service
