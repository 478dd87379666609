// The shared result cache (--cache-redis): Compile responses kept in Redis, so a model compiled
// on one replica is answered by any other without compiling. A JobRunner around the one that
// compiles: a Compile looks in this process's cache, then in Redis, then compiles and stores.
//
// Keys are content addresses (the compile id with the artifact selection and name the response
// depends on); every value carries the SHA-256 of its bytes and is verified on read, so a
// corrupt or foreign entry is a miss (counted), never a wrong answer. TracePass and
// GetScheduleRecord pass through: they need the compile in memory, which Redis does not hold.
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "service/job_runner.h"
#include "service/metrics.h"
#include "service/redis_store.h"
#include "service/result_cache.h"

namespace kiln::service {

class SharedCacheJobRunner final : public JobRunner {
 public:
  // `local` (may be null): this process's cache, asked first.
  SharedCacheJobRunner(std::shared_ptr<JobRunner> inner, std::shared_ptr<RedisStore> store,
                       absl::Duration ttl, Metrics* metrics, ResultCache* local)
      : inner_(std::move(inner)),
        store_(std::move(store)),
        ttl_(ttl),
        metrics_(metrics),
        local_(local) {}

  grpc::Status Compile(JobControl& control, const v1::CompileRequest& request,
                       v1::CompileResponse* response) override;
  grpc::Status Trace(JobControl& control, const v1::TraceRequest& request,
                     EventSink& sink) override {
    return inner_->Trace(control, request, sink);
  }
  grpc::Status ScheduleRecord(JobControl& control, const v1::ScheduleRecordRequest& request,
                              v1::ScheduleRecord* response) override {
    return inner_->ScheduleRecord(control, request, response);
  }

 private:
  std::shared_ptr<JobRunner> inner_;
  std::shared_ptr<RedisStore> store_;
  absl::Duration ttl_;
  Metrics* metrics_;
  ResultCache* local_;
};

// The Redis key of a Compile response: "kiln:v1:response:" and the hex SHA-256 of the compile
// id, the artifact kinds asked for and the model's name.
std::string SharedCacheKey(const v1::CompileRequest& request, const std::string& compile_id);
// A stored value: "KILN1", the 32-byte SHA-256 of the response's bytes, the bytes.
std::string EncodeSharedValue(const v1::CompileResponse& response);
// The response in `value` when its digest holds and it is the compile `compile_id`; else false.
bool DecodeSharedValue(const std::string& value, const std::string& compile_id,
                       v1::CompileResponse* response);

}  // namespace kiln::service
