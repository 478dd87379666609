// NonMaxSuppression (non_max_suppression_converter.cc) on four boxes and two classes, worked
// out by hand. Corners [y1, x1, y2, x2]:
//   b0 (0, 0)-(2, 2)      area 4
//   b1 (0, 1)-(2, 3)      area 4; with b0: intersection 2, union 6, IoU 0.33
//   b2 (0, 0.2)-(2, 2.2)  area 4; with b0: 3.6 / 4.4 = 0.82; with b1: 2.4 / 5.6 = 0.43
//   b3 (5, 5)-(6, 6)      area 1, apart from the others
// iou_threshold 0.5, score_threshold 0.2.
// Class 0 scores (0.9, 0.8, 0.95, 0.1): b2 first; b0 overlaps it (0.82): suppressed; b1 does
// not (0.43): selected; b3's score is below the threshold. Selected: 2, 1.
// Class 1 scores (0.3, 0.6, 0.1, 0.7): b3, then b1, then b0 (0.33 with b1): 3, 1, 0 when three
// boxes per class may be selected, 3, 1 when two; b2 is below the threshold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/driver/bounded_outputs.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

const std::vector<double> kCorners = {0, 0, 2, 2, 0, 1, 2, 3, 0, 0.2, 2, 2.2, 5, 5, 6, 6};
const std::vector<double> kScores = {0.9, 0.8, 0.95, 0.1, 0.3, 0.6, 0.1, 0.7};

std::string NmsModel(int64_t rows, int64_t center_point_box = 0) {
  OnnxModelBuilder b(11);
  b.Input("boxes", {1, 4, 4})
      .Input("scores", {1, 2, 4})
      .Input("max_out", {1}, onnx::TensorProto::INT64)
      .Input("iou", {1})
      .Input("score", {1});
  if (rows >= 0) {
    b.Output("selected", {rows, 3}, onnx::TensorProto::INT64);
  } else {
    b.Output("selected");
  }
  onnx::NodeProto& node = b.Node(
      "NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "score"}, {"selected"}, "nms");
  OnnxModelBuilder::IntAttr(node, "center_point_box", center_point_box);
  return b.Bytes();
}

std::vector<loop::HostTensor> Inputs(const std::vector<double>& boxes, int64_t max_out,
                                     double iou = 0.5) {
  return {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 4, 4}, boxes),
          loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 4}, kScores),
          loop::HostTensor::FromDoubles(DataType::kInt64, {1}, {static_cast<double>(max_out)}),
          loop::HostTensor::FromDoubles(DataType::kFloat32, {1}, {iou}),
          loop::HostTensor::FromDoubles(DataType::kFloat32, {1}, {0.2})};
}

TEST(NonMaxSuppressionTest, SelectsGreedilyPerClassInScoreOrder) {
  EXPECT_THAT(RunAll(NmsModel(5), Inputs(kCorners, 3))[0],
              ElementsAreArray({0, 0, 2, 0, 0, 1, 0, 1, 3, 0, 1, 1, 0, 1, 0}));
  // Two boxes per class at most: class 1 stops before b0.
  EXPECT_THAT(RunAll(NmsModel(4), Inputs(kCorners, 2))[0],
              ElementsAreArray({0, 0, 2, 0, 0, 1, 0, 1, 3, 0, 1, 1}));
}

TEST(NonMaxSuppressionTest, CornersInAnyOrderAndCentreSizeBoxesGiveTheSameSelection) {
  // Each box's corners swapped: (y2, x2, y1, x1).
  std::vector<double> flipped;
  for (size_t b = 0; b < 4; ++b) {
    flipped.insert(flipped.end(), {kCorners[4 * b + 2], kCorners[4 * b + 3], kCorners[4 * b],
                                   kCorners[4 * b + 1]});
  }
  EXPECT_THAT(RunAll(NmsModel(4), Inputs(flipped, 2))[0],
              ElementsAreArray({0, 0, 2, 0, 0, 1, 0, 1, 3, 0, 1, 1}));
  // [x_center, y_center, width, height] of the same boxes.
  std::vector<double> centred = {1, 1, 2, 2, 2, 1, 2, 2, 1.2, 1, 2, 2, 5.5, 5.5, 1, 1};
  EXPECT_THAT(RunAll(NmsModel(4, 1), Inputs(centred, 2))[0],
              ElementsAreArray({0, 0, 2, 0, 0, 1, 0, 1, 3, 0, 1, 1}));
}

TEST(NonMaxSuppressionTest, AThresholdOfOneKeepsOverlappingBoxes) {
  // Nothing overlaps by more than 1: every box above the score threshold, by score.
  EXPECT_THAT(RunAll(NmsModel(6), Inputs(kCorners, 4, 1.0))[0],
              ElementsAreArray({0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 3, 0, 1, 1, 0, 1, 0}));
}

TEST(NonMaxSuppressionTest, ARunSelectingAnotherCountOrGivingABadThresholdFails) {
  // Compiled for the 4 rows of two boxes per class; three per class select 5.
  std::vector<absl::Status> failures = RunFailures(NmsModel(4), Inputs(kCorners, 3));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), HasSubstr("ONNX node 'nms' (#0, NonMaxSuppression): the "
                                               "inputs must select 4 boxes"));
  EXPECT_THAT(failures[1].message(), HasSubstr("KILN_ERROR_SHAPE_MISMATCH"));
  failures = RunFailures(NmsModel(4), Inputs(kCorners, 2, 1.5));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), HasSubstr("iou_threshold (input 3) must lie in [0, 1]"));
}

// Undeclared, selected_indices is a bounded output: one row per (batch, class, box) candidate,
// the run filling the 5 selected ones (driver/bounded_outputs.h).
TEST(NonMaxSuppressionTest, AnUndeclaredCountIsABoundedOutput) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(NmsModel(-1));
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(compiled->lowered->bounded_outputs.size(), 1u);
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> outputs =
        RunBackendTensors(*compiled, Inputs(kCorners, 3), native);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_THAT((*outputs)[0].shape, ElementsAreArray({8, 3}));  // 1 batch x 2 classes x 4 boxes
    ASSERT_TRUE(CutBoundedOutputs(compiled->lowered->bounded_outputs, &*outputs).ok());
    ASSERT_EQ(outputs->size(), 1u);
    EXPECT_THAT((*outputs)[0].ToDoubles(),
                ElementsAreArray({0, 0, 2, 0, 0, 1, 0, 1, 3, 0, 1, 1, 0, 1, 0}));
  }
}

TEST(NonMaxSuppressionTest, AnUnknownBoxFormatIsACompileError) {
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(NmsModel(4, 2), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("attribute 'center_point_box' is 2"));
}

}  // namespace
}  // namespace kiln::driver
