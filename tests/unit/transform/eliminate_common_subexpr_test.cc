// EliminateCommonSubexpr: equal values merge into the first occurrence, whose
// span becomes the SequentialSpan of every merged node.
#include "engine/transform/eliminate_common_subexpr.h"

#include <gtest/gtest.h>

#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Cse(std::string_view text) {
  return RunPass(transform::EliminateCommonSubexpr(), ParseTyped(text));
}

TEST(EliminateCommonSubexprTest, EqualCallsMergeAndKeepEverySpan) {
  IRModule out = Cse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=e1 */;
  %1 = exp(%x) /* si=e2 */;
  %2 = add(%0, 1f /* si=c1 */) /* si=a1 */;
  %3 = add(%1, 1f /* si=c2 */) /* si=a2 */;
  %4 = exp(%x) /* si=e3 */;
  (%2, %3, %4)
}
)");
  // The adds become equal once their operands merged: merging cascades.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=[e1, e2, e3] */;
  %1 = add(%0, 1f /* si=[c1, c2] */) /* si=[a1, a2] */;
  (%1, %1, %0)
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(EliminateCommonSubexprTest, AttributesCompareAfterNormalization) {
  IRModule out = Cse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = nn.leaky_relu(%x) /* si=default */;
  %1 = nn.leaky_relu(%x, alpha=0.01f) /* si=explicit */;
  %2 = nn.leaky_relu(%x, alpha=0.2f) /* si=other */;
  (%0, %1, %2)
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = nn.leaky_relu(%x, alpha=0.01f) /* si=[default, explicit] */;
  %1 = nn.leaky_relu(%x, alpha=0.2f) /* si=other */;
  (%0, %0, %1)
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(EliminateCommonSubexprTest, TuplesAndProjectionsMerge) {
  IRModule out = Cse(R"(
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %0 = (%x, %y) /* si=t1 */;
  %1 = (%x, %y) /* si=t2 */;
  %2 = %0.1 /* si=g1 */;
  %3 = %1.1 /* si=g2 */;
  add(%2, %3) /* si=sum */
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %0 = (%x, %y) /* si=[t1, t2] */;
  %1 = %0.1 /* si=[g1, g2] */;
  add(%1, %1) /* si=sum */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(EliminateCommonSubexprTest, NestedFunctionsAreHandledOnTheirOwn) {
  IRModule out = Cse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=outer */;
  %1 = fn (%p: Tensor[(4), float32]) {
    %2 = negative(%p) /* si=n1 */;
    %3 = negative(%p) /* si=n2 */;
    %4 = exp(%x) /* si=inner */;
    %5 = add(%2, %3) /* si=a */;
    multiply(%5, %4) /* si=m */
  };
  %1(%0) /* si=call */
}
)");
  // The inner exp(%x) equals the outer one but stays inside its function.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=outer */;
  %1 = fn (%p: Tensor[(4), float32]) {
    %2 = negative(%p) /* si=[n1, n2] */;
    %4 = exp(%x) /* si=inner */;
    %5 = add(%2, %2) /* si=a */;
    multiply(%5, %4) /* si=m */
  };
  %1(%0) /* si=call */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(EliminateCommonSubexprTest, DisabledSIBuilderKeepsTheFirstSpan) {
  PassContext context;
  ASSERT_TRUE(context.SetConfig(kConfigEnableSIBuilder, false).ok());
  PassContext::Scope scope(context);
  IRModule out = Cse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=e1 */;
  %1 = exp(%x) /* si=e2 */;
  (%0, %1)
}
)");
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=e1 */;
  (%0, %0)
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

}  // namespace
}  // namespace kiln
