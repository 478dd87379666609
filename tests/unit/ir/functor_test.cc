// Visitors, mutators and the post-order rewriter: memoization, sharing of
// unchanged subtrees, span preservation, and no recursion along dataflow.
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/module.h"

namespace kiln {
namespace {

constexpr int kChainLength = 20'000;

// relu(relu(...relu(x)...)) with a span per node.
Expr MakeCallChain(const Var& x, int length) {
  Expr chain = x;
  Op relu = GetOp("nn.relu");
  for (int i = 0; i < length; ++i) {
    chain = MakeCall(relu, {chain}, nullptr, MakeSpan("relu" + std::to_string(i)));
  }
  return chain;
}

// let %v0 = relu(x); let %v1 = relu(%v0); ... %vN-1
Expr MakeLetChain(const Var& x, int length) {
  std::vector<Var> vars;
  std::vector<Expr> values;
  Expr prev = x;
  for (int i = 0; i < length; ++i) {
    vars.push_back(MakeVar("v" + std::to_string(i)));
    values.push_back(MakeCall(GetOp("nn.relu"), {prev}));
    prev = vars.back();
  }
  Expr body = prev;
  for (int i = length - 1; i >= 0; --i) body = MakeLet(vars[i], values[i], body);
  return body;
}

class CallCounter : public ExprVisitor {
 public:
  int calls = 0;
  int vars = 0;

 protected:
  void VisitCall_(const CallNode* op) override {
    ++calls;
    ExprVisitor::VisitCall_(op);
  }
  void VisitVar_(const VarNode*) override { ++vars; }
};

TEST(FunctorTest, VisitsA20000NodeChainOncePerNode) {
  Var x = MakeVar("x");
  CallCounter counter;
  counter.VisitExpr(MakeCallChain(x, kChainLength));
  EXPECT_EQ(counter.calls, kChainLength);
  EXPECT_EQ(counter.vars, 1);
}

TEST(FunctorTest, SharedSubexpressionIsVisitedOnce) {
  Var x = MakeVar("x");
  Expr shared = MakeCall(GetOp("nn.relu"), {x});
  Expr sum = MakeCall(GetOp("add"), {shared, shared});
  CallCounter counter;
  counter.VisitExpr(sum);
  EXPECT_EQ(counter.calls, 2);
}

TEST(FunctorTest, PostOrderVisitSeesOperandsFirst) {
  Var x = MakeVar("x");
  Expr relu = MakeCall(GetOp("nn.relu"), {x});
  Expr tuple = MakeTuple({relu, x});
  std::vector<ObjectKind> order;
  PostOrderVisit(tuple, [&](const Expr& e) { order.push_back(e->kind()); });
  EXPECT_EQ(order, (std::vector<ObjectKind>{ObjectKind::kOp, ObjectKind::kVar,
                                             ObjectKind::kCall, ObjectKind::kTuple}));
}

TEST(FunctorTest, VisitsA20000LetChain) {
  Var x = MakeVar("x");
  CallCounter counter;
  counter.VisitExpr(MakeLetChain(x, kChainLength));
  EXPECT_EQ(counter.calls, kChainLength);
}

TEST(FunctorTest, IdentityMutatorReturnsTheSameNode) {
  Var x = MakeVar("x");
  Expr chain = MakeCallChain(x, kChainLength);
  ExprMutator identity;
  EXPECT_TRUE(identity.VisitExpr(chain).same_as(chain));
  Expr lets = MakeLetChain(x, kChainLength);
  ExprMutator identity2;
  EXPECT_TRUE(identity2.VisitExpr(lets).same_as(lets));
}

// Renames every nn.relu call to nn.gelu, keeping spans.
class ReluToGelu : public PostOrderRewriter {
 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    const auto* call = post.as<CallNode>();
    if (!call->op.same_as(GetOp("nn.relu"))) return post;
    (void)pre;
    return MakeRef<CallNode>(GetOp("nn.gelu"), call->args, call->attrs, call->fields());
  }
};

TEST(FunctorTest, RewriterRewritesA20000ChainKeepingSpans) {
  Var x = MakeVar("x");
  Expr chain = MakeCallChain(x, kChainLength);
  ReluToGelu rewriter;
  Expr rewritten = rewriter.VisitExpr(chain);
  int gelus = 0;
  bool spans_kept = true;
  PostOrderVisit(rewritten, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      gelus += call->op.same_as(GetOp("nn.gelu"));
      spans_kept &= call->span.defined();
    }
  });
  EXPECT_EQ(gelus, kChainLength);
  EXPECT_TRUE(spans_kept);
  EXPECT_EQ(rewritten->span->source->name, "relu" + std::to_string(kChainLength - 1));
}

