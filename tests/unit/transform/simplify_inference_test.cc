// SimplifyInference: the unpacked forms of the normalization ops, written by
// hand from the formulas in simplify_inference.cc, every new node with the
// span of the op it replaces.
#include "engine/transform/simplify_inference.h"

#include <gtest/gtest.h>

#include "engine/transform/infer_type.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Simplify(std::string_view text) {
  return RunPass(transform::SimplifyInference(), ParseTyped(text));
}

TEST(SimplifyInferenceTest, BatchNormUnpacksWithTheBatchNormSpanOnEveryNewNode) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.001f) /* si=bn1 */;
  nn.relu(%0) /* si=relu1 */
}
)");
  // scale = rsqrt(v + eps) * g; shift = b - m * scale; x * scale[:, None, None] + shift[:, None, None]
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = add(%v, 0.001f /* si=bn1 */) /* si=bn1 */;
  %1 = rsqrt(%0) /* si=bn1 */;
  %2 = multiply(%1, %g) /* si=bn1 */;
  %3 = expand_dims(%2, axis=1, num_newaxis=2) /* si=bn1 */;
  %4 = multiply(%x, %3) /* si=bn1 */;
  %5 = multiply(%m, %2) /* si=bn1 */;
  %6 = subtract(%b, %5) /* si=bn1 */;
  %7 = expand_dims(%6, axis=1, num_newaxis=2) /* si=bn1 */;
  %8 = add(%4, %7) /* si=bn1 */;
  nn.relu(%8) /* si=relu1 */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(SimplifyInferenceTest, BatchNormOnTheLastAxisNeedsNoExpandDims) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(4, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  nn.batch_norm(%x, %g, %b, %m, %v, axis=-1) /* si=bn */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4, 2), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = add(%v, 1e-05f /* si=bn */) /* si=bn */;
  %1 = rsqrt(%0) /* si=bn */;
  %2 = multiply(%1, %g) /* si=bn */;
  %3 = multiply(%x, %2) /* si=bn */;
  %4 = multiply(%m, %2) /* si=bn */;
  %5 = subtract(%b, %4) /* si=bn */;
  add(%3, %5) /* si=bn */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

// layer_norm's compute is one row-wise kernel (te::kRowNormalizationTag): unpacked it would be
// four, each reading the whole tensor.
TEST(SimplifyInferenceTest, LayerNormStaysOneOp) {
  const char* text = R"(
def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3, 4), float32], %b: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=pre */;
  nn.layer_norm(%0, %g, %b, axis=1) /* si=ln */
}
)";
  IRModule out = Simplify(text);
  EXPECT_TRUE(EqualWithSpans(out, ParseTyped(text)));
}

TEST(SimplifyInferenceTest, InstanceNormNormalizesEachChannelOverSpatialAxes) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  nn.instance_norm(%x, %g, %b) /* si=in */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = mean(%x, axis=[2, 3], keepdims=True) /* si=in */;
  %1 = subtract(%x, %0) /* si=in */;
  %2 = multiply(%1, %1) /* si=in */;
  %3 = mean(%2, axis=[2, 3], keepdims=True) /* si=in */;
  %4 = add(%3, 1e-05f /* si=in */) /* si=in */;
  %5 = rsqrt(%4) /* si=in */;
  %6 = multiply(%1, %5) /* si=in */;
  %7 = expand_dims(%g, axis=1, num_newaxis=2) /* si=in */;
  %8 = multiply(%6, %7) /* si=in */;
  %9 = expand_dims(%b, axis=1, num_newaxis=2) /* si=in */;
  add(%8, %9) /* si=in */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(SimplifyInferenceTest, NewNodesAreTyped) {
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float16], %g: Tensor[(2), float16], %b: Tensor[(2), float16], %m: Tensor[(2), float16], %v: Tensor[(2), float16]) {
  nn.batch_norm(%x, %g, %b, %m, %v) /* si=bn */
}
)");
  ASSERT_TRUE(out);
  int untyped = 0, calls = 0;
  PostOrderVisit(out->Lookup("main"), [&](const Expr& e) {
    if (e.as<OpNode>()) return;
    untyped += e->checked_type ? 0 : 1;
    calls += e.as<CallNode>() ? 1 : 0;
  });
  EXPECT_EQ(untyped, 0);
  EXPECT_EQ(calls, 9);
  // A further InferType has nothing to do.
  IRModule again = RunPass(transform::InferType(), out);
  EXPECT_TRUE(again.same_as(out));
}

TEST(SimplifyInferenceTest, DisabledSIBuilderLeavesNewNodesWithoutSpans) {
  PassContext context;
  ASSERT_TRUE(context.SetConfig(kConfigEnableSIBuilder, false).ok());
  PassContext::Scope scope(context);
  IRModule out = Simplify(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  nn.instance_norm(%x, %g, %b) /* si=in */
}
)");
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->Lookup("main").as<FunctionNode>()->body->span);
}

}  // namespace
}  // namespace kiln
