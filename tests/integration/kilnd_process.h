// A real kilnd for integration tests: started as a child process on
// loopback port 0 with the given flags, its ports read from the line it
// prints once serving, stopped with SIGTERM (its exit status checked).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"

namespace kiln::testing {

class KilndProcess {
 public:
  // Starts kilnd with `flags` (plus --listen and --metrics-listen on port 0
  // unless given). Fails the test (and returns null) when it does not serve.
  // With `address_space_bytes` > 0 the child runs under that RLIMIT_AS, as
  // in a container with a memory limit: an allocation past it fails in kilnd
  // instead of exhausting the machine.
  static std::unique_ptr<KilndProcess> Start(std::vector<std::string> flags = {},
                                             int64_t address_space_bytes = 0);
  ~KilndProcess();  // SIGKILL if still running

  const std::string& address() const { return address_; }          // "127.0.0.1:PORT"
  const std::string& metrics_address() const { return metrics_; }  // "127.0.0.1:PORT"
  pid_t pid() const { return pid_; }
  // The most resident memory kilnd has had so far (VmHWM), in bytes.
  int64_t PeakRssBytes() const;
  // kilnd's child processes (its workers under --isolate=process).
  std::vector<pid_t> Children() const;
  // Whether the process is still running (not exited, not killed).
  bool Running() const;

  // An insecure channel with 512 MiB messages.
  std::shared_ptr<grpc::Channel> Channel() const;

  // SIGTERM, then waits; the exit status (-1 when killed by a signal or it
  // did not exit within `timeout_seconds`).
  int Stop(int timeout_seconds = 30);

  // Everything kilnd wrote to stderr so far (its request log).
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::string address_;
  std::string metrics_;
  std::string log_path_;
};

// Runs kilnd with `flags` expecting it to refuse to start: its exit status
// (-1 when it did not exit within 30 s, it is then killed) and what it wrote
// to stdout and stderr.
struct KilndExit {
  int status = -1;
  std::string stderr_text;
};
KilndExit RunKilndUntilExit(std::vector<std::string> flags);

// What `command` (run by /bin/sh) writes to stdout.
std::string CommandOutput(const std::string& command);

// GET http://`address``path` over plain HTTP/1.0; the body ("" on failure).
std::string HttpGet(const std::string& address, const std::string& path);

// The value of the first sample of `series` (exact name with labels, e.g.
// `kiln_workers_busy`) in a Prometheus text exposition; -1 when absent.
double MetricValue(const std::string& exposition, const std::string& series);

}  // namespace kiln::testing
