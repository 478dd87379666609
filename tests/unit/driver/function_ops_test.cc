// ONNX operators defined by a function body in their schema and imported by expanding it
// (engine/frontend/onnx/function_expansion.h), and the linear quantization operators
// (quantize_converters.cc): results hand-computed here, through the interpreter and native code.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;

// Runs `model` on `inputs` with the interpreter and natively; returns the interpreter's first
// output after checking native code gives the same.
std::vector<double> RunBoth(const std::string& model, const std::vector<loop::HostTensor>& inputs) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  absl::StatusOr<CompileResult> compiled = CompileOnnx(model, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  std::vector<std::vector<double>> results;
  for (bool native : {false, true}) {
    ModelTensors tensors = MakeModelTensors(*compiled);
    std::vector<loop::HostTensor*> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      tensors.inputs[i] = inputs[i];
      in.push_back(&tensors.inputs[i]);
    }
    absl::Status ran = native ? RunNative(*compiled, in, {&tensors.outputs[0]})
                              : RunModel(*compiled, in, {&tensors.outputs[0]});
    EXPECT_TRUE(ran.ok()) << ran;
    results.push_back(tensors.outputs[0].ToDoubles());
  }
  EXPECT_EQ(results[0], results[1]);
  return results[0];
}

// A loss of float scores x and int64 targets.
std::vector<double> RunLoss(const std::string& model, std::vector<int64_t> x_shape,
                            std::vector<double> x, std::vector<double> target) {
  return RunBoth(model, {loop::HostTensor::FromDoubles(DataType::kFloat32, x_shape, x),
                         loop::HostTensor::FromDoubles(
                             DataType::kInt64, {static_cast<int64_t>(target.size())}, target)});
}

// Mean negative log-likelihood with class weights and an ignored class:
// loss = sum(-w[t_i] x[i, t_i]) / sum(w[t_i]) over the rows whose target is not ignored.
TEST(FunctionOpsTest, NegativeLogLikelihoodLossWithWeightsAndIgnoreIndex) {
  OnnxModelBuilder b;
  b.Input("x", {3, 4}).Input("t", {3}, onnx::TensorProto::INT64).Output("loss");
  b.FloatInitializer("w", {4}, {1, 2, 3, 4});
  onnx::NodeProto& node = b.Node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"loss"}, "loss");
  OnnxModelBuilder::IntAttr(node, "ignore_index", 1);
  std::vector<double> x = {-1.0, -2.0, -3.0, -4.0, -0.5, -1.5, -2.5, -3.5, -0.1, -0.2, -0.3, -0.4};
  // Rows 0 and 1 count: -3 * -3.0 = 9 and -1 * -0.5 = 0.5, weights 3 + 1; row 2 (class 1) is
  // ignored.
  std::vector<double> loss = RunLoss(b.Bytes(), {3, 4}, x, {2, 0, 1});
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_NEAR(loss[0], 9.5 / 4.0, 1e-6);
}

// Softmax cross entropy per row (reduction none), no weights, no ignore_index (class 0 counts):
// loss_i = log(sum_j exp(x_ij)) - x[i, t_i].
TEST(FunctionOpsTest, SoftmaxCrossEntropyLossPerRow) {
  OnnxModelBuilder b;
  b.Input("x", {2, 3}).Input("t", {2}, onnx::TensorProto::INT64).Output("loss");
  onnx::NodeProto& node = b.Node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"loss"}, "sce");
  onnx::AttributeProto* reduction = node.add_attribute();
  reduction->set_name("reduction");
  reduction->set_type(onnx::AttributeProto::STRING);
  reduction->set_s("none");
  std::vector<double> loss = RunLoss(b.Bytes(), {2, 3}, {1, 2, 3, 0.5, 0, 0}, {2, 0});
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_NEAR(loss[0], std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0, 1e-6);
  EXPECT_NEAR(loss[1], std::log(std::exp(0.5) + 2.0) - 0.5, 1e-6);
}

