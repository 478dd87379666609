// ConvertLayout end to end: a small CNN with the layers of the benchmark's families (a stem
// whose 3 input channels are read in blocks of 1, a 3x3 convolution with bias and relu, a
// strided depthwise convolution, a strided 1x1 shortcut added back, squeeze-excitation's global
// pool, sigmoid and channel multiply, max and average pooling with padding, a channel concat)
// compiled with the pass and without it. The NCHW convolutions are the oracle (checked against
// the ONNX backend tests by the conformance run): the blocked model must compute the same
// outputs natively, and must actually be blocked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "engine/printer/printer.h"
#include "tests/unit/frontend/onnx_builder.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln::driver {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<float> Values(int64_t n, double scale, double offset) {
  std::vector<float> values;
  for (int64_t i = 0; i < n; ++i) {
    values.push_back(static_cast<float>(offset + scale * static_cast<double>((i * 37) % 23)));
  }
  return values;
}

std::string SmallCnn() {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 3, 10, 12});
  b.Output("y");
  b.FloatInitializer("w0", {16, 3, 3, 3}, Values(16 * 27, 0.02, -0.2));
  b.FloatInitializer("w1", {16, 16, 3, 3}, Values(16 * 16 * 9, 0.01, -0.1));
  b.FloatInitializer("b1", {16}, Values(16, 0.05, -0.5));
  b.FloatInitializer("w2", {16, 1, 3, 3}, Values(16 * 9, 0.03, -0.3));
  b.FloatInitializer("w3", {16, 16, 1, 1}, Values(16 * 16, 0.02, -0.2));
  b.IntsAttr(b.Node("Conv", {"x", "w0"}, {"stem"}, "stem"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"stem"}, {"a"}, "stem_relu");
  b.IntsAttr(b.Node("Conv", {"a", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"}, "relu1");
  onnx::NodeProto& dw = b.Node("Conv", {"r1", "w2"}, {"dw"}, "depthwise");
  b.IntAttr(dw, "group", 16);
  b.IntsAttr(dw, "pads", {1, 1, 1, 1});
  b.IntsAttr(dw, "strides", {2, 2});
  b.IntsAttr(b.Node("Conv", {"a", "w3"}, {"short"}, "shortcut"), "strides", {2, 2});
  b.Node("Add", {"dw", "short"}, {"sum"}, "residual");
  b.Node("GlobalAveragePool", {"sum"}, {"pooled"}, "squeeze");
  b.Node("Sigmoid", {"pooled"}, {"gate"}, "gate");
  b.Node("Mul", {"sum", "gate"}, {"excited"}, "excite");
  onnx::NodeProto& max_pool = b.Node("MaxPool", {"sum"}, {"max"}, "max_pool");
  b.IntsAttr(max_pool, "kernel_shape", {3, 3});
  b.IntsAttr(max_pool, "pads", {1, 1, 1, 1});
  onnx::NodeProto& avg_pool = b.Node("AveragePool", {"max"}, {"avg"}, "avg_pool");
  b.IntsAttr(avg_pool, "kernel_shape", {3, 3});
  b.IntsAttr(avg_pool, "pads", {1, 1, 1, 1});  // edge windows divide by what they cover
  b.IntAttr(b.Node("Concat", {"excited", "avg"}, {"y"}, "concat"), "axis", 1);
  return b.Bytes();
}

// Blocks of 8 channels whatever the host's vector width, so the shapes below are this file's.
CompileResult Compile(const std::string& model, bool convert_layout) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.pipeline = kiln::driver::DefaultGraphPipeline(3, 8);
  if (!convert_layout) options.disabled_passes = {"ConvertLayout"};
  absl::StatusOr<CompileResult> compiled = CompileOnnx(model, options);
  KILN_CHECK(compiled.ok()) << compiled.status();
  return *std::move(compiled);
}

std::vector<double> RunOn(const CompileResult& compiled, const loop::HostTensor& x) {
  ModelTensors tensors = MakeModelTensors(compiled);
  tensors.inputs[0] = x;
  KILN_CHECK(RunNative(compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]}).ok());
  return tensors.outputs[0].ToDoubles();
}

