// DFT, STFT and the window functions (spectral_converters.cc) through both backends. Expected
// values worked out by hand: the DFT of (1, 2, 3, 4) is (10, -2 + 2i, -2, -2 - 2i); a periodic
// Hann window of 4 is 0.5 - 0.5 cos(2 pi n / 4) = (0, 0.5, 1, 0.5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
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

// y = DFT(x) of x [1, 4, parts] along axis 1, with `attrs` set on the node.
std::vector<double> Dft(int64_t parts, std::vector<double> x, bool inverse, bool onesided,
                        int64_t dft_length = 0) {
  OnnxModelBuilder b(17);
  b.Input("x", {1, 4, parts}).Output("y");
  std::vector<std::string> inputs = {"x"};
  if (dft_length > 0) {
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("length");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(dft_length);
    inputs.push_back("length");
  }
  onnx::NodeProto& node = b.Node("DFT", inputs, {"y"}, "dft");
  OnnxModelBuilder::IntAttr(node, "inverse", inverse ? 1 : 0);
  OnnxModelBuilder::IntAttr(node, "onesided", onesided ? 1 : 0);
  return RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 4, parts}, x)})[0];
}

TEST(SpectralOpsTest, DftOfARealSignal) {
  EXPECT_THAT(Dft(1, {1, 2, 3, 4}, false, false),
              Pointwise(DoubleNear(1e-5), {10, 0, -2, 2, -2, 0, -2, -2}));
  // Onesided: the first 4 / 2 + 1 bins.
  EXPECT_THAT(Dft(1, {1, 2, 3, 4}, false, true), Pointwise(DoubleNear(1e-5), {10, 0, -2, 2, -2, 0}));
  // dft_length 2 keeps the first two samples: (3, -1); 6 pads with zeros: bin 3 is
  // 1 - 2 + 3 - 4 = -2 (the zeros add nothing).
  EXPECT_THAT(Dft(1, {1, 2, 3, 4}, false, false, 2), Pointwise(DoubleNear(1e-5), {3, 0, -1, 0}));
  std::vector<double> padded = Dft(1, {1, 2, 3, 4}, false, false, 6);
  ASSERT_EQ(padded.size(), 12u);
  EXPECT_NEAR(padded[0], 10, 1e-5);
  EXPECT_NEAR(padded[6], -2, 1e-5);
  EXPECT_NEAR(padded[7], 0, 1e-5);
}

TEST(SpectralOpsTest, InverseDftUndoesTheTransform) {
  // The inverse of (10, -2 + 2i, -2, -2 - 2i) is (1, 2, 3, 4), imaginary parts 0.
  EXPECT_THAT(Dft(2, {10, 0, -2, 2, -2, 0, -2, -2}, true, false),
              Pointwise(DoubleNear(1e-5), {1, 0, 2, 0, 3, 0, 4, 0}));
}

TEST(SpectralOpsTest, StftTransformsEachWindowedFrame) {
  // Signal 0..7, frames of 4 every 2 samples: (0..3), (2..5), (4..7). The DFT of
  // (a, a + 1, a + 2, a + 3) is (4a + 6, -2 + 2i, -2, ...), onesided 3 bins; a window of
  // (1, 0, 0, 0) leaves each frame's first sample in every bin.
  for (bool windowed : {false, true}) {
    OnnxModelBuilder b(17);
    b.Input("signal", {1, 8, 1}).Output("y");
    onnx::TensorProto* step = b.model().mutable_graph()->add_initializer();
    step->set_name("step");
    step->set_data_type(onnx::TensorProto::INT64);
    step->add_int64_data(2);
    onnx::TensorProto* length = b.model().mutable_graph()->add_initializer();
    length->set_name("length");
    length->set_data_type(onnx::TensorProto::INT64);
    length->add_int64_data(4);
    std::vector<loop::HostTensor> inputs = {
        loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7})};
    if (windowed) {
      b.Input("window", {4});
      inputs.push_back(loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 0, 0, 0}));
    }
    b.Node("STFT", {"signal", "step", windowed ? "window" : "", "length"}, {"y"}, "stft");
    std::vector<double> y = RunAll(b.Bytes(), inputs)[0];
    std::vector<double> expected;
    for (double a : {0.0, 2.0, 4.0}) {
      if (windowed) {
        expected.insert(expected.end(), {a, 0, a, 0, a, 0});
      } else {
        expected.insert(expected.end(), {4 * a + 6, 0, -2, 2, -2, 0});
      }
    }
    EXPECT_THAT(y, Pointwise(DoubleNear(1e-5), expected)) << (windowed ? "windowed" : "plain");
  }
}

