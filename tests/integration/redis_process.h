// A real redis-server (Debian's) for integration tests: a child process listening on a unix
// socket in a fresh directory (no TCP port to race for), nothing persisted, killed on
// destruction; redis-cli runs commands against it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace kiln::testing {

class RedisProcess {
 public:
  // Fails the test (and returns null) when it does not answer PING in time.
  static std::unique_ptr<RedisProcess> Start();
  ~RedisProcess();

  // kilnd's --cache-redis value: "unix:<socket>".
  std::string address() const { return "unix:" + socket_; }
  // redis-cli's output for `arguments` (each shell-quoted by the caller).
  std::string Cli(const std::string& arguments) const;
  // SIGKILL, and waits for it.
  void Kill();

 private:
  pid_t pid_ = -1;
  std::string dir_;
  std::string socket_;
};

}  // namespace kiln::testing