// Runs both compiles on the same deterministic input of `shape`; every output element of
// `converted` must be within rtol = atol = 1e-5 of `reference`'s. Returns how many of the
// reference's elements are nonzero (so a caller can check the comparison means something).
int ExpectSameOutputs(const CompileResult& converted, const CompileResult& reference,
                      const std::vector<int64_t>& shape, size_t output_size) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  std::vector<float> input = Values(count, 0.1, -1.0);
  loop::HostTensor x = loop::HostTensor::FromDoubles(
      DataType::kFloat32, shape, std::vector<double>(input.begin(), input.end()));
  std::vector<double> expected = RunOn(reference, x);
  std::vector<double> actual = RunOn(converted, x);
  EXPECT_EQ(actual.size(), output_size);
  EXPECT_EQ(expected.size(), actual.size());
  int nonzero = 0;
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * (1 + std::abs(expected[i]))) << "element " << i;
    nonzero += expected[i] != 0;
  }
  return nonzero;
}

TEST(BlockedLayoutTest, BlockedCnnComputesWhatTheNchwOneDoes) {
  std::string model = SmallCnn();
  CompileResult blocked = Compile(model, true);
  CompileResult nchw = Compile(model, false);

  std::string text = PrintModule(blocked.optimized);
  // Every convolution is blocked: the stem (NCHW1c input), conv1, the depthwise one, the shortcut.
  size_t blocked_convs = 0;
  for (size_t at = text.find("nn.conv2d_nchwc("); at != std::string::npos;
       at = text.find("nn.conv2d_nchwc(", at + 1)) {
    ++blocked_convs;
  }
  EXPECT_EQ(blocked_convs, 4u) << text;
  EXPECT_THAT(text, HasSubstr("mean("));  // the global pool of a blocked value
  EXPECT_THAT(text, HasSubstr("nn.max_pool3d("));  // pooling over (H, W, block)
  EXPECT_THAT(text, HasSubstr("nn.avg_pool3d("));
  EXPECT_THAT(PrintModule(nchw.optimized), Not(HasSubstr("nchwc")));
  // Values stay blocked from the stem to the concat: one transform, back to NCHW at the output.
  size_t transforms = 0;
  for (size_t at = text.find("layout_transform("); at != std::string::npos;
       at = text.find("layout_transform(", at + 1)) {
    ++transforms;
  }
  EXPECT_EQ(transforms, 1u) << text;
  EXPECT_TRUE(testing::AllCallsHaveSpans(blocked.optimized));

  // Convolutions with an epilogue (bias, relu, residual add) accumulate one register tile at a
  // time (at most 16 vectors of 8), never a full-size intermediate.
  std::string loops = PrintModule(blocked.lowered->module);
  int tiles = 0;
  for (size_t at = loops.find("conv2d_nchwc = T.allocate(["); at != std::string::npos;
       at = loops.find("conv2d_nchwc = T.allocate([", at + 1)) {
    EXPECT_LE(std::stoll(loops.substr(at + std::strlen("conv2d_nchwc = T.allocate(["))), 128) << loops;
    ++tiles;
  }
  EXPECT_GE(tiles, 2) << loops;
  // The depthwise convolution reads its input with bounds tests instead of a padded copy (only
  // the stride-1 stem and conv1 pad), and LoopPartition leaves the tests to the border: the rows
  // after the first, [1, 5), run a loop of their own.
  int pads = 0;
  for (size_t at = loops.find("conv2d_nchwc_pad = T.allocate(["); at != std::string::npos;
       at = loops.find("conv2d_nchwc_pad = T.allocate([", at + 1)) {
    std::string line = loops.substr(at, loops.find('\n', at) - at);
    EXPECT_THAT(line, Not(HasSubstr("depthwise"))) << loops;
    ++pads;
  }
  EXPECT_EQ(pads, 2) << loops;
  size_t depthwise = loops.find("si=depthwise");
  ASSERT_NE(depthwise, std::string::npos);
  EXPECT_NE(loops.find("in range(1, 5)", depthwise), std::string::npos) << loops;

  int nonzero = ExpectSameOutputs(blocked, nchw, {1, 3, 10, 12}, 32 * 5 * 6);
  EXPECT_GT(nonzero, 100);  // the comparison means something
}

// The vector accumulators of the register tile with the most of them in `loops` (a lowered
// module's text), `lanes` floats each.
int64_t LargestConvTile(const std::string& loops, int64_t lanes) {
  int64_t largest = 0;
  const std::string tile = "conv2d_nchwc = T.allocate([";
  for (size_t at = loops.find(tile); at != std::string::npos; at = loops.find(tile, at + 1)) {
    largest = std::max<int64_t>(largest, std::stoll(loops.substr(at + tile.size())) / lanes);
  }
  return largest;
}

