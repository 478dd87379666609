#include "service/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace kiln::service {
namespace {

// Frames on the socket: u32 length (of kind and payload), u8 kind, payload.
// kilnd -> worker: 'C' Compile, 'T' TracePass, 'S' GetScheduleRecord, with
//   i64 milliseconds left, then the serialized request.
// worker -> kilnd: 'E' a PassEvent (TracePass), then 'D' done: i32 status
//   code, message, compile id, model name (each u32 length + bytes), then
//   the serialized response.
// Above the largest request kilnd accepts (--max-request-bytes < 2 GiB).
constexpr uint32_t kMaxFrameBytes = uint32_t{3} << 30;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    // MSG_NOSIGNAL: a peer that died is an error here, not a SIGPIPE.
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void PutU32(std::string* out, uint32_t value) { out->append(reinterpret_cast<char*>(&value), 4); }
void PutI64(std::string* out, int64_t value) { out->append(reinterpret_cast<char*>(&value), 8); }
void PutString(std::string* out, const std::string& value) {
  PutU32(out, static_cast<uint32_t>(value.size()));
  out->append(value);
}

template <typename T>
bool Take(std::string_view* in, T* value) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(value, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}
bool TakeString(std::string_view* in, std::string* value) {
  uint32_t size = 0;
  if (!Take(in, &size) || in->size() < size) return false;
  value->assign(in->data(), size);
  in->remove_prefix(size);
  return true;
}

bool WriteFrame(int fd, char kind, const std::string& payload) {
  if (payload.size() + 1 > kMaxFrameBytes) return false;
  std::string header;
  PutU32(&header, static_cast<uint32_t>(payload.size() + 1));
  header.push_back(kind);
  return WriteAll(fd, header.data(), header.size()) &&
         WriteAll(fd, payload.data(), payload.size());
}

bool ReadFrame(int fd, char* kind, std::string* payload) {
  uint32_t size = 0;
  if (!ReadAll(fd, reinterpret_cast<char*>(&size), 4) || size == 0 || size > kMaxFrameBytes) {
    return false;
  }
  if (!ReadAll(fd, kind, 1)) return false;
  payload->resize(size - 1);
  return ReadAll(fd, payload->data(), payload->size());
}

// In the worker: the job's call is far away; only its deadline is known.
class DeadlineControl final : public JobControl {
 public:
  explicit DeadlineControl(int64_t milliseconds_left)
      : deadline_(std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(milliseconds_left)) {}
  bool ShouldStop() const override { return PastDeadline(); }
  bool PastDeadline() const override { return std::chrono::steady_clock::now() >= deadline_; }
  int64_t MillisecondsLeft() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               deadline_ - std::chrono::steady_clock::now())
        .count();
  }
  void Describe(std::string compile_id, std::string model_name) override {
    compile_id_ = std::move(compile_id);
    model_name_ = std::move(model_name);
  }
  std::string compile_id_;
  std::string model_name_;

 private:
  std::chrono::steady_clock::time_point deadline_;
};

// In the worker: events go straight to kilnd, which relays them (and waits
// for a slow reader, which makes this write wait: backpressure end to end).
class SocketSink final : public EventSink {
 public:
  explicit SocketSink(int fd) : fd_(fd) {}
  bool Push(v1::PassEvent event) override {
    if (gone_) return false;
    gone_ = !WriteFrame(fd_, 'E', event.SerializeAsString());
    return !gone_;
  }
  bool reader_gone() const override { return gone_; }

 private:
  int fd_;
  bool gone_ = false;
};

// The worker may use the CPU for the job's time left, and a little more:
// one that never polls its deadline is ended by SIGXCPU.
void LimitCpuTime(int64_t milliseconds_left) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  rlimit limit{};
  getrlimit(RLIMIT_CPU, &limit);
  rlim_t used = static_cast<rlim_t>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec);
  rlim_t soft = used + static_cast<rlim_t>(std::max<int64_t>(milliseconds_left, 0) / 1000 + 10);
  if (limit.rlim_max != RLIM_INFINITY && soft > limit.rlim_max) soft = limit.rlim_max;
  limit.rlim_cur = soft;
  setrlimit(RLIMIT_CPU, &limit);
}

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
                        ")");
  }
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

