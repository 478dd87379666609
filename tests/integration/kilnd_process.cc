#include "tests/integration/kilnd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace kiln::testing {
namespace {

// In a forked child: becomes kilnd with `flags`.
[[noreturn]] void ExecKilnd(std::vector<std::string> flags) {
  std::vector<char*> argv;
  std::string binary = KILND_PATH;
  argv.push_back(binary.data());
  for (std::string& flag : flags) argv.push_back(flag.data());
  argv.push_back(nullptr);
  execv(binary.c_str(), argv.data());
  _exit(127);
}

}  // namespace

std::unique_ptr<KilndProcess> KilndProcess::Start(std::vector<std::string> flags,
                                                  int64_t address_space_bytes) {
  auto has = [&](const std::string& prefix) {
    for (const std::string& flag : flags) {
      if (flag.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  if (!has("--listen")) flags.push_back("--listen=127.0.0.1:0");
  if (!has("--metrics-listen")) flags.push_back("--metrics-listen=127.0.0.1:0");
  auto process = std::unique_ptr<KilndProcess>(new KilndProcess());
  char log_template[] = "/tmp/kilnd-test-log-XXXXXX";
  int log_fd = mkstemp(log_template);
  process->log_path_ = log_template;
  int out[2];
  if (pipe(out) != 0 || log_fd < 0) {
    ADD_FAILURE() << "pipe/mkstemp failed";
    return nullptr;
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (address_space_bytes > 0) {
      rlimit limit{static_cast<rlim_t>(address_space_bytes),
                   static_cast<rlim_t>(address_space_bytes)};
      setrlimit(RLIMIT_AS, &limit);
    }
    dup2(out[1], STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(out[0]);
    ExecKilnd(std::move(flags));
  }
  close(out[1]);
  close(log_fd);
  process->pid_ = pid;
  // The one line kilnd prints once serving: "kilnd: grpc=HOST:PORT metrics=HOST:PORT".
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  size_t grpc = line.find("grpc="), metrics = line.find(" metrics=");
  if (grpc == std::string::npos || metrics == std::string::npos) {
    ADD_FAILURE() << "kilnd did not start: '" << line << "'\n" << process->Log();
    return nullptr;
  }
  process->address_ = line.substr(grpc + 5, metrics - grpc - 5);
  process->metrics_ = line.substr(metrics + 9);
  return process;
}

KilndProcess::~KilndProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (!log_path_.empty()) unlink(log_path_.c_str());
}

std::shared_ptr<grpc::Channel> KilndProcess::Channel() const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(512 << 20);
  args.SetMaxSendMessageSize(512 << 20);
  return grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args);
}

int KilndProcess::Stop(int timeout_seconds) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

int64_t KilndProcess::PeakRssBytes() const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return -1;
}

std::vector<pid_t> KilndProcess::Children() const {
  // Each thread lists the children it started itself.
  std::vector<pid_t> children;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid_) + "/task", error)) {
    std::ifstream file(task.path() / "children");
    pid_t child;
    while (file >> child) children.push_back(child);
  }
  return children;
}

bool KilndProcess::Running() const {
  if (pid_ <= 0) return false;
  int status = 0;
  return waitpid(pid_, &status, WNOHANG) == 0;
}

std::string CommandOutput(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  return output;
}

KilndExit RunKilndUntilExit(std::vector<std::string> flags) {
  KilndExit result;
  char log_template[] = "/tmp/kilnd-test-exit-XXXXXX";
  int log_fd = mkstemp(log_template);
  if (log_fd < 0) return result;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(log_fd, STDERR_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    ExecKilnd(std::move(flags));
  }
  close(log_fd);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  } else if (WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  }
  std::ifstream file(log_template);
  std::stringstream text;
  text << file.rdbuf();
  result.stderr_text = text.str();
  unlink(log_template);
  return result;
}

std::string KilndProcess::Log() const {
  std::ifstream file(log_path_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string HttpGet(const std::string& address, const std::string& path) {
  size_t colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) close(fd);
    return "";
  }
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + address + "\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  char buffer[65536];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  close(fd);
  size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

double MetricValue(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::atof(line.c_str() + series.size() + 1);
  }
  return -1;
}

}  // namespace kiln::testing
