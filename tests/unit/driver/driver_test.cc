// The driver as every consumer uses it: the options kiln-opt and the service
// pass (no graph passes, a loop pipeline or none, the config's instruments,
// debugging instruments and their report on failure), schedule records by
// selector, and running what was compiled. Expected values are computed by
// hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "engine/driver/schedule_records.h"
#include "engine/printer/printer.h"

namespace kiln::driver {
namespace {

using ::testing::HasSubstr;

// relu(x * 2 + (1 + 2)): the constant subexpression folds to 3.
constexpr char kScaleShift[] = R"(
def @main(%x: Tensor[(4), float32] /* si=input */) {
  %0 = multiply(%x, 2f /* si=two */) /* si=scale */;
  %1 = add(1f /* si=one */, 2f /* si=two_more */) /* si=three */;
  %2 = add(%0, %1) /* si=shift */;
  nn.relu(%2) /* si=relu */
}
)";

std::string Print(const IRModule& module) { return PrintModule(module); }

TEST(DriverTest, WithoutGraphPassesTheModuleIsTheParsedOne) {
  CompileOptions options;
  options.run_graph_passes = false;
  options.lower = false;
  absl::StatusOr<CompileResult> result = CompileGraphText(kScaleShift, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->optimized.same_as(result->imported));
  EXPECT_THAT(Print(result->optimized), HasSubstr("add(1f"));
}

TEST(DriverTest, TheConfigsBisectionStopsBeforeFolding) {
  CompileOptions options;
  options.pipeline = "InferType,FoldConstant";
  options.lower = false;
  absl::StatusOr<CompileResult> folded = CompileGraphText(kScaleShift, options);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_THAT(Print(folded->optimized), HasSubstr("add(%0, 3f"));

  // pass.max_pass_index=1: InferType runs, FoldConstant (the second) does not.
  options.config = {"pass.max_pass_index=1"};
  std::ostringstream log;
  options.debug.out = &log;
  absl::StatusOr<CompileResult> bisected = CompileGraphText(kScaleShift, options);
  ASSERT_TRUE(bisected.ok()) << bisected.status();
  EXPECT_THAT(Print(bisected->optimized), HasSubstr("add(1f"));
  EXPECT_THAT(log.str(), HasSubstr("FoldConstant"));
}

TEST(DriverTest, VerifyEachWithTypesRunsThroughTheDriver) {
  CompileOptions options;
  options.opt_level = 3;
  options.config = {"pass.verify_each=true", "pass.verify_types=true",
                    "pass.span_coverage=report"};
  options.debug.time_passes = TimePasses::kList;
  absl::StatusOr<CompileResult> result = CompileGraphText(kScaleShift, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->report.timing, HasSubstr("FuseOps"));
  EXPECT_THAT(result->report.span_coverage, HasSubstr("FuseOps"));
}

TEST(DriverTest, EachStageNamesItsFailure) {
  CompileOptions options;
  options.config = {"pass.no_such_option=1"};
  CompileFailure failure;
  EXPECT_FALSE(CompileGraphText(kScaleShift, options, &failure).ok());
  EXPECT_EQ(failure.stage, CompileStage::kConfigure);
  EXPECT_THAT(std::string(failure.status.message()), HasSubstr("pass.no_such_option"));

  options.config.clear();
  options.loop_pipeline = "NoSuchLoopPass";
  EXPECT_FALSE(CompileGraphText(kScaleShift, options, &failure).ok());
  EXPECT_EQ(failure.stage, CompileStage::kLoopPasses);
  EXPECT_THAT(std::string(failure.status.message()), HasSubstr("loop pipeline: "));

  options.loop_pipeline.reset();
  options.pipeline = "InferType";
  EXPECT_FALSE(CompileGraphText("def @main(%x: Tensor[(2), float32]) { add(%x, %x, %x) }",
                                options, &failure)
                   .ok());
  EXPECT_EQ(failure.stage, CompileStage::kGraphPasses);
}

TEST(DriverTest, AFailedPassLeavesAReproducerInTheReport) {
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_driver_test_reproducer";
  std::filesystem::remove_all(dir);
  CompileOptions options;
  options.pipeline = "InferType";
  options.debug.reproducer_dir = dir.string();
  CompileFailure failure;
  EXPECT_FALSE(CompileGraphText(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) {
  add(%x, %y) /* si=bad_add */
}
)",
                                options, &failure)
                   .ok());
  ASSERT_EQ(failure.report.reproducers.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(failure.report.reproducers[0]));
  std::filesystem::remove_all(dir);
}

