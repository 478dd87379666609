// FuseOps, DefuseOps and LabelOps: fusion by pattern kind over the
// post-dominator tree, spans on every fused call, and the round trip back.
#include "engine/transform/fuse_ops.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/ir/expr_visitor.h"
#include "engine/transform/defuse_ops.h"
#include "engine/transform/infer_type.h"
#include "engine/transform/label_ops.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Fuse(const IRModule& module, int64_t level = 2, int64_t max_depth = 256) {
  return RunPass(transform::FuseOps(level, max_depth), module);
}

std::vector<const FunctionNode*> PrimitiveFunctions(const IRModule& module) {
  std::vector<const FunctionNode*> result;
  PostOrderVisit(module->Lookup("main"), [&](const Expr& expr) {
    const auto* func = expr.as<FunctionNode>();
    if (func != nullptr && func->HasNonzeroAttr(kAttrPrimitive)) result.push_back(func);
  });
  return result;
}

constexpr char kConvAddRelu[] = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = add(%0, %b) /* si=bias */;
  nn.relu(%1) /* si=relu */
}
)";

TEST(FuseOpsTest, ConvAddReluFuseIntoOneGroupAtLevel2) {
  IRModule out = Fuse(ParseTyped(kConvAddRelu));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4, 1, 1), float32]) {
  %0 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(4, 1, 1), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    %1 = nn.conv2d(%p0, %p1) /* si=conv */;
    %2 = add(%1, %p2) /* si=bias */;
    nn.relu(%2) /* si=relu */
  } /* si=[conv, bias, relu] */;
  %0(%x, %w, %b) /* si=[conv, bias, relu] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
  // The fused call's span is the SequentialSpan of its members, in post-order.
  const auto* call = out->Lookup("main").as<FunctionNode>()->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(SpanSourceNames(call->span), (std::vector<std::string>{"conv", "bias", "relu"}));
  // Built typed: no InferType needed after it.
  EXPECT_TRUE(call->checked_type);
  EXPECT_TRUE(call->op->checked_type);
}

TEST(FuseOpsTest, EveryOpIsItsOwnGroupAtLevel0) {
  IRModule out = Fuse(ParseTyped(kConvAddRelu), /*level=*/0);
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4, 1, 1), float32]) {
  %0 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    nn.conv2d(%p0, %p1) /* si=conv */
  } /* si=conv */;
  %1 = %0(%x, %w) /* si=conv */;
  %2 = fn (%p0: Tensor[(1, 4, 6, 6), float32] /* si=conv */, %p1: Tensor[(4, 1, 1), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    add(%p0, %p1) /* si=bias */
  } /* si=bias */;
  %3 = %2(%1, %b) /* si=bias */;
  %4 = fn (%p0: Tensor[(1, 4, 6, 6), float32] /* si=bias */, Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    nn.relu(%p0) /* si=relu */
  } /* si=relu */;
  %4(%3) /* si=relu */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(FuseOpsTest, DiamondFusesIntoItsPostDominator) {
  // %0 has two users; both paths to their common post-dominator are
  // elementwise, so the whole diamond is one group. The scalar is inlined.
  IRModule out = Fuse(ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = add(%x, 1f) /* si=a */;
  %1 = exp(%0) /* si=b */;
  %2 = sqrt(%0) /* si=c */;
  multiply(%1, %2) /* si=d */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
    %1 = add(%p0, 1f) /* si=a */;
    %2 = exp(%1) /* si=b */;
    %3 = sqrt(%1) /* si=c */;
    multiply(%2, %3) /* si=d */
  } /* si=[a, b, c, d] */;
  %0(%x) /* si=[a, b, c, d] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FuseOpsTest, OpaqueOpOnOneBranchBlocksTheDiamond) {
  // nn.softmax is opaque: it stays alone, and %0 cannot reach its
  // post-dominator through it; the other branch still fuses into the sink.
  IRModule out = Fuse(ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = add(%x, 1f) /* si=a */;
  %1 = nn.softmax(%0) /* si=b */;
  %2 = sqrt(%0) /* si=c */;
  multiply(%1, %2) /* si=d */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
    add(%p0, 1f) /* si=a */
  } /* si=a */;
  %1 = %0(%x) /* si=a */;
  %2 = fn (%p0: Tensor[(4), float32] /* si=a */, Primitive=1) -> Tensor[(4), float32] {
    nn.softmax(%p0) /* si=b */
  } /* si=b */;
  %3 = %2(%1) /* si=b */;
  %4 = fn (%p0: Tensor[(4), float32] /* si=a */, %p1: Tensor[(4), float32] /* si=b */, Primitive=1) -> Tensor[(4), float32] {
    %5 = sqrt(%p0) /* si=c */;
    multiply(%p1, %5) /* si=d */
  } /* si=[c, d] */;
  %4(%1, %3) /* si=[c, d] */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(FuseOpsTest, ReductionTakesItsElementwiseProducerButNotItsUser) {
  IRModule out = Fuse(ParseTyped(R"(
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = exp(%x) /* si=e */;
  %1 = sum(%0, axis=[1]) /* si=s */;
  nn.relu(%1) /* si=r */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = fn (%p0: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(4), float32] {
    %1 = exp(%p0) /* si=e */;
    sum(%1, axis=[1]) /* si=s */
  } /* si=[e, s] */;
  %2 = %0(%x) /* si=[e, s] */;
  %3 = fn (%p0: Tensor[(4), float32] /* si=[e, s] */, Primitive=1) -> Tensor[(4), float32] {
    nn.relu(%p0) /* si=r */
  } /* si=r */;
  %3(%2) /* si=r */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(FuseOpsTest, NonScalarConstantsStayArguments) {
  IRModule out = Fuse(ParseTyped(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = add(%x, meta[Constant][0] /* si=w */) /* si=a */;
  nn.relu(%0) /* si=r */
}

#[metadata]
meta[Constant][0] = Tensor[(2), float32] 0x0000803f0000803f;
)"));
  ASSERT_TRUE(out);
  const auto* call = out->Lookup("main").as<FunctionNode>()->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_TRUE(call->args[1].as<ConstantNode>());
}

TEST(FuseOpsTest, FuseThenDefuseGivesTheInputBack) {
  for (const char* text : {kConvAddRelu, R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = add(%x, 1f) /* si=a */;
  %1 = nn.softmax(%0) /* si=b */;
  %2 = sqrt(%0) /* si=c */;
  %3 = (%1, %2) /* si=t */;
  %4 = %3.0 /* si=g */;
  multiply(%4, %2) /* si=d */
}
)"}) {
    IRModule input = ParseTyped(text);
    for (int64_t level : {0, 2}) {
      IRModule fused = Fuse(input, level);
      IRModule back = RunPass(transform::DefuseOps(), fused);
      EXPECT_TRUE(EqualWithSpans(back, input)) << "fuse_opt_level=" << level;
      EXPECT_TRUE(PrimitiveFunctions(back).empty());
    }
  }
}

TEST(FuseOpsTest, LabelOpsNamesFusedFunctionsAfterTheirOps) {
  IRModule out = RunPass(transform::LabelOps(), Fuse(ParseTyped(kConvAddRelu)));
  ASSERT_TRUE(out);
  std::vector<const FunctionNode*> fused = PrimitiveFunctions(out);
  ASSERT_EQ(fused.size(), 1u);
  const AttrValue* name = fused[0]->attrs->Find("name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(name->get<std::string>(), "fused_nn_conv2d_add_nn_relu");
  // Naming is idempotent.
  IRModule again = RunPass(transform::LabelOps(), out);
  EXPECT_TRUE(again.same_as(out));
}

TEST(FuseOpsTest, LongElementwiseChainFusesInBoundedGroups) {
  constexpr int kLength = 20000;
  constexpr int64_t kMaxDepth = 256;
  Var x = MakeVar("x", MakeTensorType({4}, DataType::kFloat32));
  Expr chain = x;
  for (int i = 0; i < kLength; ++i) {
    chain = MakeCall(GetOp(i % 2 == 0 ? "exp" : "negative"), {chain}, nullptr,
                     MakeSpan("n" + std::to_string(i)));
  }
  IRModule input = RunPass(transform::InferType(), MakeModuleFromMain(MakeFunction({x}, chain)));
  IRModule out = Fuse(input, 2, kMaxDepth);
  ASSERT_TRUE(out);
  std::vector<const FunctionNode*> fused = PrimitiveFunctions(out);
  EXPECT_EQ(fused.size(), static_cast<size_t>((kLength + kMaxDepth - 1) / kMaxDepth));
  for (const FunctionNode* func : fused) {
    int calls = 0;
    PostOrderVisit(func->body, [&](const Expr& e) { calls += e.as<CallNode>() ? 1 : 0; });
    EXPECT_LE(calls, kMaxDepth);
  }
  EXPECT_TRUE(AllCallsHaveSpans(out));
  IRModule labeled = RunPass(transform::LabelOps(), out);
  ASSERT_TRUE(labeled);
  IRModule back = RunPass(transform::DefuseOps(), labeled);
  EXPECT_TRUE(EqualWithSpans(back, input));
}

}  // namespace
}  // namespace kiln
