// RoiAlign (roi_align_converter.cc) on images whose pixel (y, x) holds 10 y + x: bilinear
// sampling of a linear function is exact, so every expected value is that function at the
// sample points, worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::DoubleNear;
using ::testing::Pointwise;
using testing::OnnxModelBuilder;

std::vector<double> RoiAlign(int64_t pooled, int64_t grid, const std::string& mode,
                             std::vector<double> box, int64_t batch_index) {
  OnnxModelBuilder b(16);
  b.Input("x", {2, 1, 4, 4}).Input("rois", {1, 4}).Input("batch", {1}, onnx::TensorProto::INT64);
  b.Output("y");
  onnx::NodeProto& node = b.Node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
  OnnxModelBuilder::IntAttr(node, "output_height", pooled);
  OnnxModelBuilder::IntAttr(node, "output_width", pooled);
  OnnxModelBuilder::IntAttr(node, "sampling_ratio", grid);
  OnnxModelBuilder::StringAttr(node, "mode", mode);
  std::vector<double> image;
  for (int n = 0; n < 2; ++n) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) image.push_back(100 * n + 10 * y + x);
    }
  }
  return RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 1, 4, 4}, image),
                            loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 4}, box),
                            loop::HostTensor::FromDoubles(DataType::kInt64, {1}, {static_cast<double>(batch_index)})})[0];
}

TEST(RoiAlignTest, AveragesTheBinsSamples) {
  // Box (1, 1)-(3, 3), half_pixel: it starts at 0.5 and spans 2 pixels; one bin with a 2x2
  // grid samples rows and columns 1 and 2: the mean of 10 y + x there is 16.5.
  EXPECT_THAT(RoiAlign(1, 2, "avg", {1, 1, 3, 3}, 0), Pointwise(DoubleNear(1e-5), {16.5}));
  // 2x2 bins of one sample each, at rows and columns 1 and 2; image 1 adds 100.
  EXPECT_THAT(RoiAlign(2, 1, "avg", {1, 1, 3, 3}, 1), Pointwise(DoubleNear(1e-5), {111, 112, 121, 122}));
}

TEST(RoiAlignTest, MaxTakesTheLargestWeightedNeighbour) {
  // Samples on whole pixels put all weight on one neighbour: the pixel itself.
  EXPECT_THAT(RoiAlign(2, 1, "max", {1, 1, 3, 3}, 0), Pointwise(DoubleNear(1e-5), {11, 12, 21, 22}));
}

TEST(RoiAlignTest, SamplesBeyondTheMapAreZero) {
  EXPECT_THAT(RoiAlign(1, 2, "avg", {10, 10, 12, 12}, 0), Pointwise(DoubleNear(1e-6), {0}));
}

}  // namespace
}  // namespace kiln::driver
