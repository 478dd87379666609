// PassTiming: collects the nested profile and renders it.
#include "engine/pass/pass_timing.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

std::chrono::nanoseconds SteadyNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

double Milliseconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }

std::string Line(std::chrono::nanoseconds duration, std::chrono::nanoseconds total) {
  char buffer[64];
  double percent = total.count() > 0 ? 100.0 * static_cast<double>(duration.count()) /
                                           static_cast<double>(total.count())
                                     : 0.0;
  std::snprintf(buffer, sizeof(buffer), "%12.3f ms (%5.1f%%)  ", Milliseconds(duration), percent);
  return buffer;
}

std::string Header(std::string_view title, std::chrono::nanoseconds total) {
  const std::string rule(78, '=');
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3f ms", Milliseconds(total));
  return absl::StrCat(rule, "\n  ", std::string(title), "\n", rule, "\n  Total: ", buffer, "\n\n");
}

std::chrono::nanoseconds Total(const std::vector<PassTiming::Record>& roots) {
  std::chrono::nanoseconds total{0};
  for (const PassTiming::Record& root : roots) total += root.duration;
  return total;
}

void RenderRecord(const PassTiming::Record& record, int depth, std::chrono::nanoseconds total,
                  std::string* out) {
  absl::StrAppend(out, Line(record.duration, total), std::string(2 * depth, ' '), record.pass,
                  record.failed ? " (failed)" : "", "\n");
  for (const PassTiming::Record& child : record.children) {
    RenderRecord(child, depth + 1, total, out);
  }
}

struct Aggregate {
  std::chrono::nanoseconds duration{0};
  int runs = 0;
  size_t first_run = 0;
};

void Collect(const PassTiming::Record& record, std::map<std::string, Aggregate>* by_name,
             size_t* order) {
  if (!record.is_sequential) {
    auto [it, inserted] = by_name->try_emplace(record.pass);
    if (inserted) it->second.first_run = (*order)++;
    it->second.duration += record.duration;
    ++it->second.runs;
  }
  for (const PassTiming::Record& child : record.children) Collect(child, by_name, order);
}

}  // namespace

PassTiming::PassTiming(Clock clock)
    : PassInstrument("PassTiming"), clock_(clock ? std::move(clock) : Clock(SteadyNow)) {}

absl::Status PassTiming::EnterPassContext() {
  roots_.clear();
  running_.clear();
  return absl::OkStatus();
}

absl::Status PassTiming::RunBeforePass(const IRModule&, const PassInvocation& pass) {
  // A run whose after hook never came (another instrument's RunBeforePass
  // failed) is closed as failed, so nesting follows depth.
  while (running_.size() > static_cast<size_t>(pass.depth)) Finish(running_.size() - 1, true);
  Record record;
  record.pass = pass.name();
  record.is_sequential = pass.pass.is_sequential();
  running_.emplace_back(std::move(record), clock_());
  return absl::OkStatus();
}

void PassTiming::Finish(size_t depth, bool failed) {
  while (running_.size() > depth + 1) Finish(running_.size() - 1, /*failed=*/true);
  if (running_.size() != depth + 1) return;  // never started: another before hook failed
  auto [record, start] = std::move(running_.back());
  running_.pop_back();
  record.duration = clock_() - start;
  record.failed = failed;
  if (running_.empty()) {
    roots_.push_back(std::move(record));
  } else {
    running_.back().first.children.push_back(std::move(record));
  }
}

absl::Status PassTiming::RunAfterPass(const IRModule&, const PassInvocation& pass) {
  Finish(pass.depth, /*failed=*/false);
  return absl::OkStatus();
}

absl::Status PassTiming::RunAfterPassFailed(const IRModule&, const PassInvocation& pass,
                                            const absl::Status&) {
  Finish(pass.depth, /*failed=*/true);
  return absl::OkStatus();
}

std::string PassTiming::RenderTree() const {
  std::chrono::nanoseconds total = Total(roots_);
  std::string out = Header("Pass execution timing report (tree)", total);
  absl::StrAppend(&out, "      Wall time    Share  Pass\n");
  for (const Record& root : roots_) RenderRecord(root, 0, total, &out);
  return out;
}

std::string PassTiming::RenderList() const {
  std::chrono::nanoseconds total = Total(roots_);
  std::map<std::string, Aggregate> by_name;
  size_t order = 0;
  for (const Record& root : roots_) Collect(root, &by_name, &order);
  std::vector<std::pair<std::string, Aggregate>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second.duration != b.second.duration) return a.second.duration > b.second.duration;
    return a.second.first_run < b.second.first_run;
  });
  std::string out = Header("Pass execution timing report (list)", total);
  absl::StrAppend(&out, "      Wall time    Share  Runs  Pass\n");
  for (const auto& [name, aggregate] : rows) {
    char runs[16];
    std::snprintf(runs, sizeof(runs), "%4d  ", aggregate.runs);
    absl::StrAppend(&out, Line(aggregate.duration, total), runs, name, "\n");
  }
  return out;
}

}  // namespace kiln