TEST(FunctorTest, MutatorKeepsUnchangedSiblingsShared) {
  Var x = MakeVar("x");
  Expr untouched = MakeCall(GetOp("exp"), {x});
  Expr relu = MakeCall(GetOp("nn.relu"), {x});
  Expr tuple = MakeTuple({untouched, relu});
  ReluToGelu rewriter;
  Expr rewritten = rewriter.VisitExpr(tuple);
  ASSERT_FALSE(rewritten.same_as(tuple));
  EXPECT_TRUE(rewritten.as<TupleNode>()->elements[0].same_as(untouched));
}

// Changes nothing; fails on the call `fail_at` (if any). Counts the Rewrite_
// calls of each kind.
class FailingRewriter : public PostOrderRewriter {
 public:
  explicit FailingRewriter(const ExprNode* fail_at) : fail_at_(fail_at) {}
  int call_rewrites = 0;
  int other_rewrites = 0;

 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    ++call_rewrites;
    if (pre == fail_at_) return absl::InvalidArgumentError("cannot rewrite this call");
    return post;
  }
  Result Rewrite_(const TupleNode* /*pre*/, const Expr& post) override {
    ++other_rewrites;
    return post;
  }
  Result Rewrite_(const VarNode* /*pre*/, const Expr& post) override {
    ++other_rewrites;
    return post;
  }

 private:
  const ExprNode* fail_at_;
};

TEST(FunctorTest, RewriterReturnsTheFirstErrorAndRewritesNothingAfterIt) {
  Var x = MakeVar("x");
  // relu0..relu3, then six more relus over it, in a tuple with x.
  Expr failing = MakeCallChain(x, 4);
  Expr chain = failing;
  for (int i = 0; i < 6; ++i) chain = MakeCall(GetOp("nn.relu"), {chain});
  Expr root = MakeTuple({chain, x});
  FailingRewriter rewriter(failing.get());
  absl::StatusOr<Expr> result = rewriter.Rewrite(root);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "cannot rewrite this call");
  // Post order: x, relu0..relu3; the failing call is the last Rewrite_.
  EXPECT_EQ(rewriter.call_rewrites, 4);
  EXPECT_EQ(rewriter.other_rewrites, 1);
}

TEST(FunctorTest, RewriterThatChangesNothingReturnsTheSameNode) {
  Var x = MakeVar("x");
  Expr root = MakeTuple({MakeCallChain(x, kChainLength), x});
  FailingRewriter rewriter(nullptr);
  absl::StatusOr<Expr> result = rewriter.Rewrite(root);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->same_as(root));
  EXPECT_EQ(rewriter.call_rewrites, kChainLength);
  EXPECT_EQ(rewriter.other_rewrites, 2);  // x and the tuple, once each
}

TEST(FunctorTest, ModuleListsSourceNamesInOrder) {
  Var x = MakeVar("x", nullptr, MakeSpan("input"));
  Expr a = MakeCall(GetOp("nn.relu"), {x}, nullptr, MakeSpan("relu1"));
  Expr b = MakeCall(GetOp("add"), {a, a}, nullptr,
                    MakeSequentialSpan({MakeSpan("add1"), MakeSpan("relu1")}));
  IRModule module = MakeModuleFromMain(MakeFunction({x}, b));
  EXPECT_EQ(module->SourceNames(), (std::vector<std::string>{"input", "relu1", "add1"}));
}

}  // namespace
}  // namespace kiln
