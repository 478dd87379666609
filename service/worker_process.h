// --isolate=process: compile jobs run in worker processes, so that a bug in
// any pass (a crash, a runaway allocation past the process's address-space
// limit, a loop that never polls its deadline) costs one request and never
// kilnd. Each worker is kilnd itself, started with --internal-worker-fd and
// the same flags, one per worker thread; it runs the same job code
// (compile_job.h) behind its own rlimits and answers over a socket. A worker
// that dies is replaced before the next job; a call that is cancelled or
// passes its deadline kills its worker. Compiler Explorer isolates its
// compilers the same way.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "service/job_runner.h"

namespace kiln::service {

class ProcessIsolatedJobRunner final : public JobRunner {
 public:
  // `kilnd_argv`: how kilnd was started (workers get the same flags, plus
  // --internal-worker-fd); `workers`: how many processes (one per worker
  // thread, so a job never waits for one).
  ProcessIsolatedJobRunner(std::vector<std::string> kilnd_argv, int workers, Metrics* metrics);
  ~ProcessIsolatedJobRunner() override;  // kills the workers

  // Starts every worker; an error naming why one could not start.
  absl::Status Start();

  grpc::Status Compile(JobControl& control, const v1::CompileRequest& request,
                       v1::CompileResponse* response) override;
  grpc::Status Trace(JobControl& control, const v1::TraceRequest& request,
                     EventSink& sink) override;
  grpc::Status ScheduleRecord(JobControl& control, const v1::ScheduleRecordRequest& request,
                              v1::ScheduleRecord* response) override;

 private:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
  };

  absl::StatusOr<Worker> Spawn();
  // An idle worker, spawned now if the last one in its place died.
  absl::StatusOr<Worker> Acquire();
  void Release(Worker worker);
  // Ends `worker` (SIGKILL) and reaps it; the signal that ended it, if any.
  std::string Kill(Worker worker);
  // Sends one job and relays its answer: events to `sink` (when given), the
  // final status and `response`.
  grpc::Status Run(JobControl& control, char kind, const google::protobuf::Message& request,
                   google::protobuf::Message* response, EventSink* sink);

  const std::vector<std::string> kilnd_argv_;
  const int workers_;
  Metrics* const metrics_;
  std::mutex mutex_;
  std::vector<Worker> idle_;
  int missing_ = 0;  // workers that died and are started again on demand
};

// The worker's side, in kilnd started with --internal-worker-fd: serves jobs
// from `fd` until kilnd closes it. Returns the process's exit status.
int ServeWorkerProcess(int fd, const JobEnvironment& environment);

}  // namespace kiln::service
