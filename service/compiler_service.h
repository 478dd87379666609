// The kiln.v1.Compiler service: a thin adapter from RPCs to the driver, on
// gRPC's callback API so that no thread ever waits on a client. Every RPC
// that compiles runs as one job on the worker pool (a full queue is
// RESOURCE_EXHAUSTED at once): cache lookup, compile, response. Each call has
// one deadline, fixed when it arrives (the client's, or the default), which
// the job polls and which cancels the call itself when it passes, whether its
// job is still running or its stream is waiting on a reader that stopped.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "engine/support/compile_budget.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "service/bearer_tokens.h"
#include "service/metrics.h"
#include "service/job_runner.h"
#include "service/redis_store.h"
#include "service/result_cache.h"
#include "service/rpc_call.h"
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
  // What one compile may spend (bytes of tensor data, interpreter steps).
  CompileLimits compile_limits;
  // Bearer tokens accepted on the Compiler service; empty: no authentication.
  BearerTokens auth_tokens;
  // Where jobs run; null: on the worker threads themselves (in process).
  std::shared_ptr<JobRunner> runner;
  // The shared result cache in Redis (--cache-redis); null: none. Its entries live `shared_ttl`.
  std::shared_ptr<RedisStore> shared_cache;
  absl::Duration shared_ttl = absl::Hours(24);
};

class CompilerService final : public v1::Compiler::CallbackService {
 public:
  CompilerService(ServiceOptions options, Metrics* metrics);
  ~CompilerService() override;

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const v1::CompileRequest* request,
                                    v1::CompileResponse* response) override;
  grpc::ServerWriteReactor<v1::PassEvent>* TracePass(grpc::CallbackServerContext* context,
                                                     const v1::TraceRequest* request) override;
  grpc::ServerUnaryReactor* GetScheduleRecord(grpc::CallbackServerContext* context,
                                              const v1::ScheduleRecordRequest* request,
                                              v1::ScheduleRecord* response) override;
  grpc::ServerUnaryReactor* ListPasses(grpc::CallbackServerContext* context,
                                       const v1::ListPassesRequest* request,
                                       v1::ListPassesResponse* response) override;

  // Graceful shutdown, first step: new calls get UNAVAILABLE from now on.
  void StartDraining();
  // Waits until no call is in flight or `timeout` passes; true when idle.
  bool WaitForIdle(absl::Duration timeout);
  // Refuses new jobs and waits for the running and queued ones.
  void Shutdown();

 private:
  class UnaryCall;

  // Admits a call (UNAVAILABLE while draining, UNAUTHENTICATED without a
  // valid token): nothing of the request is looked at before this.
  grpc::Status Admit(const grpc::CallbackServerContext* context);
  grpc::Status Authorize(const grpc::CallbackServerContext* context) const;
  void CallEnded();
  // Admits `call` (else `refuse` finishes it with why), arms its deadline and
  // queues `work` for a worker (a full queue: `refuse` with
  // RESOURCE_EXHAUSTED and retry pushback). Nothing of the request but its
  // size is looked at before it is admitted.
  void Launch(RpcCall& call, int64_t request_bytes,
              const std::function<void(grpc::Status)>& refuse, std::function<void()> work);
  bool Submit(std::function<void()> work);
  grpc::Status QueueFull(grpc::CallbackServerContext* context) const;


  ServiceOptions options_;
  Metrics* metrics_;
  ResultCache cache_;
  std::shared_ptr<JobRunner> runner_;
  WorkerPool pool_;
  std::mutex calls_mutex_;
  std::condition_variable calls_changed_;
  int calls_in_flight_ = 0;
  bool draining_ = false;
};

}  // namespace kiln::service
