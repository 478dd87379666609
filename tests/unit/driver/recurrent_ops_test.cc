// RNN, GRU and LSTM (engine/frontend/onnx/recurrent_converters.cc) on the paths the ONNX backend
// tests leave out: both directions, reverse, clip, linear_before_reset, sequence_lens,
// input_forget and activations with alpha and beta. One hidden unit and one input feature, so
// every expected value below is the operator spec's equation evaluated by hand, step by step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::HasSubstr;

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, shape, values);
}

void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected) {
  EXPECT_THAT(actual, ::testing::Pointwise(::testing::DoubleNear(1e-5), expected));
}

// Bidirectional tanh RNN over two steps: the reverse direction starts at the last step, and Y
// holds both directions' states at each time step.
TEST(RecurrentOpsTest, BidirectionalRnnRunsTheSecondDirectionBackwards) {
  OnnxModelBuilder b;
  b.Input("x", {2, 1, 1}).Output("y").Output("y_h");
  b.FloatInitializer("w", {2, 1, 1}, {0.5f, -0.3f});
  b.FloatInitializer("r", {2, 1, 1}, {0.2f, 0.4f});
  b.FloatInitializer("b", {2, 2}, {0.1f, 0.05f, -0.2f, 0.0f});
  onnx::NodeProto& node = b.Node("RNN", {"x", "w", "r", "b"}, {"y", "y_h"}, "rnn");
  OnnxModelBuilder::IntAttr(node, "hidden_size", 1);
  OnnxModelBuilder::StringAttr(node, "direction", "bidirectional");
  auto out = RunAll(b.Bytes(), {Floats({2, 1, 1}, {1.0, 2.0})});
  ASSERT_EQ(out.size(), 2u);
  double h1 = std::tanh(0.5 * 1 + 0.15), h2 = std::tanh(0.5 * 2 + 0.2 * h1 + 0.15);
  double g2 = std::tanh(-0.3 * 2 - 0.2), g1 = std::tanh(-0.3 * 1 + 0.4 * g2 - 0.2);
  ExpectNear(out[0], {h1, g1, h2, g2});  // [step, direction, batch, hidden]
  ExpectNear(out[1], {h2, g1});
}

// A reverse GRU whose reset gate applies after the recurrent product (linear_before_reset), its
// gate inputs clipped to [-0.5, 0.5].
TEST(RecurrentOpsTest, ReverseGruWithLinearBeforeResetAndClip) {
  OnnxModelBuilder b;
  b.Input("x", {2, 1, 1}).Output("y").Output("y_h");
  b.FloatInitializer("w", {1, 3, 1}, {0.6f, -0.4f, 0.9f});  // z, r, h
  b.FloatInitializer("r", {1, 3, 1}, {0.3f, 0.7f, -0.5f});
  b.FloatInitializer("b", {1, 6}, {0.1f, 0.2f, -0.1f, 0.05f, -0.05f, 0.3f});
  onnx::NodeProto& node = b.Node("GRU", {"x", "w", "r", "b"}, {"y", "y_h"}, "gru");
  OnnxModelBuilder::IntAttr(node, "hidden_size", 1);
  OnnxModelBuilder::IntAttr(node, "linear_before_reset", 1);
  OnnxModelBuilder::FloatAttr(node, "clip", 0.5f);
  OnnxModelBuilder::StringAttr(node, "direction", "reverse");
  auto out = RunAll(b.Bytes(), {Floats({2, 1, 1}, {1.0, -2.0})});
  ASSERT_EQ(out.size(), 2u);
  auto clip = [](double v) { return std::clamp(v, -0.5, 0.5); };
  auto step = [&](double x, double h) {
    double z = Sigmoid(clip(0.6 * x + 0.3 * h + 0.1 + 0.05));
    double r = Sigmoid(clip(-0.4 * x + 0.7 * h + 0.2 - 0.05));
    double candidate = std::tanh(clip(0.9 * x + r * (-0.5 * h + 0.3) - 0.1));
    return (1 - z) * candidate + z * h;
  };
  double h_at_1 = step(-2.0, 0.0);  // the reverse direction starts at the last step
  double h_at_0 = step(1.0, h_at_1);
  ExpectNear(out[0], {h_at_0, h_at_1});
  ExpectNear(out[1], {h_at_0});
}

