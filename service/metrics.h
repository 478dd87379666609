// kilnd's Prometheus metrics. Every label takes values from a bounded set
// (RPC names, status codes, stages, registered pass names), never a model
// name or digest, and every child series is created once, at startup, so
// recording an event is a pointer dereference and an atomic add.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/driver/passes.h"
#include "grpcpp/support/status.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kiln::service {

enum class Rpc { kCompile, kTracePass, kGetScheduleRecord, kListPasses };
inline constexpr int kNumRpcs = 4;
inline constexpr int kNumStatusCodes = 17;  // OK .. UNAUTHENTICATED
const char* RpcName(Rpc rpc);
const char* StatusCodeName(grpc::StatusCode code);  // "OK", "INVALID_ARGUMENT", ...

class Metrics {
 public:
  // Pass series for every pass in `passes` (and Sequential), per its stage.
  explicit Metrics(const PassRegistry& passes);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // Graph and loop passes not in the registry at startup are not recorded (bounded labels);
  // LLVM's passes get a series when first seen, up to kMaxLlvmPasses names (LLVM's pipelines
  // are fixed per opt level, so this is never reached in practice).
  void ObservePass(PassStage stage, const std::string& pass, double seconds);
  static constexpr size_t kMaxLlvmPasses = 512;
  void ObserveRequest(Rpc rpc, grpc::StatusCode code);
  void ObserveCompile(grpc::StatusCode code, double seconds);
  void ObserveRequestBytes(double bytes) { request_bytes_->Observe(bytes); }
  // How many workers there are and how many jobs may queue (what saturation is measured by).
  void SetCapacity(int workers, int queue_capacity) {
    workers_->Set(workers);
    queue_capacity_->Set(queue_capacity);
  }
  void SetLoad(int queued, int busy) {
    queue_depth_->Set(queued);
    workers_busy_->Set(busy);
  }
  void CacheHit() { cache_hits_->Increment(); }
  void CacheMiss() { cache_misses_->Increment(); }
  // The shared (Redis) cache: answered from it, not in it, an entry that failed its digest
  // check, Redis unreachable or too slow; whether the last operation reached it.
  void SharedCacheHit() { shared_cache_->hits->Increment(); }
  void SharedCacheMiss() { shared_cache_->misses->Increment(); }
  void SharedCacheCorrupt() { shared_cache_->corrupt->Increment(); }
  void SharedCacheUnavailable() { shared_cache_->unavailable->Increment(); }
  void SetSharedCacheUp(bool up) { shared_cache_->up->Set(up ? 1 : 0); }
  void TraceEvent() { trace_events_->Increment(); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  // "<stage>/<pass>" -> series; built once, read without locks.
  std::unordered_map<std::string, prometheus::Histogram*> pass_duration_;
  prometheus::Family<prometheus::Histogram>* pass_family_ = nullptr;
  std::mutex llvm_mutex_;
  std::unordered_map<std::string, prometheus::Histogram*> llvm_pass_duration_;  // llvm_mutex_
  std::array<std::array<prometheus::Counter*, kNumStatusCodes>, kNumRpcs> requests_{};
  std::array<prometheus::Histogram*, kNumStatusCodes> compile_duration_{};
  prometheus::Histogram* request_bytes_ = nullptr;
  prometheus::Gauge* queue_depth_ = nullptr;
  prometheus::Gauge* workers_busy_ = nullptr;
  prometheus::Gauge* workers_ = nullptr;
  prometheus::Gauge* queue_capacity_ = nullptr;
  prometheus::Counter* cache_hits_ = nullptr;
  prometheus::Counter* cache_misses_ = nullptr;
  prometheus::Counter* trace_events_ = nullptr;
  struct SharedCacheSeries {
    prometheus::Counter* hits = nullptr;
    prometheus::Counter* misses = nullptr;
    prometheus::Counter* corrupt = nullptr;
    prometheus::Counter* unavailable = nullptr;
    prometheus::Gauge* up = nullptr;
  };
  std::unique_ptr<SharedCacheSeries> shared_cache_ = std::make_unique<SharedCacheSeries>();
};

}  // namespace kiln::service
