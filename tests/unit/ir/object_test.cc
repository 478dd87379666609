// The object model: counting, identity, checked downcasts, iterative
// destruction and sharing between threads.
#include "engine/ir/object.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "engine/ir/expr.h"

namespace kiln {
namespace {

TEST(ObjectTest, HandlesCountReferences) {
  Var x = MakeVar("x");
  EXPECT_EQ(x->use_count(), 1);
  {
    Expr copy = x;
    EXPECT_EQ(x->use_count(), 2);
    EXPECT_TRUE(copy.same_as(x));
  }
  EXPECT_EQ(x->use_count(), 1);
}

TEST(ObjectTest, CheckedDowncastReturnsNullForOtherKinds) {
  Expr x = MakeVar("x");
  EXPECT_NE(x.as<VarNode>(), nullptr);
  EXPECT_EQ(x.as<CallNode>(), nullptr);
  EXPECT_NE(x.as<ExprNode>(), nullptr);
  Expr f = MakeFunction({}, x);
  EXPECT_NE(f.as<BaseFuncNode>(), nullptr);
  EXPECT_EQ(Downcast<VarNode>(x)->name_hint, "x");
  EXPECT_DEATH(Downcast<CallNode>(x), "cannot downcast a Var");
}

TEST(ObjectTest, SameNameIsNotSameVariable) {
  Var a = MakeVar("x");
  Var b = MakeVar("x");
  EXPECT_FALSE(a.same_as(b));
}

TEST(ObjectTest, OpHandlesAreShared) {
  EXPECT_TRUE(GetOp("add").same_as(GetOp("add")));
  EXPECT_FALSE(GetOp("add").same_as(GetOp("subtract")));
}

TEST(ObjectTest, DroppingALongChainDoesNotRecurse) {
  // Deep enough to overflow any stack if destruction recursed per node.
  Var x = MakeVar("x");
  Expr chain = x;
  Op neg = GetOp("negative");
  for (int i = 0; i < 1'000'000; ++i) chain = MakeCall(neg, {chain});
  EXPECT_EQ(x->use_count(), 2);  // ours and the innermost call's
  chain = Expr();
  // Every call was destroyed, down to the innermost one that held `x`.
  EXPECT_EQ(x->use_count(), 1);
}

TEST(ObjectTest, NodesAreSharedBetweenThreadsSafely) {
  Var x = MakeVar("x");
  Expr shared = MakeCall(GetOp("add"), {x, x});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      for (int i = 0; i < 100'000; ++i) {
        Expr copy = shared;
        Expr wrapped = MakeCall(GetOp("negative"), {copy});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(shared->use_count(), 1);
}

TEST(ObjectTest, WithSpanSharesChildrenAndKeepsOtherFields) {
  Var x = MakeVar("x");
  Call call = MakeCall(GetOp("nn.relu"), {x}, nullptr, MakeSpan("relu1"));
  Expr moved = WithSpan(call, MakeSpan("relu2"));
  EXPECT_FALSE(moved.same_as(call));
  EXPECT_TRUE(moved.as<CallNode>()->args[0].same_as(x));
  EXPECT_EQ(moved->span->source->name, "relu2");
  EXPECT_EQ(call->span->source->name, "relu1");
}

TEST(ObjectTest, ConstantsShareTheirData) {
  TensorData data = MakeTensorData(DataType::kFloat32, {2}, std::string(8, '\0'));
  Constant c = MakeConstant(data, MakeSpan("w"));
  Expr respanned = WithSpan(c, MakeSpan("w2"));
  EXPECT_TRUE(respanned.as<ConstantNode>()->data.same_as(data));
}

}  // namespace
}  // namespace kiln
