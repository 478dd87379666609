// Operator inputs that ONNX allows to be computed at run time and that Kiln takes at run time
// instead of requiring a constant (index_converters.cc): Trilu's k and CumSum's axis. Each model
// feeds the value as a graph input, so nothing is specialized; expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAreArray;
using testing::OnnxModelBuilder;

std::vector<std::vector<double>> RunTrilu(bool upper, int64_t k) {
  OnnxModelBuilder b(14);
  b.Input("x", {3, 3}).Input("k", {}, onnx::TensorProto::INT64).Output("y");
  OnnxModelBuilder::IntAttr(b.Node("Trilu", {"x", "k"}, {"y"}, "trilu"), "upper", upper ? 1 : 0);
  return RunAll(b.Bytes(),
                {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                 loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(k)})});
}

TEST(RuntimeOperandTest, TriluTakesItsDiagonalOffsetAtRunTime) {
  // Upper, k = 1: the elements strictly above the diagonal.
  EXPECT_THAT(RunTrilu(true, 1)[0], ElementsAreArray({0, 2, 3, 0, 0, 6, 0, 0, 0}));
  // Lower, k = -1: strictly below it.
  EXPECT_THAT(RunTrilu(false, -1)[0], ElementsAreArray({0, 0, 0, 4, 0, 0, 7, 8, 0}));
  // Upper, k = -5: everything; lower, k = -3: nothing.
  EXPECT_THAT(RunTrilu(true, -5)[0], ElementsAreArray({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_THAT(RunTrilu(false, -3)[0], ElementsAreArray({0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

std::vector<double> RunCumSum(int32_t axis) {
  OnnxModelBuilder b(14);
  b.Input("x", {2, 3}).Input("axis", {1}, onnx::TensorProto::INT32).Output("y");
  b.Node("CumSum", {"x", "axis"}, {"y"}, "cumsum");
  return RunAll(b.Bytes(),
                {loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                 loop::HostTensor::FromDoubles(DataType::kInt32, {1}, {static_cast<double>(axis)})})[0];
}

TEST(RuntimeOperandTest, CumSumTakesItsAxisAtRunTime) {
  EXPECT_THAT(RunCumSum(0), ElementsAreArray({1, 2, 3, 5, 7, 9}));
  EXPECT_THAT(RunCumSum(1), ElementsAreArray({1, 3, 6, 4, 9, 15}));
  EXPECT_THAT(RunCumSum(-1), ElementsAreArray({1, 3, 6, 4, 9, 15}));
  EXPECT_THAT(RunCumSum(-2), ElementsAreArray({1, 2, 3, 5, 7, 9}));
  // Outside [-rank, rank): zeros rather than a read out of bounds.
  EXPECT_THAT(RunCumSum(2), ElementsAreArray({0, 0, 0, 0, 0, 0}));
}

TEST(RuntimeOperandTest, ARunTimeOperandMustHoldOneInteger) {
  OnnxModelBuilder b(14);
  b.Input("x", {3, 3}).Input("k", {2}, onnx::TensorProto::INT64).Output("y");
  b.Node("Trilu", {"x", "k"}, {"y"}, "trilu");
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              ::testing::HasSubstr("ONNX node 'trilu' (#0, Trilu): input 1 (k) must hold one integer"));
}

}  // namespace
}  // namespace kiln::driver
