// The loop IR's construction rules: typing, broadcasting, sequence flattening,
// and that the mutator shares what it does not change.
#include <gtest/gtest.h>

#include "engine/loop/functor.h"
#include "engine/loop/prim_func.h"

namespace kiln::loop {
namespace {

TEST(LoopIrTest, ComparisonsAreBoolAndScalarsBroadcastToVectors) {
  Var i = MakeVar("i");
  PrimExpr lt = i < IntImm(4);
  EXPECT_EQ(lt->type, kBoolType);
  PrimExpr ramp = MakeRamp(i, IntImm(1), 8);
  PrimExpr sum = ramp + IntImm(3);
  EXPECT_EQ(sum->type, (PrimType{DataType::kInt64, 8}));
  EXPECT_EQ(PrimTypeName(sum->type), "int64x8");
  const auto* binary = sum.as<BinaryNode>();
  ASSERT_NE(binary, nullptr);
  EXPECT_NE(binary->b.as<BroadcastNode>(), nullptr);
}

TEST(LoopIrTest, SeqStmtFlattensNestedSequencesAndDropsNulls) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {4});
  Stmt s0 = MakeBufferStore(a, FloatImm(1.0), {IntImm(0)});
  Stmt s1 = MakeBufferStore(a, FloatImm(2.0), {IntImm(1)});
  Stmt inner = MakeSeqStmt({s0, s1});
  Stmt outer = MakeSeqStmt({inner, nullptr, s0});
  const auto* seq = outer.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->seq.size(), 3u);
  EXPECT_TRUE(MakeSeqStmt({s1}).same_as(s1));
  EXPECT_TRUE(IsNoOp(MakeSeqStmt({})));
}

TEST(LoopIrTest, SubstituteSharesUntouchedSubtreesAndKeepsSpans) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {16});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Span span = MakeSpan("conv1");
  Stmt store = MakeBufferStore(a, FloatImm(0.0), {i}, span);
  Stmt untouched = MakeBufferStore(a, FloatImm(0.0), {IntImm(3)}, span);
  Stmt body = MakeSeqStmt({store, untouched});
  Stmt result = Substitute(body, [&](const VarNode* v) -> PrimExpr {
    return v == i.get() ? PrimExpr(j * 2) : PrimExpr();
  });
  const auto* seq = result.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->seq[1].same_as(untouched));
  EXPECT_TRUE(SpanEqual(seq->seq[0]->span, span));
  EXPECT_FALSE(seq->seq[0].same_as(store));
}

TEST(LoopIrTest, PrimFuncParamsAreTheBuffersStorage) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {2, 3});
  Buffer b = MakeBuffer("B", DataType::kFloat32, {2, 3});
  PrimFunc f = MakePrimFunc({a, b}, MakeSeqStmt({}));
  ASSERT_EQ(f->params.size(), 2u);
  EXPECT_TRUE(f->params[1].same_as(b->data));
  EXPECT_TRUE(f->param_buffer(0).same_as(a));
  EXPECT_EQ(a->EffectiveStrides(), (std::vector<int64_t>{3, 1}));
  BaseFunc base = f;
  EXPECT_NE(base.as<PrimFuncNode>(), nullptr);
  EXPECT_EQ(base.as<FunctionNode>(), nullptr);
}

}  // namespace
}  // namespace kiln::loop
