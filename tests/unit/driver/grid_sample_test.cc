// GridSample (engine/frontend/onnx/grid_sample_converter.cc) on what the ONNX backend tests
// leave out: border and reflection padding with align_corners, points far outside the input or
// not a number (a hostile grid must not make the gather read outside the input), and attribute
// errors. The input is the 2 x 3 image [[1, 2, 3], [4, 5, 6]]; expected values are worked out by
// hand from the operator's definition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::HasSubstr;

std::string GridSampleModel(int64_t points, const std::string& mode, const std::string& padding,
                            int64_t align_corners) {
  OnnxModelBuilder b;
  b.Input("x", {1, 1, 2, 3}).Input("grid", {1, 1, points, 2}).Output("y");
  onnx::NodeProto& node = b.Node("GridSample", {"x", "grid"}, {"y"}, "sample");
  OnnxModelBuilder::StringAttr(node, "mode", mode);
  OnnxModelBuilder::StringAttr(node, "padding_mode", padding);
  OnnxModelBuilder::IntAttr(node, "align_corners", align_corners);
  return b.Bytes();
}

std::vector<double> Sample(const std::string& mode, const std::string& padding,
                           int64_t align_corners, const std::vector<double>& grid) {
  int64_t points = static_cast<int64_t>(grid.size() / 2);
  auto out = RunAll(GridSampleModel(points, mode, padding, align_corners),
                    {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                     loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, points, 2}, grid)});
  return out.empty() ? std::vector<double>{} : out[0];
}

// align_corners: x in [-1, 1] spans columns 0..2, y rows 0..1.
TEST(GridSampleTest, BilinearWithAlignedCornersAndBorderPadding) {
  // (-1, -1) -> pixel (0, 0) = 1; (1, 1) -> (2, 1) = 6; (0, 0) -> column 1, row 0.5: (2 + 5) / 2;
  // (2, 0) -> column 3, clamped to the border column 2, row 0.5: (3 + 6) / 2.
  EXPECT_THAT(Sample("bilinear", "border", 1, {-1, -1, 1, 1, 0, 0, 2, 0}),
              ::testing::Pointwise(::testing::DoubleNear(1e-6), std::vector<double>{1, 6, 3.5, 4.5}));
}

TEST(GridSampleTest, ReflectionPaddingFoldsTapsBackIntoTheImage) {
  // x = 2 -> column 3 with align_corners: its taps 3 and 4 reflect off [0, 2] to columns 1 and
  // 0, weights 1 and 0; row 0.5: (2 + 5) / 2. Nearest at (-1.5, -1) -> column -0.5, rounded half
  // to even to -0 = column 0, row 0: 1.
  EXPECT_THAT(Sample("bilinear", "reflection", 1, {2, 0}),
              ::testing::Pointwise(::testing::DoubleNear(1e-6), std::vector<double>{3.5}));
  EXPECT_THAT(Sample("nearest", "reflection", 1, {-1.5, -1}),
              ::testing::Pointwise(::testing::DoubleNear(1e-6), std::vector<double>{1}));
}

// Zeros padding: a point far outside reads zeros, a NaN point has no tap inside the input (and
// NaN interpolation weights), and neither reads
// outside the input (AddressSanitizer watches the native run in CI).
TEST(GridSampleTest, HostileGridPointsReadNothingOutsideTheInput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
    std::vector<double> y = Sample(mode, "zeros", 0, {1e30, -1e30, nan, 0, -3e9, 7e12});
    ASSERT_EQ(y.size(), 3u) << mode;
    EXPECT_EQ(y[0], 0.0) << mode;
    if (std::string(mode) == "nearest") {
      EXPECT_EQ(y[1], 0.0) << mode;  // no tap inside
    } else {
      EXPECT_TRUE(std::isnan(y[1])) << mode;  // NaN weights
    }
    EXPECT_EQ(y[2], 0.0) << mode;
  }
}

TEST(GridSampleTest, BadAttributesAndShapesAreErrorsNamingTheNode) {
  struct Case {
    std::string model, message;
  };
  OnnxModelBuilder wrong_grid;
  wrong_grid.Input("x", {1, 1, 2, 3}).Input("grid", {1, 1, 2, 3}).Output("y");
  wrong_grid.Node("GridSample", {"x", "grid"}, {"y"}, "sample");
  for (const Case& c : std::vector<Case>{
           {GridSampleModel(1, "area", "zeros", 0), "attribute 'mode' is 'area'"},
           {GridSampleModel(1, "bilinear", "wrap", 0), "attribute 'padding_mode' is 'wrap'"},
           {wrong_grid.Bytes(), "expected (1, H_out, W_out, 2)"}}) {
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(c.model, options, &failure).ok()) << c.message;
    EXPECT_THAT(failure.status.message(), HasSubstr("sample")) << c.message;
    EXPECT_THAT(failure.status.message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace kiln::driver
