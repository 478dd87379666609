// Operator inputs that ONNX allows to be computed at run time and that Kiln takes at run time
// instead of requiring a constant (index_converters.cc, run_time_slice.cc, run_time_pad.cc,
// nn_window_converters.cc): Trilu's k, CumSum's axis, Slice's bounds (starts plus a constant, or
// any bounds to the declared shape), Pad's pads and Resize's scales (to the declared shape). Each model
// feeds the value as a graph input, so nothing is specialized; expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAreArray;
using ::testing::Pointwise;
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

// x[s : s + 2] along axis 1 of a 2x4 matrix, s an input (Unsqueeze(s) and Unsqueeze(s + 2) as
// a loop body would write them); a negative s counts from the end. By hand, x = [[0 1 2 3],
// [4 5 6 7]].
TEST(RuntimeOperandTest, SliceTakesItsStartAtRunTimeWhenItsExtentIsKnown) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 4}).Input("s", {}, onnx::TensorProto::INT64).Output("y");
  auto* two = b.model().mutable_graph()->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::INT64);
  two->add_int64_data(2);
  auto* axes = b.model().mutable_graph()->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(1);
  b.Node("Add", {"s", "two"}, {"e"}, "end");
  b.Node("Unsqueeze", {"s", "axes0"}, {"starts"}, "starts");
  b.Node("Unsqueeze", {"e", "axes0"}, {"ends"}, "ends");
  auto* axes0 = b.model().mutable_graph()->add_initializer();
  axes0->set_name("axes0");
  axes0->set_data_type(onnx::TensorProto::INT64);
  axes0->add_dims(1);
  axes0->add_int64_data(0);
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "window");
  loop::HostTensor x =
      loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto start = [](int64_t s) {
    return loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(s)});
  };
  EXPECT_THAT(RunAll(b.Bytes(), {x, start(0)})[0], ElementsAreArray({0, 1, 4, 5}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, start(2)})[0], ElementsAreArray({2, 3, 6, 7}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, start(-3)})[0], ElementsAreArray({1, 2, 5, 6}));
  // s = 3 would give ONNX a slice of one column: not the shape compiled, so the run fails
  // naming the node rather than reading past the row.
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(b.Bytes());
  ASSERT_TRUE(compiled.ok());
  for (bool native : {false, true}) {
    for (int64_t s : {3, -5, 100}) {
      auto out = RunBackend(*compiled, {x, start(s)}, native);
      ASSERT_FALSE(out.ok()) << "s = " << s << (native ? " native" : " interpreter");
      if (!native) EXPECT_THAT(out.status().message(), ::testing::HasSubstr("'window'"));
    }
  }
}

// Every bound an input, the output declared (2, 3): by hand, x = 6 * row + column of a 4x6
// matrix; rows 1..2 and every second column from 0 give {6, 8, 10, 12, 14, 16}; rows 3..2 going
// back and columns 5, 3, 1 give {23, 21, 19, 17, 15, 13}; bounds giving (2, 6) fail the run.
TEST(RuntimeOperandTest, SliceWithEveryBoundAtRunTimeTakesTheDeclaredShape) {
  OnnxModelBuilder b(13);
  b.Input("x", {4, 6});
  for (const char* name : {"starts", "ends", "axes", "steps"}) {
    b.Input(name, {2}, onnx::TensorProto::INT64);
  }
  b.Output("y", {2, 3}, onnx::TensorProto::FLOAT);
  b.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "window");
  std::vector<double> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 6}, values);
  auto ints = [](std::vector<double> v) {
    return loop::HostTensor::FromDoubles(DataType::kInt64, {2}, v);
  };
  EXPECT_THAT(RunAll(b.Bytes(), {x, ints({1, 0}), ints({3, 6}), ints({0, 1}), ints({1, 2})})[0],
              ElementsAreArray({6, 8, 10, 12, 14, 16}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, ints({5, -1}), ints({0, 1}), ints({-1, 0}), ints({-2, -1})})[0],
              ElementsAreArray({23, 21, 19, 17, 15, 13}));
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(b.Bytes());
  ASSERT_TRUE(compiled.ok());
  for (bool native : {false, true}) {
    auto wide = RunBackend(*compiled, {x, ints({1, 0}), ints({3, 6}), ints({0, 1}), ints({1, 1})},
                           native);
    ASSERT_FALSE(wide.ok()) << (native ? "native" : "interpreter");
    if (!native) EXPECT_THAT(wide.status().message(), ::testing::HasSubstr("'window'"));
    auto zero_step = RunBackend(
        *compiled, {x, ints({1, 0}), ints({3, 6}), ints({0, 1}), ints({1, 0})}, native);
    EXPECT_FALSE(zero_step.ok()) << (native ? "native" : "interpreter");
  }
}