// The frame step given at run time, for the declared [1, 3, 3, 2] output: step 2 gives the frames
// above (0..3), (2..5), (4..7), windowed by (1, 0, 0, 0): each frame's first sample in every bin.
// Step 3 would give 2 frames: the run fails.
TEST(SpectralOpsTest, AStftFrameStepGivenAtRunTimeMustGiveTheDeclaredFrames) {
  OnnxModelBuilder b(17);
  b.Input("signal", {1, 8, 1}).Input("step", {}, onnx::TensorProto::INT64).Input("window", {4});
  b.Output("y", {1, 3, 3, 2});
  b.Node("STFT", {"signal", "step", "window"}, {"y"}, "stft");
  auto inputs = [](double step) {
    return std::vector<loop::HostTensor>{
        loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7}),
        loop::HostTensor::FromDoubles(DataType::kInt64, {}, {step}),
        loop::HostTensor::FromDoubles(DataType::kFloat32, {4}, {1, 0, 0, 0})};
  };
  EXPECT_THAT(RunAll(b.Bytes(), inputs(2))[0],
              Pointwise(DoubleNear(1e-5), {0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 4, 0, 4, 0, 4, 0}));
  std::vector<absl::Status> failures = RunFailures(b.Bytes(), inputs(3));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(),
              ::testing::HasSubstr("input 1 (frame_step) must be at least 1 and give the 3 frames"));
}

// MelWeightMatrix from constant scalars. With both edges at 0 Hz every filter's edges and center
// fall in spectrogram bin 0: a one there (the center of a zero-width rise), zeros elsewhere.
std::string MelModel(int32_t mel_bins, int32_t dft_length, int32_t sample_rate, float upper) {
  OnnxModelBuilder b(17);
  b.Output("w");
  auto scalar = [&](const char* name, int32_t type, double v) {
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    if (type == onnx::TensorProto::FLOAT) {
      t->add_float_data(static_cast<float>(v));
    } else {
      t->add_int32_data(static_cast<int32_t>(v));
    }
  };
  scalar("bins", onnx::TensorProto::INT32, mel_bins);
  scalar("length", onnx::TensorProto::INT32, dft_length);
  scalar("rate", onnx::TensorProto::INT32, sample_rate);
  scalar("lower", onnx::TensorProto::FLOAT, 0);
  scalar("upper", onnx::TensorProto::FLOAT, upper);
  b.Node("MelWeightMatrix", {"bins", "length", "rate", "lower", "upper"}, {"w"}, "mel");
  return b.Bytes();
}

TEST(SpectralOpsTest, MelWeightMatrixOfZeroWidthFilters) {
  std::vector<double> w = RunAll(MelModel(2, 4, 8000, 0), {})[0];
  EXPECT_THAT(w, ElementsAreArray({1, 1, 0, 0, 0, 0}));  // [4 / 2 + 1, 2]
  // An upper edge past what 4 samples at 8 Hz resolve lands outside the spectrogram.
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(MelModel(2, 4, 8, 100), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), ::testing::HasSubstr("outside [0, 3)"));
}

