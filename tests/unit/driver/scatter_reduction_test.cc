// Scatters with a reduction (ONNX opset 16's add and mul, 18's max and min): every update that
// lands on an element is combined with it, duplicates included; an element no update reaches
// keeps its data. Expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::ElementsAre;

std::vector<double> Scatter(const std::string& op, const std::string& reduction,
                            std::vector<int64_t> indices_shape, std::vector<double> indices,
                            std::vector<int64_t> updates_shape, std::vector<double> updates) {
  OnnxModelBuilder b;
  b.Input("data", {4}).Input("indices", indices_shape, onnx::TensorProto::INT64);
  b.Input("updates", updates_shape).Output("y");
  OnnxModelBuilder::StringAttr(b.Node(op, {"data", "indices", "updates"}, {"y"}, "scatter"),
                               "reduction", reduction);
  auto out = RunAll(b.Bytes(),
                    {loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 2, 3, 4}),
                     loop::HostTensor::FromDoubles(DataType::kInt64, indices_shape, indices),
                     loop::HostTensor::FromDoubles(DataType::kFloat32, updates_shape, updates)});
  return out.empty() ? std::vector<double>{} : out[0];
}

// Index 1 gets 10 and 5 (a duplicate), index -1 (the last, 3) gets -7; 0 and 2 get nothing.
TEST(ScatterReductionTest, ElementsCombineDuplicatesAndLeaveTheRest) {
  std::vector<double> indices = {1, 1, -1};
  std::vector<double> updates = {10, 5, -7};
  EXPECT_THAT(Scatter("ScatterElements", "add", {3}, indices, {3}, updates),
              ElementsAre(1, 17, 3, -3));
  EXPECT_THAT(Scatter("ScatterElements", "mul", {3}, indices, {3}, updates),
              ElementsAre(1, 100, 3, -28));
  EXPECT_THAT(Scatter("ScatterElements", "max", {3}, indices, {3}, updates),
              ElementsAre(1, 10, 3, 4));
  EXPECT_THAT(Scatter("ScatterElements", "min", {3}, indices, {3}, updates),
              ElementsAre(1, 2, 3, -7));
}

TEST(ScatterReductionTest, NdRowsCombineLikewise) {
  // indices (3, 1): rows address data[2], data[2], data[0].
  std::vector<double> indices = {2, 2, 0};
  std::vector<double> updates = {0.5, 8, -1};
  EXPECT_THAT(Scatter("ScatterND", "add", {3, 1}, indices, {3}, updates),
              ElementsAre(0, 2, 11.5, 4));
  EXPECT_THAT(Scatter("ScatterND", "min", {3, 1}, indices, {3}, updates),
              ElementsAre(-1, 2, 0.5, 4));
}

}  // namespace
}  // namespace kiln::driver