// A register tile must fit the target's vector registers with room for a reduce step's weight
// vectors and broadcast input: AVX-512 has 32 (a tile of 4 blocks x 4 columns, 16 vectors),
// AVX2 16 (a 16-vector tile spilled every reduce step: 2x slower models). Objects for either
// target are generated here whatever the host runs.
TEST(BlockedLayoutTest, RegisterTilesFitTheTargetsVectorRegisters) {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 64, 4, 32});
  b.Output("y");
  b.FloatInitializer("w", {64, 64, 1, 1}, Values(64 * 64, 0.01, -0.3));
  b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  b.Node("Relu", {"c"}, {"y"}, "relu");
  std::string model = b.Bytes();
  struct Case {
    const char* cpu;
    const char* features;
    int64_t lanes, accumulators;
  };
  for (const Case& c : {Case{"znver4", "", 16, 16}, Case{"x86-64-v3", "", 8, 8},
                        Case{"znver4", "-avx512f", 8, 8}}) {
    CompileOptions options;
    options.codegen = HostCodegenOptions();
    options.codegen->target = {"x86_64-linux-gnu", c.cpu, c.features};
    absl::StatusOr<CompileResult> compiled = CompileOnnx(model, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    std::string loops = PrintModule(compiled->lowered->module);
    // 16 registers leave at most 12 accumulators; of the tiles dividing 4 (64 channels in
    // blocks of 8: 8 blocks) x 32 columns that is 4 x 2.
    EXPECT_EQ(LargestConvTile(loops, c.lanes), c.accumulators) << c.cpu << c.features << loops;
  }
}

// ShuffleNet's and MobileNet's channel counts that do not fill blocks of 8 (12, 20): zero-padded
// to whole blocks, computed blocked through a depthwise convolution, hard-swish (add, clip,
// multiply, divide by 6) and pooling, and sliced back at the edge.
TEST(BlockedLayoutTest, ChannelsThatDoNotFillBlocksArePadded) {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 3, 9, 10});
  b.Output("y");
  b.FloatInitializer("w0", {12, 3, 3, 3}, Values(12 * 27, 0.02, -0.2));
  b.FloatInitializer("w1", {12, 1, 3, 3}, Values(12 * 9, 0.03, -0.3));
  b.FloatInitializer("w2", {20, 12, 1, 1}, Values(20 * 12, 0.05, -0.5));
  b.FloatInitializer("b2", {20}, Values(20, 0.1, -1.0));
  b.FloatInitializer("three", {}, {3.0f});
  b.FloatInitializer("six", {}, {6.0f});
  b.IntsAttr(b.Node("Conv", {"x", "w0"}, {"c0"}, "stem"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c0"}, {"r0"}, "stem_relu");
  onnx::NodeProto& dw = b.Node("Conv", {"r0", "w1"}, {"c1"}, "depthwise");
  b.IntAttr(dw, "group", 12);
  b.IntsAttr(dw, "pads", {1, 1, 1, 1});
  b.Node("Conv", {"c1", "w2", "b2"}, {"c2"}, "project");
  b.Node("Add", {"c2", "three"}, {"shifted"}, "hswish_add");
  b.FloatInitializer("zero", {}, {0.0f});
  b.Node("Clip", {"shifted", "zero", "six"}, {"clipped"}, "hswish_clip");
  b.Node("Mul", {"c2", "clipped"}, {"scaled"}, "hswish_mul");
  b.Node("Div", {"scaled", "six"}, {"hswish"}, "hswish_div");
  onnx::NodeProto& pool = b.Node("MaxPool", {"hswish"}, {"y"}, "pool");
  b.IntsAttr(pool, "kernel_shape", {2, 2});
  b.IntsAttr(pool, "strides", {2, 2});
  std::string model = b.Bytes();
  CompileResult blocked = Compile(model, true);
  CompileResult nchw = Compile(model, false);
  std::string text = PrintModule(blocked.optimized);
  EXPECT_THAT(text, HasSubstr("nn.conv2d_nchwc("));
  EXPECT_THAT(text, HasSubstr("nn.max_pool3d("));   // the pool ran blocked, padded
  EXPECT_THAT(text, HasSubstr("strided_slice("));  // 20 channels sliced from 24 at the output
  EXPECT_TRUE(testing::AllCallsHaveSpans(blocked.optimized));
  int nonzero = ExpectSameOutputs(blocked, nchw, {1, 3, 9, 10}, 20 * 4 * 5);
  EXPECT_GT(nonzero, 40);
}

// EfficientNet's stride-2 depthwise convolution on a small image (96 channels, 16x16 -> 8x8): 12
// channel blocks, too few to run in parallel, so the output rows are split for the parallel loop;
// rows exactly one register tile wide, so the convolution is computed per row (now per inner
// row). Swish is fused. The whole-network numerics test found the scheduler refusing it.
TEST(BlockedLayoutTest, ADepthwiseConvolutionOneTileWideWithFewBlocksIsComputedPerRow) {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 96, 16, 16});
  b.Output("y");
  b.FloatInitializer("w", {96, 1, 3, 3}, Values(96 * 9, 0.03, -0.3));
  onnx::NodeProto& dw = b.Node("Conv", {"x", "w"}, {"c"}, "depthwise");
  b.IntAttr(dw, "group", 96);
  b.IntsAttr(dw, "pads", {1, 1, 1, 1});
  b.IntsAttr(dw, "strides", {2, 2});
  b.Node("Sigmoid", {"c"}, {"gate"}, "swish_sigmoid");
  b.Node("Mul", {"c", "gate"}, {"y"}, "swish_mul");
  std::string model = b.Bytes();
  CompileResult blocked = Compile(model, true);
  CompileResult nchw = Compile(model, false);
  EXPECT_THAT(PrintModule(blocked.optimized), HasSubstr("nn.conv2d_nchwc("));
  int nonzero = ExpectSameOutputs(blocked, nchw, {1, 96, 16, 16}, 96 * 8 * 8);
  EXPECT_GT(nonzero, 96 * 8 * 4);
}

