// The work of one RPC that compiles, wherever it runs: on one of kilnd's
// worker threads, or in an isolated worker process (--isolate=process). A
// job looks up or runs the compile (caching it), then builds the response:
// artifacts, trace events and the summary, the expanded schedule record. It
// knows its call only through JobControl (stop? past the deadline?) and its
// TracePass reader only through EventSink, so the same code serves both.
#pragma once

#include <cstdint>
#include <string>

#include "engine/support/compile_budget.h"
#include "grpcpp/support/status.h"
#include "kiln/v1/compiler.pb.h"
#include "service/metrics.h"
#include "service/result_cache.h"

namespace kiln::service {

// What a job asks of the call it works for.
class JobControl {
 public:
  virtual ~JobControl() = default;
  // True once the work should stop: the client cancelled or went away, or
  // the deadline passed.
  virtual bool ShouldStop() const = 0;
  // Once stopped: whether the deadline (rather than a cancel) stopped it.
  virtual bool PastDeadline() const = 0;
  virtual int64_t MillisecondsLeft() const = 0;
  // Names the compile in the call's log line.
  virtual void Describe(std::string compile_id, std::string model_name) = 0;
};

// Where a TracePass job's events go, in order (the summary event last).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // May wait while the reader is behind; false once the reader is gone.
  virtual bool Push(v1::PassEvent event) = 0;
  virtual bool reader_gone() const = 0;
};

// What jobs share: metrics, the result cache, the limits of one compile.
struct JobEnvironment {
  Metrics* metrics = nullptr;
  ResultCache* cache = nullptr;
  CompileLimits limits;
  // The largest trace event: bigger ones go without their IR (ir_omitted).
  int64_t max_event_bytes = int64_t{64} << 20;
};

grpc::Status RunCompileJob(const JobEnvironment& environment, JobControl& control,
                           const v1::CompileRequest& request, v1::CompileResponse* response);
// Streams the events the request asks for, then the summary event.
grpc::Status RunTraceJob(const JobEnvironment& environment, JobControl& control,
                         const v1::TraceRequest& request, EventSink& sink);
grpc::Status RunScheduleRecordJob(const JobEnvironment& environment, JobControl& control,
                                  const v1::ScheduleRecordRequest& request,
                                  v1::ScheduleRecord* response);

// absl's codes are gRPC's codes, number for number.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace kiln::service
