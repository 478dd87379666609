// CompileBudget: charges refused past the limit (nothing reserved then),
// releases, the peak, steps summed across runs, cancellation.
#include "engine/support/compile_budget.h"

#include <gtest/gtest.h>

#include <limits>

namespace kiln {
namespace {

TEST(CompileBudgetTest, ChargesUpToTheLimitAndNamesWhatWasRefused) {
  CompileBudget budget(CompileLimits{1000, 100});
  EXPECT_TRUE(budget.Charge(600, "first").ok());
  absl::Status refused = budget.Charge(500, "ONNX node 'fill'");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "ONNX node 'fill' needs 500 bytes, over the compile's memory budget of 1000 bytes "
            "(600 already in use; raise it with --max-compile-bytes)");
  EXPECT_EQ(budget.live_bytes(), 600);  // a refused charge reserves nothing
  EXPECT_TRUE(budget.Charge(400, "exactly the rest").ok());
  budget.Release(900);
  EXPECT_EQ(budget.live_bytes(), 100);
  EXPECT_EQ(budget.peak_bytes(), 1000);
}

TEST(CompileBudgetTest, OverflowedSizesAreRefused) {
  CompileBudget budget(CompileLimits{1000, 100});
  EXPECT_FALSE(budget.Charge(-1, "a size that overflowed").ok());
  EXPECT_FALSE(budget.Charge(std::numeric_limits<int64_t>::max(), "huge").ok());
  EXPECT_EQ(budget.live_bytes(), 0);
}

TEST(CompileBudgetTest, StepsAddUpAcrossCharges) {
  CompileBudget budget(CompileLimits{1000, 100});
  EXPECT_TRUE(budget.ChargeSteps(60).ok());
  EXPECT_TRUE(budget.ChargeSteps(40).ok());
  EXPECT_EQ(budget.ChargeSteps(1).code(), absl::StatusCode::kResourceExhausted);
}

TEST(CompileBudgetTest, CancellationIsPolledEachTime) {
  bool cancelled = false;
  CompileBudget budget(CompileLimits{}, [&] { return cancelled; });
  EXPECT_TRUE(budget.CheckCancelled("before pass X").ok());
  cancelled = true;
  absl::Status status = budget.CheckCancelled("before pass X");
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(status.message(), "the compile was cancelled before pass X");
  EXPECT_FALSE(CompileBudget().cancelled());
}

}  // namespace
}  // namespace kiln
