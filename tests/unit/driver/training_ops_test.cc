// Training-mode BatchNormalization (nn_converters.cc): normalized by the batch's own mean and
// population variance, the running statistics moved toward them by 1 - momentum. One channel
// over a batch of 2 x 2 values, worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;

TEST(TrainingOpsTest, BatchNormInTrainingModeUsesAndUpdatesBatchStatistics) {
  OnnxModelBuilder b(15);
  b.Input("x", {2, 1, 2}).Output("y").Output("running_mean").Output("running_var");
  b.FloatInitializer("scale", {1}, {2.0f});
  b.FloatInitializer("bias", {1}, {0.5f});
  b.FloatInitializer("mean", {1}, {10.0f});
  b.FloatInitializer("var", {1}, {4.0f});
  onnx::NodeProto& node = b.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                                 {"y", "running_mean", "running_var"}, "bn");
  OnnxModelBuilder::IntAttr(node, "training_mode", 1);
  OnnxModelBuilder::FloatAttr(node, "momentum", 0.75f);
  OnnxModelBuilder::FloatAttr(node, "epsilon", 0.0f);
  auto out = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 1, 2},
                                                               {1, 3, 5, 7})});
  ASSERT_EQ(out.size(), 3u);
  // Batch mean 4, population variance (9 + 1 + 1 + 9) / 4 = 5.
  const double sd = std::sqrt(5.0);
  std::vector<double> y;
  for (double v : {1.0, 3.0, 5.0, 7.0}) y.push_back((v - 4) / sd * 2 + 0.5);
  EXPECT_THAT(out[0], ::testing::Pointwise(::testing::DoubleNear(1e-5), y));
  EXPECT_THAT(out[1], ::testing::ElementsAre(::testing::DoubleNear(10 * 0.75 + 4 * 0.25, 1e-5)));
  EXPECT_THAT(out[2], ::testing::ElementsAre(::testing::DoubleNear(4 * 0.75 + 5 * 0.25, 1e-5)));
}

}  // namespace
}  // namespace kiln::driver
