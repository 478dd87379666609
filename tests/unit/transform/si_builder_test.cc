// SIBuilder: which spans CreateSpan collects and in what order, where
// RecursivelyFillSpan stops, and the `ir.enable_si_builder` switch.
#include "engine/transform/si_builder.h"

#include <gtest/gtest.h>

#include "engine/ir/expr_visitor.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"
#include "engine/printer/printer.h"

namespace kiln {
namespace {

Expr Call1(const char* op, Expr arg, const char* span = nullptr) {
  return MakeCall(GetOp(op), {std::move(arg)}, nullptr, span ? MakeSpan(span) : nullptr);
}

std::vector<std::string> Names(const Span& span) { return SpanSourceNames(span); }

TEST(SIBuilderTest, CreateSpanCollectsTheSubgraphOutermostFirst) {
  Var x = MakeVar("x", nullptr, MakeSpan("input_x"));
  Expr producer = Call1("exp", x, "producer");
  Expr inner = Call1("negative", producer, "inner");
  Expr outer = MakeCall(GetOp("add"), {inner, MakeConstant(MakeScalar(1.0f), MakeSpan("one"))},
                        nullptr, MakeSpan("outer"));
  SIBuilder builder(outer, {producer}, /*enabled=*/true);
  // Pre-order from the entry, operands left to right; the input `producer`
  // is the operand the rewrite keeps: its span is not collected, nor is x's.
  EXPECT_EQ(Names(builder.CreateSpan()), (std::vector<std::string>{"outer", "inner", "one"}));
  ASSERT_NE(builder.CreateSpan().as<SequentialSpanNode>(), nullptr);
}

TEST(SIBuilderTest, CreateSpanFlattensNestedSequencesAndFoldsDuplicates) {
  Var x = MakeVar("x");
  Expr a = MakeCall(GetOp("exp"), {x}, nullptr, MakeSequentialSpan({MakeSpan("r2"), MakeSpan("r1")}));
  Expr b = MakeCall(GetOp("negative"), {a}, nullptr,
                    MakeSequentialSpan({MakeSpan("r3"), MakeSpan("r1")}));
  Expr c = MakeCall(GetOp("sqrt"), {b}, nullptr, MakeSpan("r2"));
  SIBuilder builder(c, {x}, true);
  // [r2] + [r3, r1] + [r2, r1]: nested sequences spliced, repeats dropped.
  Span span = builder.CreateSpan();
  EXPECT_EQ(Names(span), (std::vector<std::string>{"r2", "r3", "r1"}));
  for (const Span& inner : span.as<SequentialSpanNode>()->spans) {
    EXPECT_EQ(inner.as<SequentialSpanNode>(), nullptr);
  }
}

TEST(SIBuilderTest, OneOriginIsAPlainSpanAndNoneIsNull) {
  Var x = MakeVar("x");
  Expr only = Call1("exp", x, "only");
  Expr plain = Call1("negative", only);  // a new node without a span
  SIBuilder one(plain, {x}, true);
  ASSERT_TRUE(one.CreateSpan());
  EXPECT_EQ(one.CreateSpan()->kind(), ObjectKind::kSpan);
  EXPECT_EQ(Names(one.CreateSpan()), std::vector<std::string>{"only"});
  SIBuilder none(Call1("exp", x), {x}, true);
  EXPECT_FALSE(none.CreateSpan());
}

TEST(SIBuilderTest, SharedNodesAreCollectedOnce) {
  Var x = MakeVar("x");
  Expr shared = Call1("exp", x, "shared");
  Expr sum = MakeCall(GetOp("add"), {shared, shared}, nullptr, MakeSpan("sum"));
  SIBuilder builder(sum, {x}, true);
  EXPECT_EQ(Names(builder.CreateSpan()), (std::vector<std::string>{"sum", "shared"}));
}

TEST(SIBuilderTest, FillReachesEveryNewNodeAndStopsAtInputs) {
  Var x = MakeVar("x");
  // An input without a span stays without one: it is not part of the rewrite.
  Expr input = Call1("exp", x);
  Expr eps = MakeConstant(MakeScalar(1e-5f));
  Expr added = MakeCall(GetOp("add"), {input, eps});
  Expr out = Call1("rsqrt", added);
  SIBuilder builder(MakeSpan("bn"), true);
  Expr filled = builder.RecursivelyFillSpan(out, {input});
  const auto* rsqrt = filled.as<CallNode>();
  ASSERT_NE(rsqrt, nullptr);
  EXPECT_EQ(Names(rsqrt->span), std::vector<std::string>{"bn"});
  const auto* add = rsqrt->args[0].as<CallNode>();
  EXPECT_EQ(Names(add->span), std::vector<std::string>{"bn"});
  EXPECT_EQ(Names(add->args[1]->span), std::vector<std::string>{"bn"});  // the constant
  EXPECT_TRUE(add->args[0].same_as(input));
  EXPECT_FALSE(add->args[0]->span);
}

TEST(SIBuilderTest, FillStopsAtNodesThatHaveSpans) {
  Var x = MakeVar("x");
  Expr old_unspanned = Call1("exp", x);
  Expr old = Call1("negative", old_unspanned, "old");
  Expr fresh = Call1("sqrt", old);
  SIBuilder builder(MakeSpan("new"), true);
  Expr filled = builder.RecursivelyFillSpan(fresh, {});
  EXPECT_EQ(Names(filled->span), std::vector<std::string>{"new"});
  // `old` keeps its span and its operand is not visited: it is not new.
  const Expr& kept = filled.as<CallNode>()->args[0];
  EXPECT_TRUE(kept.same_as(old));
  EXPECT_FALSE(kept.as<CallNode>()->args[0]->span);
}

TEST(SIBuilderTest, FillNeverRebuildsVariables) {
  Var x = MakeVar("x");
  Expr out = Call1("exp", x);
  SIBuilder builder(MakeSpan("s"), true);
  Expr filled = builder.RecursivelyFillSpan(out, {});
  EXPECT_TRUE(filled.as<CallNode>()->args[0].same_as(x));
  EXPECT_FALSE(x->span);
}

TEST(SIBuilderTest, FillOfAnAlreadySpannedEntryIsTheEntry) {
  Expr out = Call1("exp", MakeVar("x"), "done");
  SIBuilder builder(MakeSpan("s"), true);
  EXPECT_TRUE(builder.RecursivelyFillSpan(out, {}).same_as(out));
}

TEST(SIBuilderTest, DisabledBuilderIsANoOp) {
  Var x = MakeVar("x");
  Expr inner = Call1("exp", x, "inner");
  Expr out = Call1("negative", inner);
  SIBuilder collect(out, {x}, /*enabled=*/false);
  EXPECT_FALSE(collect.enabled());
  EXPECT_FALSE(collect.CreateSpan());
  SIBuilder fill(MakeSpan("s"), /*enabled=*/false);
  EXPECT_FALSE(fill.CreateSpan());
  EXPECT_TRUE(fill.RecursivelyFillSpan(out, {x}).same_as(out));
}

TEST(SIBuilderTest, PassContextOptionSwitchesItOff) {
  Var x = MakeVar("x");
  Expr out = Call1("negative", Call1("exp", x, "inner"));
  EXPECT_TRUE(SIBuilder::EnabledInCurrentContext());  // the default
  EXPECT_TRUE(SIBuilder(out, {x}).CreateSpan());
  PassContext context;
  ASSERT_TRUE(context.SetConfig(kConfigEnableSIBuilder, false).ok());
  {
    PassContext::Scope scope(context);
    ASSERT_TRUE(scope.status().ok());
    EXPECT_FALSE(SIBuilder::EnabledInCurrentContext());
    EXPECT_FALSE(SIBuilder(out, {x}).CreateSpan());
    SIBuilder fill(MakeSpan("s"));
    EXPECT_TRUE(fill.RecursivelyFillSpan(out, {x}).same_as(out));
  }
  EXPECT_TRUE(SIBuilder::EnabledInCurrentContext());
}

TEST(SIBuilderTest, LongChainsCostNoStackDepth) {
  Var x = MakeVar("x");
  Expr chain = x;
  for (int i = 0; i < 20000; ++i) chain = Call1(i % 2 ? "exp" : "negative", chain);
  SIBuilder fill(MakeSpan("s"), true);
  Expr filled = fill.RecursivelyFillSpan(chain, {x});
  int spanned = 0;
  PostOrderVisit(filled, [&](const Expr& e) { spanned += e.as<CallNode>() && e->span ? 1 : 0; });
  EXPECT_EQ(spanned, 20000);
  SIBuilder collect(filled, {x}, true);
  EXPECT_EQ(Names(collect.CreateSpan()), std::vector<std::string>{"s"});
}

}  // namespace
}  // namespace kiln
