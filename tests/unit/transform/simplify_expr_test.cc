// SimplifyExpr: each rewrite on a small function, the expected result written
// from the rewrite's definition; merged nodes carry the spans of all the
// nodes they replace, outermost first.
#include "engine/transform/simplify_expr.h"

#include <gtest/gtest.h>

#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Simplify(std::string_view text) {
  return RunPass(transform::SimplifyExpr(), ParseTyped(text));
}

TEST(SimplifyExprTest, ConsecutiveReshapesBecomeOneWithBothSpans) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x) /* si=e */;
  %1 = reshape(%0, newshape=[6]) /* si=r1 */;
  %2 = reshape(%1, newshape=[3, 2]) /* si=r2 */;
  nn.relu(%2) /* si=relu */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x) /* si=e */;
  %1 = reshape(%0, newshape=[3, 2]) /* si=[r2, r1] */;
  nn.relu(%1) /* si=relu */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(SimplifyExprTest, SqueezeReshapeExpandDimsChainBecomesOneReshape) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 6), float32]) {
  %0 = squeeze(%x, axis=[0]) /* si=sq */;
  %1 = reshape(%0, newshape=[2, 3]) /* si=r */;
  expand_dims(%1, axis=0) /* si=ex */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 6), float32]) {
  reshape(%x, newshape=[1, 2, 3]) /* si=[ex, r, sq] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, ReshapeToTheSameShapeIsRemoved) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = reshape(%x, newshape=[-1, 3]) /* si=r */;
  exp(%0) /* si=e */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  exp(%x) /* si=e */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, ReshapeChainBackToTheInputShapeVanishes) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = reshape(%x, newshape=[6]) /* si=flatten */;
  %1 = reshape(%0, newshape=[2, 3]) /* si=unflatten */;
  exp(%1) /* si=e */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  exp(%x) /* si=e */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, TransposePairThatCancelsIsRemoved) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 0, 2]) /* si=t1 */;
  %1 = transpose(%0, axes=[1, 0, 2]) /* si=t2 */;
  exp(%1) /* si=e */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  exp(%x) /* si=e */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, TransposePairComposesIntoOne) {
  // (A, B, C) -[1, 2, 0]-> (B, C, A) -[1, 2, 0]-> (C, A, B): x's axes 2, 0, 1.
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[1, 2, 0]) /* si=t1 */;
  transpose(%0, axes=[1, 2, 0]) /* si=t2 */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  transpose(%x, axes=[2, 0, 1]) /* si=[t2, t1] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, ReversingTransposeTwiceAndIdentityPermutationVanish) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = transpose(%x) /* si=t1 */;
  %1 = transpose(%0, axes=[-1, -2]) /* si=t2 */;
  %2 = transpose(%1, axes=[0, 1]) /* si=t3 */;
  exp(%2) /* si=e */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  exp(%x) /* si=e */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, WideningCastChainBecomesOneCast) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(4), float16]) {
  %0 = cast(%x, dtype=float32) /* si=c1 */;
  cast(%0, dtype=float64) /* si=c2 */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float16]) {
  cast(%x, dtype=float64) /* si=[c2, c1] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, CastThereAndBackThroughAWiderTypeVanishes) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(4), int8]) {
  %0 = cast(%x, dtype=int32) /* si=up */;
  %1 = cast(%0, dtype=int8) /* si=down */;
  %2 = cast(%1, dtype=int8) /* si=same */;
  negative(%2) /* si=n */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), int8]) {
  negative(%x) /* si=n */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyExprTest, ArithmeticIdentitiesAreRemoved) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, 1f) /* si=m */;
  %1 = add(0f, %0) /* si=a */;
  %2 = subtract(%1, 0f) /* si=s */;
  %3 = divide(%2, meta[Constant][0]) /* si=d */;
  exp(%3) /* si=e */
}

#[metadata]
meta[Constant][0] = Tensor[(3), float32] 0x0000803f0000803f0000803f;
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  exp(%x) /* si=e */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

// A convolution's bias then a batch norm's shift, both constants: one add of their sum
// (FoldConstant makes it one constant), both spans on the new nodes. Constant adds after
// anything but a convolution / dense / matmul, or with a non-constant operand, stay.
TEST(SimplifyExprTest, ConsecutiveConstantAddsAfterAConvolutionBecomeOne) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %w: Tensor[(2, 2, 1, 1), float32], %y: Tensor[(2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = add(%0, meta[Constant][0]) /* si=bias */;
  %2 = add(%1, 3f) /* si=shift */;
  %3 = add(%2, %y) /* si=residual */;
  %4 = add(%3, 1f) /* si=after */;
  %5 = add(%4, 2f) /* si=again */;
  exp(%5) /* si=e */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x0000803f0000803f;
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %w: Tensor[(2, 2, 1, 1), float32], %y: Tensor[(2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = add(meta[Constant][0], 3f) /* si=[shift, bias] */;
  %2 = add(%0, %1) /* si=[shift, bias] */;
  %3 = add(%2, %y) /* si=residual */;
  %4 = add(%3, 1f) /* si=after */;
  %5 = add(%4, 2f) /* si=again */;
  exp(%5) /* si=e */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 1, 1), float32] 0x0000803f0000803f;
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

}  // namespace
}  // namespace kiln
