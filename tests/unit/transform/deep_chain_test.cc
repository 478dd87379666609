// Every pass on 20,000-node chains: none may recurse once per node (the
// architecture's stack-depth rule), and each still does its job at that size.
#include <gtest/gtest.h>

#include "engine/ir/expr_visitor.h"
#include "engine/transform/dead_code_elimination.h"
#include "engine/transform/eliminate_common_subexpr.h"
#include "engine/transform/infer_type.h"
#include "engine/transform/simplify_expr.h"
#include "engine/transform/simplify_inference.h"
#include "engine/transform/to_a_normal_form.h"
#include "engine/transform/to_graph_normal_form.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::RunPass;

constexpr int kLength = 20000;

Type F32() { return MakeTensorType({4}, DataType::kFloat32); }

IRModule Typed(const Function& main) {
  return RunPass(transform::InferType(), MakeModuleFromMain(main));
}

int CountCalls(const IRModule& module) {
  int calls = 0;
  PostOrderVisit(module->Lookup("main"), [&](const Expr& e) { calls += e.as<CallNode>() ? 1 : 0; });
  return calls;
}

TEST(DeepChainTest, SimplifyExprCollapsesALongCastChain) {
  Var x = MakeVar("x", F32());
  Expr chain = x;
  for (int i = 0; i < kLength; ++i) {
    DataType to = i % 2 == 0 ? DataType::kFloat64 : DataType::kFloat32;
    chain = MakeCall(GetOp("cast"), {chain}, MakeAttrs({{"dtype", to}}),
                     MakeSpan("c" + std::to_string(i)));
  }
  chain = MakeCall(GetOp("exp"), {chain}, nullptr, MakeSpan("e"));
  IRModule out = RunPass(transform::SimplifyExpr(), Typed(MakeFunction({x}, chain)));
  ASSERT_TRUE(out);
  // f32 -> f64 -> f32 is the identity, pair by pair.
  EXPECT_EQ(CountCalls(out), 1);
}

TEST(DeepChainTest, SimplifyInferenceAndCseOnALongChain) {
  Var x = MakeVar("x", MakeTensorType({1, 4}, DataType::kFloat32));
  Var g = MakeVar("g", F32());
  Expr chain = x;
  for (int i = 0; i < kLength / 10; ++i) {
    Span span = MakeSpan("bn" + std::to_string(i));
    chain = MakeCall(GetOp("nn.batch_norm"), {chain, g, g, g, g}, nullptr, span);
  }
  IRModule simplified = RunPass(transform::SimplifyInference(), Typed(MakeFunction({x, g}, chain)));
  ASSERT_TRUE(simplified);
  EXPECT_TRUE(AllCallsHaveSpans(simplified));
  // Each unpacked batch_norm recomputes the same factors of g: CSE keeps one
  // copy of them (5 calls) plus one multiply and one add per layer.
  IRModule merged = RunPass(transform::EliminateCommonSubexpr(), simplified);
  ASSERT_TRUE(merged);
  EXPECT_EQ(CountCalls(merged), 5 + 2 * (kLength / 10));
  EXPECT_TRUE(AllCallsHaveSpans(merged));
}

TEST(DeepChainTest, LetChainsConvertAndDie) {
  Var x = MakeVar("x", F32());
  std::vector<Var> vars;
  std::vector<Expr> values;
  Expr prev = x;
  for (int i = 0; i < kLength; ++i) {
    vars.push_back(MakeVar("v" + std::to_string(i)));
    values.push_back(MakeCall(GetOp("exp"), {prev}, nullptr, MakeSpan("l" + std::to_string(i))));
    prev = vars.back();
  }
  // let v0 = exp(x); ...; let vN-1 = exp(vN-2); exp(x): every binding is dead.
  Expr body = MakeCall(GetOp("negative"), {x}, nullptr, MakeSpan("result"));
  Expr graph_body = body;
  for (int i = kLength - 1; i >= 0; --i) body = MakeLet(vars[i], values[i], body);
  IRModule module = Typed(MakeFunction({x}, body));
  ASSERT_TRUE(module);
  IRModule dce = RunPass(transform::DeadCodeElimination(), module);
  ASSERT_TRUE(dce);
  EXPECT_EQ(CountCalls(dce), 1);
  IRModule gnf = RunPass(transform::ToGraphNormalForm(), module);
  ASSERT_TRUE(gnf);
  EXPECT_EQ(CountCalls(gnf), 1);

  // A chain whose result is the last variable: everything is live, and graph
  // form turns it into a 20,000-call dataflow chain.
  Expr live = vars.back();
  for (int i = kLength - 1; i >= 0; --i) live = MakeLet(vars[i], values[i], live);
  IRModule live_module = Typed(MakeFunction({x}, live));
  ASSERT_TRUE(live_module);
  EXPECT_TRUE(RunPass(transform::DeadCodeElimination(), live_module).same_as(live_module));
  IRModule live_gnf = RunPass(transform::ToGraphNormalForm(), live_module);
  ASSERT_TRUE(live_gnf);
  EXPECT_EQ(CountCalls(live_gnf), kLength);
  EXPECT_EQ(live_gnf->Lookup("main").as<FunctionNode>()->body->kind(), ObjectKind::kCall);
  (void)graph_body;

  // And back: A-normal form of the 20,000-call chain binds every call, the
  // result included.
  IRModule anf = RunPass(transform::ToANormalForm(), live_gnf);
  ASSERT_TRUE(anf);
  int lets = 0;
  PostOrderVisit(anf->Lookup("main"), [&](const Expr& e) { lets += e.as<LetNode>() ? 1 : 0; });
  EXPECT_EQ(lets, kLength);
  EXPECT_EQ(CountCalls(anf), kLength);
  // The let chain it started from comes back unchanged in structure.
  IRModule anf_again = RunPass(transform::ToANormalForm(), live_module);
  ASSERT_TRUE(anf_again);
  EXPECT_TRUE(StructuralEqual(anf_again, live_module));
}

}  // namespace
}  // namespace kiln
