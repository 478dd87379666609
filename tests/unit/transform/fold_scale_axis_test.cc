// FoldScaleAxis: per-channel scales move into conv / dense / matmul weights.
// Expected modules are written by hand from the algebra (a scale on output
// channel c multiplies weight slice c; a scale on input channel k multiplies
// the weights reading k), with the spans the rewrite promises. The cases
// that must not fold are lit cases (tests/lit/transform/fold_scale_axis.kir).
#include "engine/transform/fold_scale_axis.h"

#include <gtest/gtest.h>

#include "engine/pass/pass_registry.h"
#include "engine/transform/builtin_passes.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Fold(const IRModule& module) { return RunPass(transform::FoldScaleAxis(), module); }

// Every node but operator handles carries a checked type.
::testing::AssertionResult AllNodesTyped(const IRModule& module) {
  if (!module) return ::testing::AssertionFailure() << "missing module";
  int untyped = 0;
  for (const auto& entry : module->functions) {
    PostOrderVisit(entry.second, [&](const Expr& e) {
      if (!e.as<OpNode>() && !e->checked_type) ++untyped;
    });
  }
  if (untyped == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << untyped << " untyped nodes in\n" << PrintModule(module);
}

// Float32 constants in the metadata tables below, little-endian:
//   2.0 = 00000040, 0.5 = 0000003f, 3.0 = 00004040, 4.0 = 00008040,
//   1.0 = 0000803f, -1.0 = 000080bf.

TEST(FoldScaleAxisTest, ConvOutputScaleMovesIntoTheWeightAlongItsOutputChannels) {
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]) /* si=conv */;
  multiply(%0, meta[Constant][0] /* si=scale */) /* si=mul */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x000000400000003f;
)"));
  // The (C, 1, 1) scale becomes (C, 1, 1, 1): one factor per weight row O.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = reshape(meta[Constant][0] /* si=scale */, newshape=[2, 1, 1, 1]) /* si=[mul, conv] */;
  %1 = multiply(%w, %0) /* si=[mul, conv] */;
  nn.conv2d(%x, %1, padding=[1, 1]) /* si=[conv, mul] */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x000000400000003f;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllNodesTyped(out));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(FoldScaleAxisTest, ScaleOnTheLeftWithTheFourDimensionalShapeFoldsToo) {
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  multiply(meta[Constant][0], %0) /* si=mul */
}

#[metadata]
meta[Constant][0] = Tensor[(1, 2, 1, 1), float32] 0x000000400000003f;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = reshape(meta[Constant][0], newshape=[2, 1, 1, 1]) /* si=[mul, conv] */;
  %1 = multiply(%w, %0) /* si=[mul, conv] */;
  nn.conv2d(%x, %1) /* si=[conv, mul] */
}

#[metadata]
meta[Constant][0] = Tensor[(1, 2, 1, 1), float32] 0x000000400000003f;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, ScaleFoldsThroughABiasAddAndAReluWhenPositive) {
  // (relu(conv + b)) * s = relu(conv(w * s) + b * s) for s > 0.
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = add(%0, meta[Constant][0] /* si=bias */) /* si=add */;
  %2 = nn.relu(%1) /* si=relu */;
  multiply(%2, meta[Constant][1] /* si=scale */) /* si=mul */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x0000803f00004040;
meta[Constant][1] = Tensor[(2, 1, 1), float32] 0x000000400000003f;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = reshape(meta[Constant][1] /* si=scale */, newshape=[2, 1, 1, 1]) /* si=[mul, conv] */;
  %1 = multiply(%w, %0) /* si=[mul, conv] */;
  %2 = nn.conv2d(%x, %1) /* si=[conv, mul] */;
  %3 = multiply(meta[Constant][0] /* si=bias */, meta[Constant][1] /* si=scale */) /* si=[mul, add] */;
  %4 = add(%2, %3) /* si=[add, mul] */;
  nn.relu(%4) /* si=[relu, mul] */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x0000803f00004040;
meta[Constant][1] = Tensor[(2, 1, 1), float32] 0x000000400000003f;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllNodesTyped(out));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(FoldScaleAxisTest, BatchNormScaleAfterAnOnnxConvFoldsThroughBiasAdd) {
  // What SimplifyInference leaves of Conv(bias) + BatchNorm: the scale is an
  // expression of a constant (expand_dims), and may be negative without relu.
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32], %b: Tensor[(2), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = nn.bias_add(%0, %b) /* si=conv.bias */;
  %2 = expand_dims(meta[Constant][0], axis=1, num_newaxis=2) /* si=bn */;
  multiply(%1, %2) /* si=bn */
}

