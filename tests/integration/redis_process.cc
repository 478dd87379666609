// RedisProcess (see redis_process.h).
#include "tests/integration/redis_process.h"

#include "tests/integration/kilnd_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

namespace kiln::testing {

std::unique_ptr<RedisProcess> RedisProcess::Start() {
  auto redis = std::unique_ptr<RedisProcess>(new RedisProcess());
  char dir_template[] = "/tmp/kiln_redis_XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return nullptr;
  }
  redis->dir_ = dir_template;
  redis->socket_ = redis->dir_ + "/redis.sock";
  std::vector<std::string> args = {"/usr/bin/redis-server", "--port", "0", "--unixsocket",
                                   redis->socket_, "--save", "", "--appendonly", "no",
                                   "--dir", redis->dir_, "--logfile", redis->dir_ + "/redis.log"};
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  redis->pid_ = pid;
  // Started when it answers; a loaded machine may take a while, so the deadline is generous.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(redis->socket_) && redis->Cli("PING").rfind("PONG", 0) == 0) {
      return redis;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "redis-server did not answer PING within 30 s";
  return nullptr;
}

RedisProcess::~RedisProcess() {
  Kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string RedisProcess::Cli(const std::string& arguments) const {
  return CommandOutput("/usr/bin/redis-cli -s '" + socket_ + "' " + arguments + " 2>&1");
}

void RedisProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace kiln::testing