// Pad of x = [1, 2, 3] by pads known only at run time, to the declared length 5: by hand in
// every mode, a negative pad cropping; pads giving another length fail the run.
TEST(RuntimeOperandTest, PadTakesItsPadsAtRunTimeToTheDeclaredShape) {
  auto model = [](const std::string& mode) {
    OnnxModelBuilder b(13);
    b.Input("x", {3}).Input("pads", {2}, onnx::TensorProto::INT64).Output("y", {5});
    std::vector<std::string> inputs = {"x", "pads"};
    if (mode == "constant") {
      auto* nine = b.model().mutable_graph()->add_initializer();
      nine->set_name("nine");
      nine->set_data_type(onnx::TensorProto::FLOAT);
      nine->add_float_data(9);
      inputs.push_back("nine");
    }
    auto& pad = b.Node("Pad", inputs, {"y"}, "padding");
    OnnxModelBuilder::StringAttr(pad, "mode", mode);
    return b.Bytes();
  };
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {3}, {1, 2, 3});
  auto pads = [](double begin, double end) {
    return loop::HostTensor::FromDoubles(DataType::kInt64, {2}, {begin, end});
  };
  const std::string constant = model("constant"), edge = model("edge"), reflect = model("reflect");
  EXPECT_THAT(RunAll(constant, {x, pads(1, 1)})[0], ElementsAreArray({9, 1, 2, 3, 9}));
  EXPECT_THAT(RunAll(constant, {x, pads(2, 0)})[0], ElementsAreArray({9, 9, 1, 2, 3}));
  EXPECT_THAT(RunAll(constant, {x, pads(-1, 3)})[0], ElementsAreArray({2, 3, 9, 9, 9}));
  EXPECT_THAT(RunAll(edge, {x, pads(2, 0)})[0], ElementsAreArray({1, 1, 1, 2, 3}));
  EXPECT_THAT(RunAll(edge, {x, pads(0, 2)})[0], ElementsAreArray({1, 2, 3, 3, 3}));
  EXPECT_THAT(RunAll(reflect, {x, pads(1, 1)})[0], ElementsAreArray({2, 1, 2, 3, 2}));
  EXPECT_THAT(RunAll(reflect, {x, pads(2, 0)})[0], ElementsAreArray({3, 2, 1, 2, 3}));
  for (const std::string* bytes : {&constant, &reflect}) {
    absl::StatusOr<CompileResult> compiled = CompileForAllBackends(*bytes);
    ASSERT_TRUE(compiled.ok());
    for (bool native : {false, true}) {
      auto longer = RunBackend(*compiled, {x, pads(1, 2)}, native);
      ASSERT_FALSE(longer.ok()) << (native ? "native" : "interpreter");
      if (!native) EXPECT_THAT(longer.status().message(), ::testing::HasSubstr("'padding'"));
    }
  }
  // Reflect cannot mirror past the far end: 3 + 0 elements of a 3-element axis.
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(reflect);
  ASSERT_TRUE(compiled.ok());
  EXPECT_FALSE(RunBackend(*compiled, {x, pads(3, -1)}, false).ok());
}

// Resize of x = [1, 2, 3, 4] (1x1x1x4) by scales known only at run time to the declared width 2.
// The kernel reads the scales: by hand, nearest (asymmetric, floor) reads x[floor(i / s)]:
// s = 0.5 gives [1, 3], s = 0.6 gives [1, 2] (same shape, other coordinates); linear
// (half_pixel) at s = 0.5 reads 2i + 0.5: [1.5, 3.5]. Scales giving width 4 fail the run.
TEST(RuntimeOperandTest, ResizeReadsItsScalesAtRunTimeForTheDeclaredShape) {
  auto model = [](const std::string& mode) {
    OnnxModelBuilder b(13);
    b.Input("x", {1, 1, 1, 4}).Input("scales", {4}).Output("y", {1, 1, 1, 2});
    auto& resize = b.Node("Resize", {"x", "", "scales"}, {"y"}, "resize");
    OnnxModelBuilder::StringAttr(resize, "mode", mode);
    if (mode == "nearest") {
      OnnxModelBuilder::StringAttr(resize, "coordinate_transformation_mode", "asymmetric");
      OnnxModelBuilder::StringAttr(resize, "nearest_mode", "floor");
    }
    return b.Bytes();
  };
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, 1, 4}, {1, 2, 3, 4});
  auto scales = [](double width) {
    return loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 1, 1, width});
  };
  const std::string nearest = model("nearest"), linear = model("linear");
  EXPECT_THAT(RunAll(nearest, {x, scales(0.5)})[0], ElementsAreArray({1, 3}));
  EXPECT_THAT(RunAll(nearest, {x, scales(0.6)})[0], ElementsAreArray({1, 2}));
  EXPECT_THAT(RunAll(linear, {x, scales(0.5)})[0], ElementsAreArray({1.5, 3.5}));
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(nearest);
  ASSERT_TRUE(compiled.ok());
  for (bool native : {false, true}) {
    auto wide = RunBackend(*compiled, {x, scales(1)}, native);
    ASSERT_FALSE(wide.ok()) << (native ? "native" : "interpreter");
    if (!native) EXPECT_THAT(wide.status().message(), ::testing::HasSubstr("'resize'"));
  }
}

