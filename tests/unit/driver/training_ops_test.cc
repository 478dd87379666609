// Training operators. Training-mode BatchNormalization (nn_converters.cc): normalized by the
// batch's own mean and population variance, the running statistics moved toward them by
// 1 - momentum. The optimizers of ai.onnx.preview.training (training_converters.cc): one update
// each, with R and T given at run time. Every expected value is worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

// A model of one optimizer node of the training domain, the only domain it imports: inputs R
// (float scalar), T (int64 scalar), then `tensors` (each of `length` floats), outputs `outputs`.
struct OptimizerModel {
  OnnxModelBuilder builder{1};
  onnx::NodeProto& node() { return *builder.model().mutable_graph()->mutable_node(0); }
};
OptimizerModel Optimizer(const std::string& op, const std::vector<std::string>& tensors,
                         const std::vector<std::string>& outputs, int64_t length) {
  OptimizerModel m;
  m.builder.model().mutable_opset_import(0)->set_domain(kTrainingDomain);
  m.builder.Input("R", {}).Input("T", {}, onnx::TensorProto::INT64);
  std::vector<std::string> inputs = {"R", "T"};
  for (const std::string& t : tensors) {
    m.builder.Input(t, {length});
    inputs.push_back(t);
  }
  for (const std::string& o : outputs) m.builder.Output(o);
  m.builder.Node(op, inputs, outputs, "optimizer").set_domain(kTrainingDomain);
  return m;
}

std::vector<loop::HostTensor> OptimizerInputs(double rate, int64_t step,
                                              const std::vector<std::vector<double>>& tensors) {
  std::vector<loop::HostTensor> inputs = {
      loop::HostTensor::FromDoubles(DataType::kFloat32, {}, {rate}),
      loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(step)})};
  for (const std::vector<double>& t : tensors) {
    inputs.push_back(loop::HostTensor::FromDoubles(DataType::kFloat32,
                                                   {static_cast<int64_t>(t.size())}, t));
  }
  return inputs;
}

