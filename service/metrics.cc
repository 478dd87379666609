#include "service/metrics.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/compile_request.h"

namespace kiln::service {
namespace {

// `count` boundaries from `first`, each `factor` times the one before.
prometheus::Histogram::BucketBoundaries Exponential(double first, double factor, int count) {
  prometheus::Histogram::BucketBoundaries bounds;
  double bound = first;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

// 1 ms .. 65.5 s, doubling: pass and compile times span five decades.
prometheus::Histogram::BucketBoundaries DurationBuckets() { return Exponential(0.001, 2, 17); }

std::string PassKey(PassStage stage, const std::string& pass) {
  return absl::StrCat(PassStageName(stage), "/", pass);
}

}  // namespace

const char* RpcName(Rpc rpc) {
  switch (rpc) {
    case Rpc::kCompile: return "Compile";
    case Rpc::kTracePass: return "TracePass";
    case Rpc::kGetScheduleRecord: return "GetScheduleRecord";
    case Rpc::kListPasses: return "ListPasses";
  }
  return "?";
}

const char* StatusCodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[kNumStatusCodes] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  int index = static_cast<int>(code);
  return index >= 0 && index < kNumStatusCodes ? kNames[index] : "UNKNOWN";
}

Metrics::Metrics(const PassRegistry& passes) : registry_(std::make_shared<prometheus::Registry>()) {
  auto& pass_family = prometheus::BuildHistogram()
                          .Name("kiln_pass_duration_seconds")
                          .Help("Wall time of each pass run, by stage and pass")
                          .Register(*registry_);
  pass_family_ = &pass_family;
  auto add_pass = [&](PassStage stage, const std::string& name) {
    pass_duration_[PassKey(stage, name)] =
        &pass_family.Add({{"stage", PassStageName(stage)}, {"pass", name}}, DurationBuckets());
  };
  for (const PassRegistration* registration : passes.List()) {
    add_pass(registration->info.stage, registration->info.name);
  }
  add_pass(PassStage::kGraph, "Sequential");

  auto& request_family = prometheus::BuildCounter()
                             .Name("kiln_requests_total")
                             .Help("Finished RPCs by method and gRPC status code")
                             .Register(*registry_);
  for (int rpc = 0; rpc < kNumRpcs; ++rpc) {
    for (int code = 0; code < kNumStatusCodes; ++code) {
      requests_[rpc][code] = &request_family.Add(
          {{"rpc", RpcName(static_cast<Rpc>(rpc))},
           {"code", StatusCodeName(static_cast<grpc::StatusCode>(code))}});
    }
  }
  auto& compile_family = prometheus::BuildHistogram()
                             .Name("kiln_compile_duration_seconds")
                             .Help("Wall time of compile jobs on a worker, by gRPC status code")
                             .Register(*registry_);
  for (int code = 0; code < kNumStatusCodes; ++code) {
    compile_duration_[code] = &compile_family.Add(
        {{"status", StatusCodeName(static_cast<grpc::StatusCode>(code))}}, DurationBuckets());
  }
  request_bytes_ = &prometheus::BuildHistogram()
                        .Name("kiln_request_bytes")
                        .Help("Size of compile requests (the model) in bytes")
                        .Register(*registry_)
                        .Add({}, Exponential(1024, 4, 12));  // 1 KiB .. 4 GiB
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("kiln_queue_depth")
                      .Help("Compile jobs waiting for a worker")
                      .Register(*registry_)
                      .Add({});
  workers_busy_ = &prometheus::BuildGauge()
                       .Name("kiln_workers_busy")
                       .Help("Workers running a compile job")
                       .Register(*registry_)
                       .Add({});
  workers_ = &prometheus::BuildGauge()
                  .Name("kiln_workers")
                  .Help("Compile worker threads")
                  .Register(*registry_)
                  .Add({});
  queue_capacity_ = &prometheus::BuildGauge()
                         .Name("kiln_queue_capacity")
                         .Help("Compile jobs that may wait for a worker before RESOURCE_EXHAUSTED")
                         .Register(*registry_)
                         .Add({});
  cache_hits_ = &prometheus::BuildCounter()
                     .Name("kiln_cache_hits_total")
                     .Help("Requests answered from the in-process result cache")
                     .Register(*registry_)
                     .Add({});
  cache_misses_ = &prometheus::BuildCounter()
                       .Name("kiln_cache_misses_total")
                       .Help("Requests that had to compile")
                       .Register(*registry_)
                       .Add({});
  auto& shared = prometheus::BuildCounter()
                     .Name("kiln_shared_cache_requests_total")
                     .Help("Compiles looked up in the shared (Redis) result cache, by result")
                     .Register(*registry_);
  shared_cache_->hits = &shared.Add({{"result", "hit"}});
  shared_cache_->misses = &shared.Add({{"result", "miss"}});
  shared_cache_->corrupt = &shared.Add({{"result", "corrupt"}});
  shared_cache_->unavailable = &shared.Add({{"result", "unavailable"}});
  shared_cache_->up = &prometheus::BuildGauge()
                           .Name("kiln_shared_cache_up")
                           .Help("1 when the last shared-cache operation reached Redis (0 also "
                                 "when no shared cache is configured)")
                           .Register(*registry_)
                           .Add({});
  trace_events_ = &prometheus::BuildCounter()
                       .Name("kiln_trace_events_total")
                       .Help("Pass events sent on TracePass streams")
                       .Register(*registry_)
                       .Add({});
  prometheus::BuildGauge()
      .Name("kiln_build_info")
      .Help("Always 1; the labels describe this kilnd")
      .Register(*registry_)
      .Add({{"version", KilnVersion()}})
      .Set(1);
}

void Metrics::ObservePass(PassStage stage, const std::string& pass, double seconds) {
  if (stage == PassStage::kLlvm) {
    std::lock_guard<std::mutex> lock(llvm_mutex_);
    auto it = llvm_pass_duration_.find(pass);
    if (it == llvm_pass_duration_.end()) {
      if (llvm_pass_duration_.size() >= kMaxLlvmPasses) return;
      it = llvm_pass_duration_
               .emplace(pass, &pass_family_->Add({{"stage", PassStageName(stage)}, {"pass", pass}},
                                                 DurationBuckets()))
               .first;
    }
    it->second->Observe(seconds);
    return;
  }
  auto it = pass_duration_.find(PassKey(stage, pass));
  if (it != pass_duration_.end()) it->second->Observe(seconds);
}

void Metrics::ObserveRequest(Rpc rpc, grpc::StatusCode code) {
  int index = static_cast<int>(code);
  if (index < 0 || index >= kNumStatusCodes) index = static_cast<int>(grpc::StatusCode::UNKNOWN);
  requests_[static_cast<int>(rpc)][index]->Increment();
}

void Metrics::ObserveCompile(grpc::StatusCode code, double seconds) {
  int index = static_cast<int>(code);
  if (index < 0 || index >= kNumStatusCodes) index = static_cast<int>(grpc::StatusCode::UNKNOWN);
  compile_duration_[index]->Observe(seconds);
}

}  // namespace kiln::service