// Resize (tf_crop_and_resize, linear) of x = [1, 2, 3, 4] to width 3 with the roi given at run
// time: the width's crop [0.25, 0.75] maps output i to 0.75 + i * (0.5 * 3) / 2 = 0.75, 1.5,
// 2.25, read linearly as 1.75, 2.5, 3.25; the whole width [0, 1] gives 0, 1.5, 3: 1, 2.5, 4.
TEST(RuntimeOperandTest, ResizeReadsATfCropAndResizeRoiAtRunTime) {
  OnnxModelBuilder b(13);
  b.Input("x", {1, 1, 1, 4}).Input("roi", {8}).Output("y", {1, 1, 1, 3});
  auto* sizes = b.model().mutable_graph()->add_initializer();
  sizes->set_name("sizes");
  sizes->set_data_type(onnx::TensorProto::INT64);
  sizes->add_dims(4);
  for (int64_t extent : {1, 1, 1, 3}) sizes->add_int64_data(extent);
  auto& resize = b.Node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "resize");
  OnnxModelBuilder::StringAttr(resize, "mode", "linear");
  OnnxModelBuilder::StringAttr(resize, "coordinate_transformation_mode", "tf_crop_and_resize");
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, 1, 4}, {1, 2, 3, 4});
  auto roi = [](double start, double end) {
    return loop::HostTensor::FromDoubles(DataType::kFloat32, {8}, {0, 0, 0, start, 1, 1, 1, end});
  };
  EXPECT_THAT(RunAll(b.Bytes(), {x, roi(0.25, 0.75)})[0],
              Pointwise(DoubleNear(1e-6), std::vector<double>{1.75, 2.5, 3.25}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, roi(0, 1)})[0], Pointwise(DoubleNear(1e-6), std::vector<double>{1, 2.5, 4}));
}

// Upsample (opset 9) of x = [1, 2, 3, 4] by scales known only at run time to the declared width 8:
// nearest reads x[floor(i / s)] (asymmetric, rounding down when growing): s = 2 gives
// [1, 1, 2, 2, 3, 3, 4, 4], s = 2.2 (floor(4 * 2.2) = 8 too) gives [1, 1, 1, 2, 2, 3, 3, 4];
// s = 1 asks for width 4 and fails the run.
TEST(RuntimeOperandTest, UpsampleReadsItsScalesAtRunTimeForTheDeclaredShape) {
  OnnxModelBuilder b(9);
  b.Input("x", {1, 1, 1, 4}).Input("scales", {4}).Output("y", {1, 1, 1, 8});
  b.Node("Upsample", {"x", "scales"}, {"y"}, "upsample");
  const std::string model = b.Bytes();
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, 1, 4}, {1, 2, 3, 4});
  auto scales = [](double width) {
    return loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 1, 1, width});
  };
  EXPECT_THAT(RunAll(model, {x, scales(2)})[0], ElementsAreArray({1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_THAT(RunAll(model, {x, scales(2.2)})[0], ElementsAreArray({1, 1, 1, 2, 2, 3, 3, 4}));
  std::vector<absl::Status> failures = RunFailures(model, {x, scales(1)});
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), ::testing::HasSubstr("input 1 (scales) must give the shape"));
}

// Shrinking one dim while another keeps its extent by a scale above 1 (floor(2 * 1.2) = 2) would
// need two roundings: the run fails rather than round the growing dim up.
TEST(RuntimeOperandTest, UpsampleNearestRefusesAGrowingScaleBesideAShrinkingOne) {
  OnnxModelBuilder b(9);
  b.Input("x", {1, 1, 2, 4}).Input("scales", {4}).Output("y", {1, 1, 2, 2});
  b.Node("Upsample", {"x", "scales"}, {"y"}, "upsample");
  loop::HostTensor x =
      loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto scales = [](double h, double w) {
    return loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 1, h, w});
  };
  // h kept (scale 1), w halved: x[i][ceil(j / 0.5)] = x[i][2j].
  EXPECT_THAT(RunAll(b.Bytes(), {x, scales(1, 0.5)})[0], ElementsAreArray({1, 3, 5, 7}));
  std::vector<absl::Status> failures = RunFailures(b.Bytes(), {x, scales(1.2, 0.5)});
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), ::testing::HasSubstr("must not exceed 1"));
}

TEST(RuntimeOperandTest, ASliceWhoseExtentOnlyARunKnowsIsAnErrorSayingWhatToGive) {
  OnnxModelBuilder b(13);
  // Nothing tells the extent: not the graph (ends is no constant past starts), not a
  // declaration.
  b.Input("x", {4}).Input("starts", {1}, onnx::TensorProto::INT64)
      .Input("ends", {1}, onnx::TensorProto::INT64).Output("y");
  b.Node("Slice", {"x", "starts", "ends"}, {"y"}, "window");
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), ::testing::HasSubstr("'window'"));
  EXPECT_THAT(failure.status.message(), ::testing::HasSubstr("x[i : i + n]"));
}

}  // namespace
}  // namespace kiln::driver