// An LSTM over a batch of two whose second sequence is one step long: past its length its
// state stays and its Y rows are zero. The forget gate is coupled (input_forget: f = 1 - i), the
// gates use HardSigmoid(0.3, 0.4) and the output Softsign.
TEST(RecurrentOpsTest, LstmMasksStepsPastEachSequenceLength) {
  OnnxModelBuilder b;
  b.Input("x", {2, 2, 1}).Input("lens", {2}, onnx::TensorProto::INT32);
  b.Output("y").Output("y_h").Output("y_c");
  b.FloatInitializer("w", {1, 4, 1}, {0.5f, -0.6f, 0.0f, 0.8f});  // i, o, f, c
  b.FloatInitializer("r", {1, 4, 1}, {0.1f, 0.2f, 0.0f, -0.3f});
  onnx::NodeProto& node = b.Node("LSTM", {"x", "w", "r", "", "lens"}, {"y", "y_h", "y_c"}, "lstm");
  OnnxModelBuilder::IntAttr(node, "hidden_size", 1);
  OnnxModelBuilder::IntAttr(node, "input_forget", 1);
  OnnxModelBuilder::StringsAttr(node, "activations", {"HardSigmoid", "Tanh", "Softsign"});
  OnnxModelBuilder::FloatsAttr(node, "activation_alpha", {0.3f});
  OnnxModelBuilder::FloatsAttr(node, "activation_beta", {0.4f});
  auto out = RunAll(b.Bytes(), {Floats({2, 2, 1}, {1.0, -1.0, 0.5, 2.0}),
                                loop::HostTensor::FromDoubles(DataType::kInt32, {2}, {2, 1})});
  ASSERT_EQ(out.size(), 3u);
  auto f = [](double v) { return std::clamp(0.3 * v + 0.4, 0.0, 1.0); };
  auto softsign = [](double v) { return v / (1 + std::abs(v)); };
  struct State {
    double h, c;
  };
  auto step = [&](double x, State s) {
    double i = f(0.5 * x + 0.1 * s.h);
    double c = (1 - i) * s.c + i * std::tanh(0.8 * x - 0.3 * s.h);
    double o = f(-0.6 * x + 0.2 * s.h);
    return State{o * softsign(c), c};
  };
  // X is [step, batch, 1]: batch 0 sees 1.0 then 0.5, batch 1 sees -1.0 only.
  State a1 = step(1.0, {0, 0}), a2 = step(0.5, a1);
  State b1 = step(-1.0, {0, 0});
  ExpectNear(out[0], {a1.h, b1.h, a2.h, 0.0});
  ExpectNear(out[1], {a2.h, b1.h});
  ExpectNear(out[2], {a2.c, b1.c});
}

// Batch-major (layout 1) bidirectional RNN of two hidden units over a batch of two, each
// direction starting from its initial state ([batch, directions, hidden] in this layout): every
// step's Y row holds batch x hidden values, written at its time position by both directions.
TEST(RecurrentOpsTest, BatchMajorBidirectionalRnnWithInitialStates) {
  constexpr int kBatch = 2, kSteps = 3, kHidden = 2;
  const std::vector<float> w = {0.5f, -0.4f, 0.3f, 0.8f};                   // [2, 2, 1]
  const std::vector<float> r = {0.2f, -0.1f, 0.4f, 0.3f,                     // [2, 2, 2]
                                -0.3f, 0.6f, 0.1f, -0.2f};
  const std::vector<double> x = {1.0, -0.5, 2.0, 0.25, 1.5, -1.0};          // [batch, steps, 1]
  const std::vector<double> h0 = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8};  // [b, d, h]
  OnnxModelBuilder b;
  b.Input("x", {kBatch, kSteps, 1}).Input("h0", {kBatch, 2, kHidden}).Output("y").Output("y_h");
  b.FloatInitializer("w", {2, kHidden, 1}, w);
  b.FloatInitializer("r", {2, kHidden, kHidden}, r);
  onnx::NodeProto& node = b.Node("RNN", {"x", "w", "r", "", "", "h0"}, {"y", "y_h"}, "rnn");
  OnnxModelBuilder::IntAttr(node, "hidden_size", kHidden);
  OnnxModelBuilder::IntAttr(node, "layout", 1);
  OnnxModelBuilder::StringAttr(node, "direction", "bidirectional");
  auto out = RunAll(b.Bytes(), {Floats({kBatch, kSteps, 1}, x), Floats({kBatch, 2, kHidden}, h0)});
  ASSERT_EQ(out.size(), 2u);

  std::vector<double> y(kBatch * kSteps * 2 * kHidden), y_h(kBatch * 2 * kHidden);
  for (int d = 0; d < 2; ++d) {
    for (int n = 0; n < kBatch; ++n) {
      double h[kHidden] = {h0[(n * 2 + d) * kHidden], h0[(n * 2 + d) * kHidden + 1]};
      for (int i = 0; i < kSteps; ++i) {
        const int t = d == 0 ? i : kSteps - 1 - i;
        double next[kHidden];
        for (int j = 0; j < kHidden; ++j) {
          double a = w[d * kHidden + j] * static_cast<float>(x[n * kSteps + t]);
          for (int k = 0; k < kHidden; ++k) a += r[(d * kHidden + j) * kHidden + k] * h[k];
          next[j] = std::tanh(a);
        }
        for (int j = 0; j < kHidden; ++j) {
          h[j] = next[j];
          y[((n * kSteps + t) * 2 + d) * kHidden + j] = next[j];  // [batch, steps, dirs, hidden]
        }
      }
      for (int j = 0; j < kHidden; ++j) y_h[(n * 2 + d) * kHidden + j] = h[j];
    }
  }
  ExpectNear(out[0], y);
  ExpectNear(out[1], y_h);
}

