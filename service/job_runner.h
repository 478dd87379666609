// Where a compile job runs: here, on the worker thread that took it
// (InProcessJobRunner), or in an isolated worker process
// (ProcessIsolatedJobRunner, --isolate=process). The service hands every job
// to one runner and never knows which.
#pragma once

#include "service/compile_job.h"

namespace kiln::service {

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  virtual grpc::Status Compile(JobControl& control, const v1::CompileRequest& request,
                               v1::CompileResponse* response) = 0;
  virtual grpc::Status Trace(JobControl& control, const v1::TraceRequest& request,
                             EventSink& sink) = 0;
  virtual grpc::Status ScheduleRecord(JobControl& control,
                                      const v1::ScheduleRecordRequest& request,
                                      v1::ScheduleRecord* response) = 0;
};

class InProcessJobRunner final : public JobRunner {
 public:
  explicit InProcessJobRunner(JobEnvironment environment) : environment_(environment) {}
  grpc::Status Compile(JobControl& control, const v1::CompileRequest& request,
                       v1::CompileResponse* response) override {
    return RunCompileJob(environment_, control, request, response);
  }
  grpc::Status Trace(JobControl& control, const v1::TraceRequest& request,
                     EventSink& sink) override {
    return RunTraceJob(environment_, control, request, sink);
  }
  grpc::Status ScheduleRecord(JobControl& control, const v1::ScheduleRecordRequest& request,
                              v1::ScheduleRecord* response) override {
    return RunScheduleRecordJob(environment_, control, request, response);
  }

 private:
  JobEnvironment environment_;
};

}  // namespace kiln::service
