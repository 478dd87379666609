// Kernel precision: each kernel of a compile runs isolated on exact inputs, so a kernel's figure
// is its own loss. Exact operations (relu, negation) lose nothing even downstream of an
// approximate one; the approximate sigmoid (docs/native-code.md: a few ulp) loses a little;
// a model too large for the interpreter is compared only with fast-math, against native code
// without it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/driver/numeric_drift.h"
#include "engine/driver/run_model.h"

namespace kiln::driver {
namespace {

// Every op its own kernel (the pipeline fuses nothing; the two relus share one): sigmoid is
// approximated in native code; relu and negative are exact in any IEEE arithmetic.
constexpr char kModel[] = R"(
def @main(%x: Tensor[(1, 8, 16, 16), float32] /* si=input */) {
  %0 = nn.relu(%x) /* si=relu */;
  %1 = sigmoid(%0) /* si=gate */;
  %2 = negative(%1) /* si=flip */;
  %3 = nn.relu(%2) /* si=relu2 */;
  sum(%3, axis=[2, 3]) /* si=pool */
}
)";

CompileOptions Options() {
  CompileOptions options;
  options.pipeline = "InferType";
  options.codegen = HostCodegenOptions();
  return options;
}

const KernelDrift* KernelOf(const KernelPrecisionReport& report, const std::string& layer) {
  for (const KernelDrift& kernel : report.kernels) {
    if (kernel.layers == std::vector<std::string>{layer}) return &kernel;
  }
  return nullptr;
}

TEST(KernelPrecisionTest, EachKernelIsMeasuredOnExactInputs) {
  absl::StatusOr<CompileResult> compiled = CompileGraphText(kModel, Options());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  DriftTracker tracker(0, Options());
  absl::StatusOr<KernelPrecisionReport> report = tracker.KernelPrecision(*compiled);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->reference, "interp");
  EXPECT_EQ(report->kernels.size(), 5u);  // one per call
  EXPECT_EQ(report->kernels_not_compared, 0);

  const KernelDrift* relu = KernelOf(*report, "relu");
  const KernelDrift* gate = KernelOf(*report, "gate");
  const KernelDrift* flip = KernelOf(*report, "flip");
  ASSERT_NE(relu, nullptr);
  ASSERT_NE(gate, nullptr);
  ASSERT_NE(flip, nullptr);
  EXPECT_EQ(relu->max_abs_error, 0);
  // Downstream of the approximate sigmoid, yet exact: it read the reference's sigmoid values.
  EXPECT_EQ(flip->max_abs_error, 0);
  // 1024 sigmoids of values in [0, 1): some differ from the reference, by a few ulp at most.
  EXPECT_GT(gate->max_abs_error, 0);
  EXPECT_LT(gate->max_rel_error, 1e-6);
  EXPECT_NE(gate->kernel, relu->kernel);
  // The second relu's call runs the first's kernel and is reported under its own layer.
  const KernelDrift* relu2 = KernelOf(*report, "relu2");
  ASSERT_NE(relu2, nullptr);
  EXPECT_EQ(relu2->kernel, relu->kernel);
  EXPECT_EQ(relu2->max_abs_error, 0);
}

// A model over the interpreter's step budget has no exact reference but native code without
// fast-math: only fast-math's loss can be measured, and without it there is nothing to compare.
TEST(KernelPrecisionTest, OverTheInterpreterBudgetOnlyFastMathIsCompared) {
  CompileOptions fast = Options();
  fast.codegen->fast_math = true;
  fast.limits.max_interpreter_steps = 100;  // the model needs thousands
  absl::StatusOr<CompileResult> compiled = CompileGraphText(kModel, fast);
  ASSERT_TRUE(compiled.ok()) << compiled.status();

  DriftTracker with_fast_math(0, fast);
  absl::StatusOr<KernelPrecisionReport> report = with_fast_math.KernelPrecision(*compiled);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->reference, "native without fast-math");
  EXPECT_EQ(report->kernels.size(), 5u);  // one per call
  // relu is exact with or without fast-math.
  ASSERT_NE(KernelOf(*report, "relu"), nullptr);
  EXPECT_EQ(KernelOf(*report, "relu")->max_abs_error, 0);

  CompileOptions strict = fast;
  strict.codegen->fast_math = false;
  DriftTracker without(0, strict);
  absl::StatusOr<KernelPrecisionReport> refused = without.KernelPrecision(*compiled);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("fast_math"), std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace kiln::driver
