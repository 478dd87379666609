// MaxUnpool (max_unpool_converter.cc): every value placed at the flat position its index names
// in the shape the pooling attributes imply, zeros elsewhere; an output_shape pads that shape
// at the end of each axis (the ONNX reference's semantics). Expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAreArray;
using testing::OnnxModelBuilder;

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}
loop::HostTensor Int64s(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kInt64, std::move(shape), values);
}

// An int64 initializer `name` of `values` (1-D).
void Int64Initializer(OnnxModelBuilder& b, const std::string& name, std::vector<int64_t> values) {
  onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

// MaxUnpool with 2x2 windows and stride 2 over x of `shape` (and I alike), with an
// output_shape initializer when `output_shape` is not empty.
std::string Unpool2x2(std::vector<int64_t> shape, std::vector<int64_t> output_shape = {}) {
  OnnxModelBuilder b(11);
  b.Input("x", shape).Input("i", shape, onnx::TensorProto::INT64).Output("y");
  std::vector<std::string> inputs = {"x", "i"};
  if (!output_shape.empty()) {
    Int64Initializer(b, "shape", output_shape);
    inputs.push_back("shape");
  }
  onnx::NodeProto& node = b.Node("MaxUnpool", inputs, {"y"}, "unpool");
  OnnxModelBuilder::IntsAttr(node, "kernel_shape", {2, 2});
  OnnxModelBuilder::IntsAttr(node, "strides", {2, 2});
  return b.Bytes();
}

TEST(MaxUnpoolTest, ValuesGoWhereTheirIndicesPointInTheImpliedShape) {
  // 2x2 windows, stride 2, over a 2x2 input: a 4x4 output; 5, 7, 13, 15 are (1, 1), (1, 3),
  // (3, 1), (3, 3).
  auto out = RunAll(Unpool2x2({1, 1, 2, 2}), {Floats({1, 1, 2, 2}, {1, 2, 3, 4}),
                                Int64s({1, 1, 2, 2}, {5, 7, 13, 15})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAreArray({0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
}

TEST(MaxUnpoolTest, AnOutputShapePadsTheImpliedShapeAtTheEnd) {
  // The same 4x4 placement inside a 5x5 output: (1, 1) is flat 6 there, (1, 3) 8, (3, 1) 16,
  // (3, 3) 18.
  auto out = RunAll(Unpool2x2({1, 1, 2, 2}, {1, 1, 5, 5}), {Floats({1, 1, 2, 2}, {5, 6, 7, 8}),
                                Int64s({1, 1, 2, 2}, {5, 7, 13, 15})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected(25, 0);
  expected[6] = 5;
  expected[8] = 6;
  expected[16] = 7;
  expected[18] = 8;
  EXPECT_THAT(out[0], ElementsAreArray(expected));
}

TEST(MaxUnpoolTest, OneDimensionWithPaddingAndIndicesAcrossChannels) {
  // Kernel 3, stride 2, pads 1 and 1 over length 2: (2 - 1) * 2 - 2 + 3 = 3 per channel; the
  // indices run over both channels' 6 positions.
  OnnxModelBuilder b(11);
  b.Input("x", {1, 2, 2}).Input("i", {1, 2, 2}, onnx::TensorProto::INT64).Output("y");
  onnx::NodeProto& node = b.Node("MaxUnpool", {"x", "i"}, {"y"}, "unpool");
  OnnxModelBuilder::IntsAttr(node, "kernel_shape", {3});
  OnnxModelBuilder::IntsAttr(node, "strides", {2});
  OnnxModelBuilder::IntsAttr(node, "pads", {1, 1});
  auto out = RunAll(b.Bytes(), {Floats({1, 2, 2}, {1, 2, 3, 4}), Int64s({1, 2, 2}, {0, 2, 3, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAreArray({1, 0, 2, 3, 0, 4}));
}

TEST(MaxUnpoolTest, AnOutputShapeSmallerThanTheImpliedOneIsAnError) {
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(Unpool2x2({1, 1, 2, 2}, {1, 1, 3, 3}), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              ::testing::HasSubstr("ONNX node 'unpool' (#0, MaxUnpool): input 2 (output_shape) is "
                                   "(1, 1, 3, 3); expected input 0's N and C (1, 1) and spatial "
                                   "extents at least the implied (1, 1, 4, 4)"));
}

// An empty input (a 0 extent) is refused before the unpooled size is computed from it.
TEST(MaxUnpoolTest, AnEmptyInputIsAnError) {
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(Unpool2x2({0, 1, 2, 2}), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              ::testing::HasSubstr("input 0 must have a static shape of extents in [1, "));
}

}  // namespace
}  // namespace kiln::driver