// r = 1 / (1 + 2 * 0.5) = 0.5; G' = 0.5 * X + G = (3, -3); H_new = H + G'^2 = (16, 9);
// X_new = X - r * G' / (sqrt(H_new) + 1) = (2 - 1.5 / 5, 4 + 1.5 / 4).
TEST(TrainingOpsTest, AdagradScalesEachStepByTheAccumulatedSquares) {
  OptimizerModel m = Optimizer("Adagrad", {"X", "G", "H"}, {"X_new", "H_new"}, 2);
  OnnxModelBuilder::FloatAttr(m.node(), "decay_factor", 0.5f);
  OnnxModelBuilder::FloatAttr(m.node(), "epsilon", 1.0f);
  OnnxModelBuilder::FloatAttr(m.node(), "norm_coefficient", 0.5f);
  auto out = RunAll(m.builder.Bytes(), OptimizerInputs(1, 2, {{2, 4}, {2, -5}, {7, 0}}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(DoubleNear(1.7, 1e-6), DoubleNear(4.375, 1e-6)));
  EXPECT_THAT(out[1], ElementsAre(DoubleNear(16, 1e-6), DoubleNear(9, 1e-6)));
}

// V_new = 0.5 V + beta' G with beta' = 1 at T = 0 and 0.25 after; standard: X - R V_new;
// nesterov: X - R (G + 0.5 V_new).
TEST(TrainingOpsTest, MomentumTakesTheWholeGradientOnlyAtTheFirstStep) {
  struct Case {
    const char* mode;
    int64_t step;
    std::vector<double> x_new, v_new;
  };
  for (const Case& c : {Case{"standard", 0, {-1.5, -1.5}, {5, 7}},
                        Case{"standard", 3, {0, 1.5}, {2, 1}},
                        Case{"nesterov", 3, {-1.5, -2.25}, {2, 1}}}) {
    OptimizerModel m = Optimizer("Momentum", {"X", "G", "V"}, {"X_new", "V_new"}, 2);
    OnnxModelBuilder::FloatAttr(m.node(), "alpha", 0.5f);
    OnnxModelBuilder::FloatAttr(m.node(), "beta", 0.25f);
    OnnxModelBuilder::FloatAttr(m.node(), "norm_coefficient", 0.0f);
    OnnxModelBuilder::StringAttr(m.node(), "mode", c.mode);
    auto out = RunAll(m.builder.Bytes(), OptimizerInputs(0.5, c.step, {{1, 2}, {4, 8}, {2, -2}}));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_THAT(out[0], ::testing::Pointwise(DoubleNear(1e-6), c.x_new)) << c.mode << " " << c.step;
    EXPECT_THAT(out[1], ::testing::Pointwise(DoubleNear(1e-6), c.v_new)) << c.mode << " " << c.step;
  }
}

// V_new = 0.5 * 4 + 0.5 * 2 = 3; H_new = 0.75 * 4 + 0.25 * 2^2 = 4; at T = 2 the rate is
// sqrt(1 - 0.75^2) / (1 - 0.5^2) = 0.8819171...; X_new = 1 - rate * 3 / sqrt(4), then times
// 1 - norm_coefficient_post = 0.5. At T = 0 the rate stays R = 1.
TEST(TrainingOpsTest, AdamCorrectsTheRateForBiasAfterTheFirstStep) {
  for (int64_t step : {0, 2}) {
    OptimizerModel m = Optimizer("Adam", {"X", "G", "V", "H"}, {"X_new", "V_new", "H_new"}, 1);
    OnnxModelBuilder::FloatAttr(m.node(), "alpha", 0.5f);
    OnnxModelBuilder::FloatAttr(m.node(), "beta", 0.75f);
    OnnxModelBuilder::FloatAttr(m.node(), "epsilon", 0.0f);
    OnnxModelBuilder::FloatAttr(m.node(), "norm_coefficient_post", 0.5f);
    auto out = RunAll(m.builder.Bytes(), OptimizerInputs(1, step, {{1}, {2}, {4}, {4}}));
    ASSERT_EQ(out.size(), 3u);
    double rate = step == 0 ? 1.0 : std::sqrt(1 - 0.75 * 0.75) / (1 - 0.5 * 0.5);
    EXPECT_THAT(out[0], ElementsAre(DoubleNear(0.5 * (1 - rate * 1.5), 1e-6))) << step;
    EXPECT_THAT(out[1], ElementsAre(DoubleNear(3, 1e-6)));
    EXPECT_THAT(out[2], ElementsAre(DoubleNear(4, 1e-6)));
  }
}

TEST(TrainingOpsTest, OptimizerErrorsNameTheNodeAndWhatWasExpected) {
  OptimizerModel bad_mode = Optimizer("Momentum", {"X", "G", "V"}, {"X_new", "V_new"}, 2);
  OnnxModelBuilder::FloatAttr(bad_mode.node(), "alpha", 0.5f);
  OnnxModelBuilder::FloatAttr(bad_mode.node(), "beta", 0.5f);
  OnnxModelBuilder::FloatAttr(bad_mode.node(), "norm_coefficient", 0.0f);
  OnnxModelBuilder::StringAttr(bad_mode.node(), "mode", "heavy_ball");
  OptimizerModel bad_arity = Optimizer("Adagrad", {"X", "G"}, {"X_new", "H_new"}, 2);
  OptimizerModel mixed = Optimizer("Adagrad", {"X", "G", "H"}, {"X_new", "H_new"}, 2);
  mixed.builder.Node("Relu", {"X"}, {"Y"}, "relu");  // a default-domain node, no default opset
  for (auto [model, message] :
       {std::pair{&bad_mode, "attribute 'mode' is 'heavy_ball'; expected 'standard' or 'nesterov'"},
        std::pair{&bad_arity, "expected R, T and 3 groups of n tensors"},
        std::pair{&mixed, "imports no version of the default ONNX opset, which ONNX node 'relu'"}}) {
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(model->builder.Bytes(), options, &failure).ok()) << message;
    EXPECT_THAT(failure.status.message(), HasSubstr(message));
  }
}

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
