// Random operators (random_values.h): values drawn at compile time from NumPy's legacy stream
// for the node's seed. The oracle is NumPy itself: numpy.random.seed(0) then random_sample(6)
// gives 0.5488135, 0.71518937, 0.60276338, 0.54488318, 0.4236548, 0.64589411, and
// standard_normal(3) after seed(0) gives 1.76405235, 0.40015721, 0.97873798 (NumPy's output,
// printed to 8 digits).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/frontend/onnx/random_values.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;
using ::testing::Pointwise;

const std::vector<double> kUniformSeed0 = {0.5488135,  0.71518937, 0.60276338,
                                           0.54488318, 0.4236548,  0.64589411};

TEST(RandomOpsTest, TheStreamIsNumpysLegacyGenerator) {
  onnx_frontend::NumpyLegacyRandom uniform(0);
  for (double expected : kUniformSeed0) EXPECT_NEAR(uniform.Uniform(), expected, 1e-8);
  onnx_frontend::NumpyLegacyRandom normal(0);
  for (double expected : {1.76405235, 0.40015721, 0.97873798}) {
    EXPECT_NEAR(normal.Gauss(), expected, 1e-8);
  }
}

std::string RandomModel(const std::string& op, bool seeded, int nodes = 1) {
  OnnxModelBuilder b(13);
  for (int k = 0; k < nodes; ++k) {
    std::string out = "y" + std::to_string(k);
    b.Output(out);
    onnx::NodeProto& node = b.Node(op, {}, {out}, "random" + std::to_string(k));
    OnnxModelBuilder::IntsAttr(node, "shape", {2, 3});
    if (seeded) OnnxModelBuilder::FloatAttr(node, "seed", 0);
    if (op == "RandomNormal") {
      OnnxModelBuilder::FloatAttr(node, "mean", 1);
      OnnxModelBuilder::FloatAttr(node, "scale", 2);
    }
  }
  return b.Bytes();
}

TEST(RandomOpsTest, ASeededOperatorGivesNumpysValues) {
  EXPECT_THAT(RunAll(RandomModel("RandomUniform", true), {})[0],
              Pointwise(DoubleNear(1e-7), kUniformSeed0));
  // mean 1, scale 2: the first three of 1 + 2 g.
  std::vector<double> normal = RunAll(RandomModel("RandomNormal", true), {})[0];
  ASSERT_EQ(normal.size(), 6u);
  EXPECT_NEAR(normal[0], 1 + 2 * 1.76405235, 1e-6);
  EXPECT_NEAR(normal[1], 1 + 2 * 0.40015721, 1e-6);
  EXPECT_NEAR(normal[2], 1 + 2 * 0.97873798, 1e-6);
}

TEST(RandomOpsTest, UnseededNodesDrawDifferentValuesAndCompileTheSameEveryTime) {
  std::vector<std::vector<double>> first = RunAll(RandomModel("RandomUniform", false, 2), {});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_NE(first[0], first[1]);
  for (const std::vector<double>& values : first) {
    for (double v : values) {
      EXPECT_GE(v, 0);
      EXPECT_LT(v, 1);
    }
  }
  EXPECT_EQ(RunAll(RandomModel("RandomUniform", false, 2), {}), first);
}

// Dropout in training mode, seed 0, on ones [2, 3]: the draws above; ratio 0.5 keeps the ones
// at least 0.5 (all but the fifth, 0.42) and scales them by 2.
std::string DropoutModel() {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3})
      .Input("ratio", {})
      .Input("training", {}, onnx::TensorProto::BOOL)
      .Output("y")
      .Output("mask");
  onnx::NodeProto& node = b.Node("Dropout", {"x", "ratio", "training"}, {"y", "mask"}, "drop");
  OnnxModelBuilder::IntAttr(node, "seed", 0);
  return b.Bytes();
}

std::vector<loop::HostTensor> DropoutInputs(double ratio, bool training) {
  return {loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 3}, {1, 1, 1, 1, 1, 1}),
          loop::HostTensor::FromDoubles(DataType::kFloat32, {}, {ratio}),
          loop::HostTensor::FromDoubles(DataType::kBool, {}, {training ? 1.0 : 0.0})};
}

TEST(RandomOpsTest, TrainingDropoutKeepsTheDrawsAboveTheRatioAndScalesThem) {
  std::vector<std::vector<double>> out = RunAll(DropoutModel(), DropoutInputs(0.5, true));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAreArray({2, 2, 2, 2, 0, 2}));
  EXPECT_THAT(out[1], ElementsAreArray({1, 1, 1, 1, 0, 1}));
  // 0.6: the first (0.55), fourth (0.54) and fifth fall too; 1 / 0.4 = 2.5.
  out = RunAll(DropoutModel(), DropoutInputs(0.6, true));
  EXPECT_THAT(out[0], Pointwise(DoubleNear(1e-6), std::vector<double>{0, 2.5, 2.5, 0, 0, 2.5}));
  // Not training: the input, all kept, whatever the ratio.
  out = RunAll(DropoutModel(), DropoutInputs(1.5, false));
  EXPECT_THAT(out[0], ElementsAreArray({1, 1, 1, 1, 1, 1}));
  EXPECT_THAT(out[1], ElementsAreArray({1, 1, 1, 1, 1, 1}));
  std::vector<absl::Status> failures = RunFailures(DropoutModel(), DropoutInputs(1.0, true));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), HasSubstr("input 1 (ratio) must lie in [0, 1)"));
}

}  // namespace
}  // namespace kiln::driver
