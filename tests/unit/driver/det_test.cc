// Det (det_converter.cc): elimination with partial pivoting over a batch of matrices.
// Determinants worked out by hand (cofactor expansion).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using testing::OnnxModelBuilder;

std::vector<double> Det(std::vector<int64_t> shape, std::vector<double> values) {
  OnnxModelBuilder b(11);
  b.Input("x", shape).Output("y");
  b.Node("Det", {"x"}, {"y"}, "det");
  return RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, shape, values)})[0];
}

TEST(DetTest, PivotsAroundAZeroLeadingEntry) {
  // 0 * 3 - 1 * 2: the first pivot must come from the second row.
  EXPECT_THAT(Det({2, 2}, {0, 1, 2, 3}), ElementsAre(DoubleNear(-2, 1e-6)));
  // 2 (3 * 4 - 2 * 1) - 0 + 1 (1 * 1 - 3 * 1) = 18.
  EXPECT_THAT(Det({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 4}), ElementsAre(DoubleNear(18, 1e-5)));
}

TEST(DetTest, ASingularMatrixIsZeroNotNaN) {
  std::vector<double> y = Det({3, 3}, {1, 2, 3, 2, 4, 6, 0, 0, 0});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_FALSE(std::isnan(y[0]));
  EXPECT_EQ(y[0], 0);
}

TEST(DetTest, EveryMatrixOfABatch) {
  // 1 * 4 - 2 * 3 = -2 and 5 * 2 - 0 = 10.
  EXPECT_THAT(Det({2, 2, 2}, {1, 2, 3, 4, 5, 0, 0, 2}),
              ElementsAre(DoubleNear(-2, 1e-6), DoubleNear(10, 1e-6)));
}

TEST(DetTest, NonSquareInputIsAnError) {
  OnnxModelBuilder b(11);
  b.Input("x", {2, 3}).Output("y");
  b.Node("Det", {"x"}, {"y"}, "det");
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              ::testing::HasSubstr("ONNX node 'det' (#0, Det): input 0 must be [..., M, M]"));
}

}  // namespace
}  // namespace kiln::driver