// A dense 3x3 stride-2 convolution reads its padding inline: no padded copy of the input (the
// copy was memory-bound work a second thread did not speed up), and the outputs are the NCHW
// convolution's.
TEST(BlockedLayoutTest, AStridedConvolutionReadsItsPaddingInline) {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, 16, 14, 14});
  b.Output("y");
  b.FloatInitializer("w", {24, 16, 3, 3}, Values(24 * 16 * 9, 0.01, -0.1));
  b.FloatInitializer("c", {24}, Values(24, 0.05, -0.5));
  onnx::NodeProto& conv = b.Node("Conv", {"x", "w", "c"}, {"s"}, "strided");
  b.IntsAttr(conv, "pads", {1, 1, 1, 1});
  b.IntsAttr(conv, "strides", {2, 2});
  b.Node("Relu", {"s"}, {"y"}, "relu");
  std::string model = b.Bytes();
  CompileResult blocked = Compile(model, true);
  CompileResult nchw = Compile(model, false);
  EXPECT_THAT(PrintModule(blocked.optimized), HasSubstr("nn.conv2d_nchwc("));
  std::string loops = PrintModule(blocked.lowered->module);
  EXPECT_EQ(loops.find("_pad = T.allocate("), std::string::npos) << loops;
  int nonzero = ExpectSameOutputs(blocked, nchw, {1, 16, 14, 14}, 24 * 7 * 7);
  EXPECT_GT(nonzero, 24 * 7 * 7 / 4);
}

// A classifier's Gemm (weight (N, K), transB): nn.dense, rewritten to nn.matmul over the weight
// transposed at compile time, or over packed panels; the same outputs as the dense kernel's.
// x (rows, 24) times a weight of `outputs` outputs plus a bias: an ONNX Gemm with transB.
std::string Classifier(int64_t rows, int64_t outputs = 40) {
  testing::OnnxModelBuilder b;
  b.Input("x", {rows, 24});
  b.Output("y");
  b.FloatInitializer("w", {outputs, 24}, Values(outputs * 24, 0.05, -0.5));
  b.FloatInitializer("c", {outputs}, Values(outputs, 0.1, -1.0));
  b.IntAttr(b.Node("Gemm", {"x", "w", "c"}, {"y"}, "classifier"), "transB", 1);
  return b.Bytes();
}

// Two rows times 24 outputs, fewer than a tile of 4 panels of 8 (packed, 3/4 of the products
// would be zero columns): the weight is only transposed, (24, 24) read as (K, N).
TEST(BlockedLayoutTest, DenseNarrowerThanATileOfPanelsBecomesAMatmulOverTheTransposedWeight) {
  std::string model = Classifier(2, 24);
  CompileResult converted = Compile(model, true);
  CompileResult dense = Compile(model, false);
  std::string text = PrintModule(converted.optimized);
  EXPECT_THAT(text, HasSubstr("nn.matmul("));
  EXPECT_THAT(text, Not(HasSubstr("strided_slice(")));
  EXPECT_THAT(text, Not(HasSubstr("nn.dense(")));
  EXPECT_THAT(PrintModule(dense.optimized), HasSubstr("nn.dense("));
  EXPECT_GT(ExpectSameOutputs(converted, dense, {2, 24}, 48), 24);
}

