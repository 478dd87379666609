// PassTiming: a nested profile of pass execution (the seed's
// PassTimingInstrument), rendered as a tree (execution order, children under
// their Sequential) or as a list (one line per pass name, totals, slowest
// first). The clock is injectable so tests get exact, reproducible reports.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/pass/instrument.h"

namespace kiln {

class PassTiming final : public PassInstrument {
 public:
  using Clock = std::function<std::chrono::nanoseconds()>;

  // One run of one pass.
  struct Record {
    std::string pass;
    bool is_sequential = false;
    bool failed = false;
    std::chrono::nanoseconds duration{0};
    std::vector<Record> children;
  };

  // `clock` defaults to std::chrono::steady_clock.
  explicit PassTiming(Clock clock = nullptr);

  // Entering a context starts a new profile.
  absl::Status EnterPassContext() override;
  absl::Status RunBeforePass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPassFailed(const IRModule& module_before, const PassInvocation& pass,
                                  const absl::Status& error) override;

  // The passes run at the outermost level, in order, each with its children.
  const std::vector<Record>& roots() const { return roots_; }

  // Header, total, then one line per run, indented by nesting:
  //   "   12.345 ms ( 50.0%)    InferType".
  std::string RenderTree() const;
  // One line per pass name (Sequential containers left out: their time is
  // their children's), with the total time and the number of runs, slowest
  // first and ties in order of first run.
  std::string RenderList() const;

 private:
  // Closes the run at `depth` (and any left open inside it).
  void Finish(size_t depth, bool failed);

  Clock clock_;
  std::vector<Record> roots_;
  // The records of the passes running now, outermost first, with start times.
  std::vector<std::pair<Record, std::chrono::nanoseconds>> running_;
};

}  // namespace kiln