// A one-input model.
std::vector<double> RunOne(const std::string& model, std::vector<int64_t> shape,
                           std::vector<double> x, DataType dtype) {
  return RunBoth(model, {loop::HostTensor::FromDoubles(dtype, shape, x)});
}

// Per-axis int8 quantization of a (2, 3) tensor along axis 0: row 0 with scale 0.5 and zero
// point 10, row 1 with scale 2 and zero point -3; halves round to even, the ends saturate.
TEST(QuantizeTest, QuantizeLinearPerAxisRoundsHalfToEvenAndSaturates) {
  OnnxModelBuilder b;
  b.Input("x", {2, 3}).Output("y");
  b.FloatInitializer("scale", {2}, {0.5f, 2.0f});
  onnx::TensorProto* zp = b.model().mutable_graph()->add_initializer();
  zp->set_name("zp");
  zp->set_data_type(onnx::TensorProto::INT8);
  zp->add_dims(2);
  zp->add_int32_data(10);
  zp->add_int32_data(-3);
  OnnxModelBuilder::IntAttr(b.Node("QuantizeLinear", {"x", "scale", "zp"}, {"y"}, "q"), "axis", 0);
  // Row 0: 1.25 / 0.5 = 2.5 -> 2 (+10 = 12); -0.75 / 0.5 = -1.5 -> -2 (8); 100 / 0.5 = 200 -> 127.
  // Row 1: 5 / 2 = 2.5 -> 2 (-1); -7 / 2 = -3.5 -> -4 (-7); -1000 / 2 -> -128.
  std::vector<double> y = RunOne(b.Bytes(), {2, 3}, {1.25, -0.75, 100, 5, -7, -1000},
                                 DataType::kFloat32);
  EXPECT_EQ(y, (std::vector<double>{12, 8, 127, -1, -7, -128}));
}

// uint8 dequantization with a scalar scale and zero point: (x - 128) * 0.25.
TEST(QuantizeTest, DequantizeLinearSubtractsTheZeroPointAndScales) {
  OnnxModelBuilder b;
  b.Input("x", {4}, onnx::TensorProto::UINT8).Output("y");
  b.FloatInitializer("scale", {}, {0.25f});
  onnx::TensorProto* zp = b.model().mutable_graph()->add_initializer();
  zp->set_name("zp");
  zp->set_data_type(onnx::TensorProto::UINT8);
  zp->add_int32_data(128);
  b.Node("DequantizeLinear", {"x", "scale", "zp"}, {"y"}, "dq");
  std::vector<double> y = RunOne(b.Bytes(), {4}, {0, 128, 129, 255}, DataType::kUInt8);
  EXPECT_EQ(y, (std::vector<double>{-32, 0, 0.25, 31.75}));
}

// MatMulInteger with a zero point per row of A and a scalar one for B:
// [[1, 2], [3, 4]] - [[1], [2]] = [[0, 1], [1, 2]];  [[5, 6], [7, 8]] - 5 = [[0, 1], [2, 3]];
// the product [[2, 3], [4, 7]] in int32.
TEST(QuantizeTest, MatMulIntegerCentersBothOperands) {
  OnnxModelBuilder b;
  b.Input("a", {2, 2}, onnx::TensorProto::UINT8).Output("y");
  auto uint8_initializer = [&](const char* name, std::vector<int64_t> dims, std::vector<int> values) {
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::UINT8);
    for (int64_t d : dims) t->add_dims(d);
    for (int v : values) t->add_int32_data(v);
  };
  uint8_initializer("b", {2, 2}, {5, 6, 7, 8});
  uint8_initializer("a_zp", {2}, {1, 2});
  uint8_initializer("b_zp", {}, {5});
  b.Node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"}, "mm");
  std::vector<double> y = RunOne(b.Bytes(), {2, 2}, {1, 2, 3, 4}, DataType::kUInt8);
  EXPECT_EQ(y, (std::vector<double>{2, 3, 4, 7}));
}

}  // namespace
}  // namespace kiln::driver