// An empty signal with an extent near 2^61 (a 0 elsewhere keeps its element count 0) is refused
// where the importer reads it, before any frame arithmetic could overflow.
TEST(SpectralOpsTest, AnEmptyInputWithAHugeExtentIsRefused) {
  OnnxModelBuilder b(17);
  b.Input("signal", {0, (int64_t{1} << 61) + 7, 1}).Output("y");
  b.Node("STFT", {"signal", "step", "", "length"}, {"y"}, "stft");
  for (const char* name : {"step", "length"}) {
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(std::string(name) == "step" ? 1 : 8);
  }
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), ::testing::HasSubstr("has extent 2305843009213693959"));
}

TEST(SpectralOpsTest, OutOfRangeArgumentsAreErrors) {
  OnnxModelBuilder b(17);
  b.Input("x", {1, 4, 1}).Output("y");
  OnnxModelBuilder::IntAttr(b.Node("DFT", {"x"}, {"y"}, "dft"), "axis", 2);
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              ::testing::HasSubstr("ONNX node 'dft' (#0, DFT): attribute 'axis' must name a signal "
                                   "axis of input 0"));
}

// `op` with a constant size (an initializer), or, when `runtime_size` is set, with the size as a
// graph input and the output declared [size].
std::vector<double> Window(const std::string& op, int64_t size, bool periodic,
                           std::optional<int64_t> runtime_size = std::nullopt) {
  OnnxModelBuilder b(17);
  std::vector<loop::HostTensor> inputs;
  if (runtime_size) {
    b.Input("size", {}, onnx::TensorProto::INT64).Output("y", {size});
    inputs.push_back(loop::HostTensor::FromDoubles(DataType::kInt64, {},
                                                   {static_cast<double>(*runtime_size)}));
  } else {
    b.Output("y");
    onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("size");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(size);
  }
  OnnxModelBuilder::IntAttr(b.Node(op, {"size"}, {"y"}, "window"), "periodic", periodic ? 1 : 0);
  return RunAll(b.Bytes(), inputs)[0];
}

TEST(SpectralOpsTest, WindowFunctions) {
  EXPECT_THAT(Window("HannWindow", 4, true), Pointwise(DoubleNear(1e-6), std::vector<double>{0, 0.5, 1, 0.5}));
  // Symmetric: M = size - 1, so the last sample repeats the first.
  EXPECT_THAT(Window("HannWindow", 5, false), Pointwise(DoubleNear(1e-6), std::vector<double>{0, 0.5, 1, 0.5, 0}));
  // Hamming: a0 = 25/46; at n = 0, a0 - (1 - a0) = 4/46; at n = 1 of 2, a0 + (1 - a0) = 1.
  EXPECT_THAT(Window("HammingWindow", 2, true), Pointwise(DoubleNear(1e-6), std::vector<double>{4.0 / 46, 1}));
  // Blackman: 0.42 - 0.5 cos(phase) + 0.08 cos(2 phase) at phases 0, pi/2, pi, 3pi/2.
  EXPECT_THAT(Window("BlackmanWindow", 4, true), Pointwise(DoubleNear(1e-6), std::vector<double>{0, 0.34, 1, 0.34}));
}

TEST(SpectralOpsTest, AWindowSizeKnownOnlyAtRunTimeIsTheDeclaredLength) {
  EXPECT_THAT(Window("HannWindow", 4, true, 4), Pointwise(DoubleNear(1e-6), std::vector<double>{0, 0.5, 1, 0.5}));
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  OnnxModelBuilder b(17);
  b.Input("size", {}, onnx::TensorProto::INT64).Output("y", {4});
  b.Node("HannWindow", {"size"}, {"y"}, "window");
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::Status ran =
      RunBackend(*compiled, {loop::HostTensor::FromDoubles(DataType::kInt64, {}, {5})}, false)
          .status();
  EXPECT_THAT(ran.message(), ::testing::HasSubstr("input 0 must be the size 4"));
}

}  // namespace
}  // namespace kiln::driver
