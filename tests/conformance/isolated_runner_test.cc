// The conformance runner's isolation: a case that crashes or hangs is
// reported as such and the run goes on; results come back with their index.
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <thread>

#include "tools/kiln-conformance/isolated_runner.h"

namespace kiln::conformance {
namespace {

namespace fs = std::filesystem;

TEST(IsolatedRunnerTest, CrashesAndHangsAreCountedAndTheRunContinues) {
  std::vector<fs::path> dirs = {"pass", "crash", "hang", "wrong", "abort"};
  IsolationLimits limits;
  limits.jobs = 2;
  limits.timeout = std::chrono::seconds(2);
  std::map<size_t, CaseOutcome> outcomes;
  RunIsolated(
      dirs, limits,
      [](const fs::path& dir) -> CaseOutcome {
        if (dir == "crash") std::raise(SIGSEGV);
        if (dir == "abort") std::abort();
        if (dir == "hang") std::this_thread::sleep_for(std::chrono::seconds(60));
        if (dir == "wrong") return {Stage::kWrongResult, "element 3 is 1, expected 2"};
        return {Stage::kPassed, ""};
      },
      [&](size_t index, const CaseOutcome& outcome) { outcomes[index] = outcome; });
  ASSERT_EQ(outcomes.size(), dirs.size());
  EXPECT_EQ(outcomes[0].stage, Stage::kPassed);
  EXPECT_EQ(outcomes[1].stage, Stage::kCrash);
  EXPECT_NE(outcomes[1].message.find("signal 11"), std::string::npos) << outcomes[1].message;
  EXPECT_EQ(outcomes[2].stage, Stage::kTimeout);
  EXPECT_EQ(outcomes[3].stage, Stage::kWrongResult);
  EXPECT_EQ(outcomes[3].message, "element 3 is 1, expected 2");
  EXPECT_EQ(outcomes[4].stage, Stage::kCrash);
}

TEST(IsolatedRunnerTest, StageNamesRoundTrip) {
  for (Stage stage : {Stage::kPassed, Stage::kUnsupportedOp, Stage::kImportError,
                      Stage::kCompileError, Stage::kRunError, Stage::kWrongResult, Stage::kCrash,
                      Stage::kTimeout}) {
    Stage parsed;
    ASSERT_TRUE(ParseStageName(StageName(stage), &parsed));
    EXPECT_EQ(parsed, stage);
  }
}

}  // namespace
}  // namespace kiln::conformance
