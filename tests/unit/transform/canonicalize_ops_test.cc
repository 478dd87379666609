// CanonicalizeOps: nn.bias_add becomes a broadcast add whose every new node
// carries the bias_add's span.
#include "engine/transform/canonicalize_ops.h"

#include <gtest/gtest.h>

#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

TEST(CanonicalizeOpsTest, BiasAddBecomesBroadcastAdd) {
  IRModule out = RunPass(transform::CanonicalizeOps(), ParseTyped(R"(
def @main(%x: Tensor[(1, 4, 6, 6), float32], %b: Tensor[(4), float32]) {
  %0 = nn.bias_add(%x, %b) /* si=bias */;
  nn.relu(%0) /* si=relu */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 4, 6, 6), float32], %b: Tensor[(4), float32]) {
  %0 = expand_dims(%b, axis=1, num_newaxis=2) /* si=bias */;
  %1 = add(%x, %0) /* si=bias */;
  nn.relu(%1) /* si=relu */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
  const auto* relu = out->Lookup("main").as<FunctionNode>()->body.as<CallNode>();
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->args[0]->checked_type);
}

TEST(CanonicalizeOpsTest, BiasOnTheLastAxisNeedsNoExpandDims) {
  IRModule out = RunPass(transform::CanonicalizeOps(), ParseTyped(R"(
def @main(%x: Tensor[(2, 8), float32], %b: Tensor[(8), float32]) {
  nn.bias_add(%x, %b, axis=-1) /* si=fc_bias */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(2, 8), float32], %b: Tensor[(8), float32]) {
  add(%x, %b) /* si=fc_bias */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

}  // namespace
}  // namespace kiln
