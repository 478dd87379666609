// Schedule records of lowered kernels as users read them: one entry per
// primitive, each with the loop IR after it, the layers of the stage it acts
// on, and a verification that the step computes what the vanilla one does.
#include "engine/lower/schedule_record.h"

#include <gtest/gtest.h>

#include "engine/lower/lower_options.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"
#include "tests/unit/lower/lower_test_util.h"

namespace kiln {
namespace {

constexpr char kConvRelu[] = R"(
def @main(%x: Tensor[(1, 2, 6, 6), float32] /* si=input */, %w: Tensor[(8, 2, 3, 3), float32] /* si=conv.weight */) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* si=conv */;
  nn.relu(%0) /* si=relu */
}
)";

TEST(ScheduleRecordTest, EveryStepIsVerifiedAndNamesItsLayer) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(kConvRelu);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  const lower::LoweredKernel& kernel = lowered->kernels[0];
  absl::StatusOr<std::vector<lower::ScheduleRecordStep>> steps =
      lower::ExpandScheduleRecord(kernel, /*seed=*/7);
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), kernel.schedule.record().size());
  ASSERT_GT(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].primitive, "vanilla");
  EXPECT_EQ((*steps)[0].spans, (std::vector<std::string>{"conv", "relu"}));
  bool saw_padding = false;
  for (const lower::ScheduleRecordStep& step : *steps) {
    EXPECT_TRUE(step.verified) << "step " << step.step << ": " << step.primitive;
    ASSERT_TRUE(step.loop_ir.defined());
    // The padding stage belongs to the conv layer; it gets its own loop nest (the convolution
    // then reads it without bounds checks), so it is never inlined.
    if (!step.arguments.empty() && step.arguments[0].find("pad") != std::string::npos) {
      saw_padding = true;
      EXPECT_NE(step.primitive, "compute_inline");
      EXPECT_EQ(step.spans, std::vector<std::string>{"conv"});
    }
  }
  EXPECT_TRUE(saw_padding);
  // The last step's loop IR is the kernel as lowered.
  EXPECT_EQ(PrintNode(steps->back().loop_ir), PrintNode(lowered->module->Lookup(kernel.name)));

  std::string json = lower::RenderScheduleRecordJson(kernel, *steps);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), static_cast<long>(steps->size()));
  EXPECT_EQ(json.rfind("{\"kernel\":\"fused_nn_conv2d_nn_relu\",\"step\":0,\"primitive\":\"vanilla\"", 0),
            0u);
}

TEST(ScheduleRecordTest, TheContextOptionTurnsRecordsOff) {
  PassContext context;
  EXPECT_TRUE(lower::LowerOptionsFromContext(context).keep_schedule_record);
  ASSERT_TRUE(context.SetConfig(kConfigKeepScheduleRecord, false).ok());
  lower::LowerOptions options = lower::LowerOptionsFromContext(context);
  EXPECT_FALSE(options.keep_schedule_record);

  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(kConvRelu, 3, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::vector<lower::ScheduleRecordStep>> steps =
      lower::ExpandScheduleRecord(lowered->kernels[0]);
  ASSERT_FALSE(steps.ok());
  EXPECT_EQ(steps.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(steps.status().message(),
            "kernel fused_nn_conv2d_nn_relu has no schedule record (te.keep_schedule_record is "
            "off)");
}

}  // namespace
}  // namespace kiln