CompileFailure FailToImport(const std::string& model) {
  CompileFailure failure;
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(model, options, &failure);
  EXPECT_FALSE(compiled.ok());
  return failure;
}

// A long sequence is one loop over its steps: the compiled program does not grow with the
// sequence (a few kernels, Y written a row per step in place, not all its rows every step), and
// 5,000 steps give the recurrence evaluated by hand.
TEST(RecurrentOpsTest, ALongSequenceRunsAsOneLoop) {
  constexpr int kSteps = 5000;
  OnnxModelBuilder b;
  b.Input("x", {kSteps, 1, 1}).Output("y").Output("y_h");
  b.FloatInitializer("w", {1, 1, 1}, {0.5f});
  b.FloatInitializer("r", {1, 1, 1}, {0.9f});
  onnx::NodeProto& node = b.Node("RNN", {"x", "w", "r"}, {"y", "y_h"}, "long_rnn");
  OnnxModelBuilder::IntAttr(node, "hidden_size", 1);
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(b.Bytes());
  ASSERT_TRUE(compiled.ok());
  ASSERT_TRUE(compiled->lowered.has_value());
  EXPECT_LT(compiled->lowered->kernels.size(), 16u);
  bool row_written_in_place = false;
  for (const lower::LoweredKernel& kernel : compiled->lowered->kernels) {
    row_written_in_place |= kernel.name.rfind("write_row", 0) == 0;
  }
  EXPECT_TRUE(row_written_in_place);

  std::vector<double> x(kSteps), expected(kSteps);
  double h = 0;
  for (int t = 0; t < kSteps; ++t) {
    x[t] = std::sin(0.01 * t);
    h = std::tanh(0.5 * static_cast<float>(x[t]) + 0.9 * h);
    expected[t] = h;
  }
  auto out = RunAll(b.Bytes(), {Floats({kSteps, 1, 1}, x)});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], expected);
  ExpectNear(out[1], {h});
}

// An activation ONNX does not define is an error naming the node.
TEST(RecurrentOpsTest, AnUnknownActivationIsAnError) {
  {
    OnnxModelBuilder b;
    b.Input("x", {1, 1, 1}).Input("w", {1, 1, 1}).Input("r", {1, 1, 1}).Output("y");
    onnx::NodeProto& node = b.Node("RNN", {"x", "w", "r"}, {"y"}, "odd_rnn");
    OnnxModelBuilder::StringsAttr(node, "activations", {"Swish"});
    CompileFailure failure = FailToImport(b.Bytes());
    EXPECT_THAT(failure.status.message(), HasSubstr("odd_rnn"));
    EXPECT_THAT(failure.status.message(), HasSubstr("activation 'Swish'"));
  }
}

}  // namespace
}  // namespace kiln::driver