#[metadata]
meta[Constant][0] = Tensor[(2), float32] 0x00000040000080bf;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32], %b: Tensor[(2), float32]) {
  %0 = expand_dims(meta[Constant][0], axis=1, num_newaxis=2) /* si=bn */;
  %1 = reshape(%0, newshape=[2, 1, 1, 1]) /* si=[bn, conv] */;
  %2 = multiply(%w, %1) /* si=[bn, conv] */;
  %3 = nn.conv2d(%x, %2) /* si=[conv, bn] */;
  %4 = reshape(%0, newshape=[2]) /* si=[bn, conv.bias] */;
  %5 = multiply(%b, %4) /* si=[bn, conv.bias] */;
  nn.bias_add(%3, %5) /* si=[conv.bias, bn] */
}

#[metadata]
meta[Constant][0] = Tensor[(2), float32] 0x00000040000080bf;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllNodesTyped(out));
}

TEST(FoldScaleAxisTest, ScalarScaleOfAGroupedConvNeedsNoReshape) {
  // Backward folding scales output channels, which every group has whole.
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 1, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, groups=2) /* si=dw */;
  multiply(%0, 0.5f /* si=half */) /* si=mul */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 1, 3, 3), float32]) {
  %0 = multiply(%w, 0.5f /* si=half */) /* si=[mul, dw] */;
  nn.conv2d(%x, %0, groups=2) /* si=[dw, mul] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, TwoScalesInARowBothFoldAndTheSpansStayFlat) {
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = multiply(%0, 2f) /* si=m1 */;
  multiply(%1, 3f) /* si=m2 */
}
)"));
  // The second fold sees the conv rebuilt by the first, span [conv, m1].
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(%w, 2f) /* si=[m1, conv] */;
  %1 = multiply(%0, 3f) /* si=[m2, conv, m1] */;
  nn.conv2d(%x, %1) /* si=[conv, m1, m2] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, InputChannelScaleMovesIntoTheWeightAlongItsInputChannels) {
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(%x, meta[Constant][0] /* si=scale */) /* si=pre */;
  nn.conv2d(%0, %w, padding=[1, 1]) /* si=conv */
}

#[metadata]
meta[Constant][0] = Tensor[(3, 1, 1), float32] 0x000000400000003f00004040;
)"));
  // One factor per weight column I: (Cin, 1, 1) broadcast against the
  // (O, I, kH, kW) weight already lines up with I, so no reshape.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(%w, meta[Constant][0] /* si=scale */) /* si=[pre, conv] */;
  nn.conv2d(%x, %0, padding=[1, 1]) /* si=[conv, pre] */
}

#[metadata]
meta[Constant][0] = Tensor[(3, 1, 1), float32] 0x000000400000003f00004040;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllNodesTyped(out));
}

TEST(FoldScaleAxisTest, ForwardThenBackwardOnOneConv) {
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(4f, %x) /* si=pre */;
  %1 = nn.conv2d(%0, %w) /* si=conv */;
  multiply(%1, 0.5f) /* si=post */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(%w, 4f) /* si=[pre, conv] */;
  %1 = multiply(%0, 0.5f) /* si=[post, conv, pre] */;
  nn.conv2d(%x, %1) /* si=[conv, pre, post] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, DenseOutputScaleAndGemmBiasFoldIntoTheWeightRows) {
  // dense weight is (N, K): output feature n is row n, so s becomes (N, 1).
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32], %w: Tensor[(2, 3), float32], %b: Tensor[(2), float32]) {
  %0 = nn.dense(%x, %w) /* si=fc */;
  %1 = add(%0, %b) /* si=fc.bias */;
  multiply(%1, meta[Constant][0]) /* si=mul */
}