TEST(DriverTest, RunsWhatItCompiled) {
  CompileOptions options;
  absl::StatusOr<CompileResult> result = CompileGraphText(kScaleShift, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ModelTensors tensors = MakeModelTensors(*result);
  ASSERT_EQ(tensors.inputs.size(), 1u);
  ASSERT_EQ(tensors.outputs.size(), 1u);
  // relu(2x + 3) at x = -4, -1, 0, 2: 0, 1, 3, 7.
  tensors.inputs[0] = loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {-4, -1, 0, 2});
  absl::Status ran = RunModel(*result, {&tensors.inputs[0]}, {&tensors.outputs[0]});
  ASSERT_TRUE(ran.ok()) << ran;
  EXPECT_EQ(tensors.outputs[0].ToDoubles(), (std::vector<double>{0, 1, 3, 7}));

  loop::HostTensor wrong = loop::HostTensor::Zeros(DataType::kFloat32, {5});
  EXPECT_THAT(std::string(RunModel(*result, {&wrong}, {&tensors.outputs[0]}).message()),
              HasSubstr("expects float32[4]"));
}

constexpr char kConvRelu[] = R"(
def @main(%x: Tensor[(1, 2, 6, 6), float32] /* si=input */, %w: Tensor[(8, 2, 3, 3), float32] /* si=conv.weight */) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* si=conv */;
  nn.relu(%0) /* si=relu */
}
)";

// ResNet's stem: a 7x7 stride-2 convolution over a 224x224 image (118M multiply-adds), beyond
// the interpreter's step budget. Verification runs every step as native code instead, so each
// step of its record is checked.
constexpr char kResNetStem[] = R"(
def @main(%x: Tensor[(1, 3, 224, 224), float32] /* si=input */, %w: Tensor[(64, 3, 7, 7), float32] /* si=conv1.weight */) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3]) /* si=conv1 */;
  nn.relu(%0) /* si=relu */
}
)";

TEST(DriverTest, ScheduleRecordsOfLargeKernelsAreVerifiedAsNativeCode) {
  CompileOptions options;
  options.only_kernels_named_by = "conv1";
  absl::StatusOr<CompileResult> result = CompileGraphText(kResNetStem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ScheduleRecordOptions record_options;
  record_options.verify = true;
  absl::StatusOr<std::vector<KernelScheduleRecord>> records =
      ScheduleRecords(*result->lowered, "conv1", record_options);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  ASSERT_GT((*records)[0].steps.size(), 3u);
  for (const lower::ScheduleRecordStep& step : (*records)[0].steps) {
    EXPECT_TRUE(step.checked);
    EXPECT_TRUE(step.verified) << "step " << step.step << ": " << step.primitive;
  }
  // The interpreter cannot: its step budget ends the vanilla step.
  record_options.verify_natively = false;
  absl::StatusOr<std::vector<KernelScheduleRecord>> interpreted =
      ScheduleRecords(*result->lowered, "conv1", record_options);
  ASSERT_FALSE(interpreted.ok());
  EXPECT_THAT(std::string(interpreted.status().message()), HasSubstr("vanilla"));
}

TEST(DriverTest, ScheduleRecordsByLayerName) {
  CompileOptions options;
  options.only_kernels_named_by = "relu";
  absl::StatusOr<CompileResult> result = CompileGraphText(kConvRelu, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ScheduleRecordOptions record_options;
  record_options.verify = true;
  absl::StatusOr<std::vector<KernelScheduleRecord>> records =
      ScheduleRecords(*result->lowered, "relu", record_options);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  ASSERT_FALSE((*records)[0].steps.empty());
  EXPECT_EQ((*records)[0].steps[0].primitive, "vanilla");
  for (const lower::ScheduleRecordStep& step : (*records)[0].steps) EXPECT_TRUE(step.verified);
  EXPECT_THAT(RenderScheduleRecord((*records)[0], /*json=*/false), HasSubstr("step 0: vanilla"));

  EXPECT_EQ(ScheduleRecords(*result->lowered, "no_such_layer").status().code(),
            absl::StatusCode::kNotFound);
  // The parameters: 1*2*6*6 + 8*2*3*3 floats = 864 bytes.
  record_options.max_verify_bytes = 863;
  EXPECT_EQ(ScheduleRecords(*result->lowered, "relu", record_options).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace kiln::driver
