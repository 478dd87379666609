// MergedSpans (engine/lower/merged_spans.h): the spans a shared kernel is lowered with. Each node
// of the first function names its counterparts' layers too; functions that do not pair node for
// node (one shares a subexpression the other repeats), or whose body is a parameter, keep the
// first function as it is.
#include "engine/lower/merged_spans.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/ir/span.h"

namespace kiln::lower {
namespace {

// fn(%p) { add(relu(%p) /* r */, relu(%p) /* r */) /* a */ }, the relu shared or repeated.
Function AddOfRelus(const std::string& layer, bool shared) {
  Var p = MakeVar("p");
  Expr first = MakeCall(GetOp("nn.relu"), {p}, nullptr, MakeSpan("relu_" + layer));
  Expr second =
      shared ? first : MakeCall(GetOp("nn.relu"), {p}, nullptr, MakeSpan("relu_" + layer));
  Expr sum = MakeCall(GetOp("add"), {first, second}, nullptr, MakeSpan("add_" + layer));
  return MakeFunction({p}, sum, nullptr, nullptr, MakeSpan("fn_" + layer));
}

std::vector<std::string> Layers(const Expr& expr) { return SpanSourceNames(expr->span); }

TEST(MergedSpansTest, EveryNodeNamesItsCounterpartsLayers) {
  Function merged = MergedSpans({AddOfRelus("a", true), AddOfRelus("b", true)});
  EXPECT_EQ(Layers(merged->body), (std::vector<std::string>{"add_a", "add_b"}));
  const auto* add = merged->body.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(Layers(add->args[0]), (std::vector<std::string>{"relu_a", "relu_b"}));
  EXPECT_TRUE(add->args[0].same_as(add->args[1]));  // the sharing kept
  EXPECT_EQ(SpanSourceNames(merged->span), (std::vector<std::string>{"fn_a", "fn_b"}));
}

TEST(MergedSpansTest, FunctionsThatDoNotPairNodeForNodeKeepTheFirst) {
  // A relu shared by both operands and two repeated relus: equal structurally, not node for node.
  Function shared = AddOfRelus("a", true), repeated = AddOfRelus("b", false);
  EXPECT_TRUE(MergedSpans({shared, repeated}).same_as(shared));
  Var p = MakeVar("p"), q = MakeVar("q");
  Function identity = MakeFunction({p}, p, nullptr, nullptr, MakeSpan("id_a"));
  EXPECT_TRUE(MergedSpans({identity, MakeFunction({q}, q, nullptr, nullptr, MakeSpan("id_b"))})
                  .same_as(identity));
}

}  // namespace
}  // namespace kiln::lower
