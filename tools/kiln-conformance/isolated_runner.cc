// fork/pipe/waitpid plumbing of the conformance runner.
#include "tools/kiln-conformance/isolated_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace kiln::conformance {

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;  // read end of the result pipe
  size_t index = 0;
  std::chrono::steady_clock::time_point deadline;
  std::string output;
};

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child's wire format: "<stage name>\n<specialized inputs: 0 or 1>\n<message>".
std::string Encode(const CaseOutcome& outcome) {
  return absl::StrCat(StageName(outcome.stage), "\n", outcome.specialized_inputs ? 1 : 0, "\n",
                      outcome.message);
}

CaseOutcome Decode(const std::string& text) {
  CaseOutcome outcome;
  size_t first = text.find('\n');
  size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
  if (second == std::string::npos || !ParseStageName(text.substr(0, first), &outcome.stage)) {
    return CaseOutcome{Stage::kCrash, "the child exited without reporting a result"};
  }
  outcome.specialized_inputs = text.substr(first + 1, second - first - 1) == "1";
  outcome.message = text.substr(second + 1);
  return outcome;
}

Child Spawn(size_t index, const std::filesystem::path& dir, const IsolationLimits& limits,
            const std::function<CaseOutcome(const std::filesystem::path&)>& run) {
  int fds[2];
  if (pipe(fds) != 0) return Child{};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    rlimit limit{limits.max_address_space_bytes, limits.max_address_space_bytes};
    setrlimit(RLIMIT_AS, &limit);
    CaseOutcome outcome = run(dir);
    WriteAll(fds[1], Encode(outcome));
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  Child child;
  child.pid = pid;
  child.fd = fds[0];
  child.index = index;
  child.deadline = std::chrono::steady_clock::now() + limits.timeout;
  return child;
}

CaseOutcome Reap(Child& child, bool timed_out) {
  if (timed_out) kill(child.pid, SIGKILL);
  int status = 0;
  waitpid(child.pid, &status, 0);
  close(child.fd);
  if (timed_out) return CaseOutcome{Stage::kTimeout, "no result within the time limit"};
  if (WIFSIGNALED(status)) {
    return CaseOutcome{Stage::kCrash,
                       absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                                    strsignal(WTERMSIG(status)), ")")};
  }
  return Decode(child.output);
}

}  // namespace

void RunIsolated(const std::vector<std::filesystem::path>& dirs, const IsolationLimits& limits,
                 const std::function<CaseOutcome(const std::filesystem::path&)>& run,
                 const std::function<void(size_t, const CaseOutcome&)>& report) {
  std::vector<Child> running;
  size_t next = 0;
  while (next < dirs.size() || !running.empty()) {
    while (next < dirs.size() && static_cast<int>(running.size()) < std::max(1, limits.jobs)) {
      Child child = Spawn(next, dirs[next], limits, run);
      if (child.pid < 0) {
        report(next, CaseOutcome{Stage::kCrash, "could not start a child process"});
      } else {
        running.push_back(std::move(child));
      }
      ++next;
    }
    std::vector<pollfd> polls;
    for (const Child& child : running) polls.push_back(pollfd{child.fd, POLLIN, 0});
    poll(polls.data(), polls.size(), 100);
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < running.size();) {
      Child& child = running[i];
      bool finished = false;
      if (polls[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        ssize_t n = read(child.fd, buffer, sizeof(buffer));
        if (n > 0) child.output.append(buffer, static_cast<size_t>(n));
        else finished = true;  // EOF: the child closed its end (exited)
      }
      bool timed_out = !finished && now >= child.deadline;
      if (finished || timed_out) {
        CaseOutcome outcome = Reap(child, timed_out);
        report(child.index, outcome);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        polls.erase(polls.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
}

}  // namespace kiln::conformance