#[metadata]
meta[Constant][0] = Tensor[(2), float32] 0x0000004000004040;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32], %w: Tensor[(2, 3), float32], %b: Tensor[(2), float32]) {
  %0 = reshape(meta[Constant][0], newshape=[2, 1]) /* si=[mul, fc] */;
  %1 = multiply(%w, %0) /* si=[mul, fc] */;
  %2 = nn.dense(%x, %1) /* si=[fc, mul] */;
  %3 = multiply(%b, meta[Constant][0]) /* si=[mul, fc.bias] */;
  add(%2, %3) /* si=[fc.bias, mul] */
}

#[metadata]
meta[Constant][0] = Tensor[(2), float32] 0x0000004000004040;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllNodesTyped(out));
}

TEST(FoldScaleAxisTest, DenseInputScaleFoldsIntoTheWeightColumnsWithoutReshape) {
  // Input feature k meets column k of the (N, K) weight; a (K) scale already
  // broadcasts along the columns.
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32], %w: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, meta[Constant][0]) /* si=pre */;
  nn.dense(%0, %w) /* si=fc */
}

#[metadata]
meta[Constant][0] = Tensor[(3), float32] 0x000000400000003f00004040;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32], %w: Tensor[(2, 3), float32]) {
  %0 = multiply(%w, meta[Constant][0]) /* si=[pre, fc] */;
  nn.dense(%x, %0) /* si=[fc, pre] */
}

#[metadata]
meta[Constant][0] = Tensor[(3), float32] 0x000000400000003f00004040;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, MatmulByAConstantTransposedWeightScalesItsRows) {
  // With transpose_b, b is (N, K): output column n is b's row n.
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32]) {
  %0 = nn.matmul(%x, meta[Constant][0], transpose_b=True) /* si=mm */;
  multiply(%0, meta[Constant][1]) /* si=mul */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 3), float32] 0x0000803f0000803f0000803f0000803f0000803f0000803f;
meta[Constant][1] = Tensor[(2), float32] 0x000000400000003f;
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4, 3), float32]) {
  %0 = reshape(meta[Constant][1], newshape=[2, 1]) /* si=[mul, mm] */;
  %1 = multiply(meta[Constant][0], %0) /* si=[mul, mm] */;
  nn.matmul(%x, %1, transpose_b=True) /* si=[mm, mul] */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 3), float32] 0x0000803f0000803f0000803f0000803f0000803f0000803f;
meta[Constant][1] = Tensor[(2), float32] 0x000000400000003f;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, WithoutSIBuilderTheNewNodesHaveNoSpans) {
  PassContext context;
  ASSERT_TRUE(context.SetConfigFromAssignment("ir.enable_si_builder=false").ok());
  PassContext::Scope scope(context);
  IRModule out = Fold(ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  multiply(%0, 2f) /* si=mul */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(2, 3, 3, 3), float32]) {
  %0 = multiply(%w, 2f);
  nn.conv2d(%x, %0)
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FoldScaleAxisTest, IsRegisteredAtOptLevelThreeAfterInferType) {
  const Pass pass = transform::FoldScaleAxis();
  EXPECT_EQ(pass->info().name, "FoldScaleAxis");
  EXPECT_EQ(pass->info().opt_level, 3);
  EXPECT_EQ(pass->info().required, std::vector<std::string>{"InferType"});
  PassRegistry registry;
  RegisterBuiltinPasses(registry);
  const PassRegistration* registration = registry.Find("FoldScaleAxis");
  ASSERT_NE(registration, nullptr);
  EXPECT_EQ(registration->info.opt_level, 3);
}

}  // namespace
}  // namespace kiln
