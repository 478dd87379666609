// The Gradient operator of ai.onnx.preview.training (gradient.cc): d sum(y) / d x through the
// graph, with broadcasting summed back, MatMul and Relu, values held constant by `zs`, and the
// error for an op it cannot differentiate. Expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

onnx::NodeProto& Gradient(OnnxModelBuilder& b, std::vector<std::string> xs, const std::string& y,
                          std::vector<std::string> outputs, std::vector<std::string> zs = {}) {
  std::vector<std::string> inputs = xs;
  inputs.insert(inputs.end(), zs.begin(), zs.end());
  onnx::NodeProto& node = b.Node("Gradient", inputs, outputs, "gradient");
  node.set_domain("ai.onnx.preview.training");
  OnnxModelBuilder::StringsAttr(node, "xs", xs);
  OnnxModelBuilder::StringAttr(node, "y", y);
  if (!zs.empty()) OnnxModelBuilder::StringsAttr(node, "zs", zs);
  return node;
}

OnnxModelBuilder Model() {
  OnnxModelBuilder b(13);
  auto* training = b.model().add_opset_import();
  training->set_domain("ai.onnx.preview.training");
  training->set_version(1);
  return b;
}

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}

// y = a * b + a with b broadcast over a's rows: dy/da = b + 1 in every row, dy/db = the column
// sums of a.
TEST(GradientTest, BroadcastOperandsGetTheirGradientSummed) {
  OnnxModelBuilder b = Model();
  b.Input("a", {2, 3}).Input("b", {3}).Output("da").Output("db");
  b.Node("Mul", {"a", "b"}, {"c"}, "mul");
  b.Node("Add", {"c", "a"}, {"y"}, "add");
  Gradient(b, {"a", "b"}, "y", {"da", "db"});
  auto out = RunAll(b.Bytes(), {Floats({2, 3}, {1, 2, 3, 4, 5, 6}), Floats({3}, {10, 20, 30})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(11, 21, 31, 11, 21, 31));
  EXPECT_THAT(out[1], ElementsAre(5, 7, 9));
}

// Holding c (zs) cuts the path through the product: dy/da is 1 from the Add alone.
TEST(GradientTest, HeldValuesAreConstants) {
  OnnxModelBuilder b = Model();
  b.Input("a", {2, 3}).Input("b", {3}).Output("da");
  b.Node("Mul", {"a", "b"}, {"c"}, "mul");
  b.Node("Add", {"c", "a"}, {"y"}, "add");
  Gradient(b, {"a"}, "y", {"da"}, {"c"});
  auto out = RunAll(b.Bytes(), {Floats({2, 3}, {1, 2, 3, 4, 5, 6}), Floats({3}, {10, 20, 30})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAre(1, 1, 1, 1, 1, 1));
}

// y = relu(x w): x w = (3, -1), so only the first row passes the relu: dy/dw = x^T (1, 0) =
// (1, 2), dy/dx = (1, 0) w^T = ((1, 1), (0, 0)).
TEST(GradientTest, MatMulThroughRelu) {
  OnnxModelBuilder b = Model();
  b.Input("x", {2, 2}).Input("w", {2, 1}).Output("dx").Output("dw");
  b.Node("MatMul", {"x", "w"}, {"p"}, "matmul");
  b.Node("Relu", {"p"}, {"y"}, "relu");
  Gradient(b, {"x", "w"}, "y", {"dx", "dw"});
  auto out = RunAll(b.Bytes(), {Floats({2, 2}, {1, 2, 3, -4}), Floats({2, 1}, {1, 1})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(1, 1, 0, 0));
  EXPECT_THAT(out[1], ElementsAre(1, 2));
}

TEST(GradientTest, AnOpItCannotDifferentiateIsNamed) {
  OnnxModelBuilder b = Model();
  b.Input("x", {4}).Output("dx");
  b.Node("Softmax", {"x"}, {"y"}, "softmax");
  Gradient(b, {"x"}, "y", {"dx"});
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              HasSubstr("cannot differentiate through ONNX node 'softmax' (Softmax); Gradient "
                        "supports Add, Sub, Mul"));
}

}  // namespace
}  // namespace kiln::driver