ProcessIsolatedJobRunner::ProcessIsolatedJobRunner(std::vector<std::string> kilnd_argv,
                                                   int workers, Metrics* metrics)
    : kilnd_argv_(std::move(kilnd_argv)), workers_(workers), metrics_(metrics) {}

ProcessIsolatedJobRunner::~ProcessIsolatedJobRunner() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Worker& worker : idle_) Kill(worker);
  idle_.clear();
}

absl::Status ProcessIsolatedJobRunner::Start() {
  for (int i = 0; i < workers_; ++i) {
    absl::StatusOr<Worker> worker = Spawn();
    if (!worker.ok()) return worker.status();
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(*worker);
  }
  return absl::OkStatus();
}

absl::StatusOr<ProcessIsolatedJobRunner::Worker> ProcessIsolatedJobRunner::Spawn() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  // Above 3, so that the dup2 to 3 below always clears close-on-exec.
  int child_end = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
  close(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, 3);
  std::vector<std::string> args(kilnd_argv_.begin(), kilnd_argv_.end());
  args.push_back("--internal-worker-fd=3");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  // /proc/self/exe: this very binary, even if the file was replaced since.
  int error = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(child_end);
  if (error != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("cannot start a worker process: ", strerror(error)));
  }
  return Worker{pid, fds[0]};
}

absl::StatusOr<ProcessIsolatedJobRunner::Worker> ProcessIsolatedJobRunner::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!idle_.empty()) {
      Worker worker = idle_.back();
      idle_.pop_back();
      // One that died while idle (killed by hand, by the OOM killer) is
      // replaced now, not found out by the job.
      int status = 0;
      if (waitpid(worker.pid, &status, WNOHANG) == 0) return worker;
      close(worker.fd);
      ++missing_;
    }
    if (missing_ == 0) return absl::InternalError("no worker process is idle");
    --missing_;
  }
  absl::StatusOr<Worker> worker = Spawn();
  if (!worker.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++missing_;
  }
  return worker;
}

void ProcessIsolatedJobRunner::Release(Worker worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(worker);
}

std::string ProcessIsolatedJobRunner::Kill(Worker worker) {
  int status = 0;
  if (waitpid(worker.pid, &status, WNOHANG) == 0) {
    kill(worker.pid, SIGKILL);
    waitpid(worker.pid, &status, 0);
  }
  close(worker.fd);
  return DescribeExit(status);
}

grpc::Status ProcessIsolatedJobRunner::Run(JobControl& control, char kind,
                                           const google::protobuf::Message& request,
                                           google::protobuf::Message* response,
                                           EventSink* sink) {
  auto start = std::chrono::steady_clock::now();
  auto stopped = [&] {
    return control.PastDeadline()
               ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                              "the deadline expired during the compile")
               : grpc::Status(grpc::StatusCode::CANCELLED,
                              "the call was cancelled during the compile");
  };
  // A job whose call ended while it waited in the queue costs no worker.
  if (control.ShouldStop() || (sink != nullptr && sink->reader_gone())) return stopped();
  absl::StatusOr<Worker> acquired = Acquire();
  if (!acquired.ok()) {
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string(acquired.status().message()));
  }
  Worker worker = *acquired;
  auto lost = [&](const std::string& why) {
    std::string exit = Kill(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++missing_;
    }
    return absl::StrCat(why, ": the worker process ", exit);
  };
  auto finish = [&](grpc::Status status) {
    metrics_->ObserveCompile(status.error_code(),
                             std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                           start).count());
    return status;
  };
  std::string payload;
  PutI64(&payload, control.MillisecondsLeft());
  payload += request.SerializeAsString();
  if (!WriteFrame(worker.fd, kind, payload)) {
    return finish(grpc::Status(grpc::StatusCode::INTERNAL, lost("the compile could not start")));
  }
  while (true) {
    pollfd ready{worker.fd, POLLIN, 0};
    int polled = poll(&ready, 1, 100);
    if (control.ShouldStop() || (sink != nullptr && sink->reader_gone())) {
      // The worker may be anywhere in the compile: it is ended, not asked.
      lost("stopped");
      return finish(stopped());
    }
    if (polled <= 0) continue;
    char frame_kind = 0;
    std::string frame;
    if (!ReadFrame(worker.fd, &frame_kind, &frame)) {
      return finish(grpc::Status(
          grpc::StatusCode::INTERNAL,
          lost("the compile crashed (kilnd is unaffected; please report the model)")));
    }
    if (frame_kind == 'E') {
      v1::PassEvent event;
      if (sink != nullptr && event.ParseFromString(frame)) sink->Push(std::move(event));
      continue;
    }
    std::string_view in(frame);
    int32_t code = 0;
    std::string message, compile_id, model_name;
    if (frame_kind != 'D' || !Take(&in, &code) || !TakeString(&in, &message) ||
        !TakeString(&in, &compile_id) || !TakeString(&in, &model_name) ||
        (response != nullptr && !response->ParseFromArray(in.data(), static_cast<int>(in.size())))) {
      return finish(grpc::Status(grpc::StatusCode::INTERNAL,
                                 lost("the worker process answered garbage")));
    }
    Release(worker);
    control.Describe(std::move(compile_id), std::move(model_name));
    return finish(grpc::Status(static_cast<grpc::StatusCode>(code), message));
  }
}