// One row (a classifier at batch 1) times a weight of 40 outputs: packed at compile time into
// panels of 8 outputs, (40 rounded up to a tile of 4 panels = 64) x K x 8, multiplied as
// nn.matmul, reordered and sliced back to 40; the same outputs as the dense kernel's.
TEST(BlockedLayoutTest, OneRowTimesAWeightReadsPackedPanels) {
  std::string model = Classifier(1);
  CompileResult converted = Compile(model, true);
  CompileResult dense = Compile(model, false);
  std::string text = PrintModule(converted.optimized);
  EXPECT_THAT(text, HasSubstr("Tensor[(8, 24, 8), float32]"));  // the panels
  EXPECT_THAT(text, HasSubstr("strided_slice("));
  EXPECT_THAT(text, Not(HasSubstr("nn.dense(")));
  EXPECT_GT(ExpectSameOutputs(converted, dense, {1, 24}, 40), 20);
}

// Three rows times 40 outputs (at least a tile of panels): the same panels, the product
// (8 panels, 3 rows, 8), reordered to (3, 64) and sliced back to 40.
TEST(BlockedLayoutTest, RowsTimesAWideWeightReadPackedPanels) {
  std::string model = Classifier(3);
  CompileResult converted = Compile(model, true);
  CompileResult dense = Compile(model, false);
  std::string text = PrintModule(converted.optimized);
  EXPECT_THAT(text, HasSubstr("Tensor[(8, 24, 8), float32]"));  // the panels
  EXPECT_THAT(text, HasSubstr("Tensor[(8, 3, 8), float32]"));   // the product over them
  EXPECT_THAT(text, HasSubstr("strided_slice("));
  EXPECT_GT(ExpectSameOutputs(converted, dense, {3, 24}, 120), 60);
}

// An ONNX MatMul of x (2, 5, 16) by a constant (16, 40) (a transformer's projection, the weight
// stored (K, N)): its 10 rows over panels packed from (K, N), (8, 16, 8); the product (8, 10, 8);
// the same outputs as the unpacked matmul's.
TEST(BlockedLayoutTest, MatmulByAConstantWeightReadsPackedPanels) {
  testing::OnnxModelBuilder b;
  b.Input("x", {2, 5, 16});
  b.Output("y");
  b.FloatInitializer("w", {16, 40}, Values(16 * 40, 0.05, -0.5));
  b.Node("MatMul", {"x", "w"}, {"y"}, "projection");
  std::string model = b.Bytes();
  CompileResult converted = Compile(model, true);
  CompileResult unpacked = Compile(model, false);
  std::string text = PrintModule(converted.optimized);
  EXPECT_THAT(text, HasSubstr("Tensor[(8, 16, 8), float32]"));  // the panels
  EXPECT_THAT(text, HasSubstr("Tensor[(8, 10, 8), float32]"));  // the product over them
  EXPECT_THAT(PrintModule(unpacked.optimized), HasSubstr("Tensor[(16, 40), float32]"));
  EXPECT_GT(ExpectSameOutputs(converted, unpacked, {2, 5, 16}, 400), 200);
}

// A Gemm with transA (x stored (K, rows)) by a constant (K, N) weight imports as nn.matmul with
// transpose_a: its operands are read otherwise, so it stays as it is, with the same outputs.
TEST(BlockedLayoutTest, AMatmulWithTransposedOperandsStaysUnpacked) {
  testing::OnnxModelBuilder b;
  b.Input("x", {24, 3});
  b.Output("y");
  b.FloatInitializer("w", {24, 40}, Values(24 * 40, 0.05, -0.5));
  b.IntAttr(b.Node("Gemm", {"x", "w"}, {"y"}, "transposed"), "transA", 1);
  std::string model = b.Bytes();
  CompileResult converted = Compile(model, true);
  CompileResult unpacked = Compile(model, false);
  std::string text = PrintModule(converted.optimized);
  EXPECT_THAT(text, HasSubstr("transpose_a=True"));
  EXPECT_THAT(text, HasSubstr("Tensor[(24, 40), float32]"));  // the weight as it was
  EXPECT_GT(ExpectSameOutputs(converted, unpacked, {24, 3}, 120), 60);
}

}  // namespace
}  // namespace kiln::driver