grpc::Status ProcessIsolatedJobRunner::Compile(JobControl& control,
                                               const v1::CompileRequest& request,
                                               v1::CompileResponse* response) {
  return Run(control, 'C', request, response, nullptr);
}

grpc::Status ProcessIsolatedJobRunner::Trace(JobControl& control, const v1::TraceRequest& request,
                                             EventSink& sink) {
  return Run(control, 'T', request, nullptr, &sink);
}

grpc::Status ProcessIsolatedJobRunner::ScheduleRecord(JobControl& control,
                                                      const v1::ScheduleRecordRequest& request,
                                                      v1::ScheduleRecord* response) {
  return Run(control, 'S', request, response, nullptr);
}

int ServeWorkerProcess(int fd, const JobEnvironment& environment) {
  while (true) {
    char kind = 0;
    std::string frame;
    if (!ReadFrame(fd, &kind, &frame)) return 0;  // kilnd closed the socket: done
    std::string_view in(frame);
    int64_t milliseconds_left = 0;
    if (!Take(&in, &milliseconds_left)) return 1;
    LimitCpuTime(milliseconds_left);
    DeadlineControl control(milliseconds_left);
    grpc::Status status;
    std::string response;
    auto parse = [&](google::protobuf::Message* request) {
      return request->ParseFromArray(in.data(), static_cast<int>(in.size()));
    };
    if (kind == 'C') {
      v1::CompileRequest request;
      v1::CompileResponse out;
      status = parse(&request) ? RunCompileJob(environment, control, request, &out)
                               : grpc::Status(grpc::StatusCode::INTERNAL, "bad job");
      out.SerializeToString(&response);
    } else if (kind == 'T') {
      v1::TraceRequest request;
      SocketSink sink(fd);
      status = parse(&request) ? RunTraceJob(environment, control, request, sink)
                               : grpc::Status(grpc::StatusCode::INTERNAL, "bad job");
    } else if (kind == 'S') {
      v1::ScheduleRecordRequest request;
      v1::ScheduleRecord out;
      status = parse(&request) ? RunScheduleRecordJob(environment, control, request, &out)
                               : grpc::Status(grpc::StatusCode::INTERNAL, "bad job");
      out.SerializeToString(&response);
    } else {
      return 1;
    }
    std::string done;
    PutU32(&done, static_cast<uint32_t>(status.error_code()));
    PutString(&done, status.error_message());
    PutString(&done, control.compile_id_);
    PutString(&done, control.model_name_);
    done += response;
    if (!WriteFrame(fd, 'D', done)) return 0;
  }
}

}  // namespace kiln::service
