// InferType: types every node, normalizes call attributes, types let
// variables from their values, reports errors with the node and its span,
// and is incremental (typed subtrees are shared, not revisited).
#include "engine/op/type_inference.h"

#include <gtest/gtest.h>

#include "engine/ir/expr_visitor.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"

namespace kiln {
namespace {

Type F32(std::vector<Dim> dims) { return MakeTensorType(std::move(dims), DataType::kFloat32); }
Type F32(std::initializer_list<int64_t> dims) { return MakeTensorType(dims, DataType::kFloat32); }

TEST(TypeInferenceTest, BroadcastsStaticAndSymbolicDims) {
  Var a = MakeVar("a", F32({Dim::Symbolic("N"), Dim::Static(1), Dim::Static(4)}));
  Var b = MakeVar("b", F32({3, 1}));
  auto typed = InferType(MakeFunction({a, b}, MakeCall(GetOp("add"), {a, b})));
  ASSERT_TRUE(typed.ok()) << typed.status();
  const auto* func = typed->as<FunctionNode>();
  // (N, 1, 4) + (3, 1) -> (N, 3, 4), worked out by hand from numpy's rule.
  EXPECT_TRUE(StructuralEqual(func->body->checked_type,
                              F32({Dim::Symbolic("N"), Dim::Static(3), Dim::Static(4)})));
}

TEST(TypeInferenceTest, IncompatibleShapesNameTheNodeAndSpan) {
  Var a = MakeVar("a", F32({2, 3}));
  Var b = MakeVar("b", F32({4}));
  Expr add = MakeCall(GetOp("add"), {a, b}, nullptr, MakeSpan("layer7/add"));
  auto typed = InferType(MakeFunction({a, b}, add));
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.status().message(),
            "type error at add (span layer7/add): shapes (2, 3) and (4) do not broadcast "
            "(dim 1: 3 vs 4)");
}

TEST(TypeInferenceTest, DTypeMismatchAndUnknownOpAreErrors) {
  Var a = MakeVar("a", F32({2}));
  Var b = MakeVar("b", MakeTensorType({2}, DataType::kInt32));
  auto mixed = InferType(MakeFunction({a, b}, MakeCall(GetOp("multiply"), {a, b})));
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(std::string(mixed.status().message()).find("argument 1 has dtype int32, expected float32"),
            std::string::npos)
      << mixed.status();
  auto unknown = InferType(MakeFunction({a}, MakeCall(GetOp("no.such_op"), {a})));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(std::string(unknown.status().message()).find("unknown operator no.such_op"),
            std::string::npos);
}

TEST(TypeInferenceTest, NormalizesAttributesAndRejectsUnknownKeys) {
  Var a = MakeVar("a", F32({2}));
  auto typed = InferType(MakeFunction({a}, MakeCall(GetOp("nn.leaky_relu"), {a})));
  ASSERT_TRUE(typed.ok()) << typed.status();
  const auto* call = typed->as<FunctionNode>()->body.as<CallNode>();
  ASSERT_NE(call->attrs.get(), nullptr);
  EXPECT_EQ(FloatAttr(*call->attrs, "alpha"), 0.01);

  auto bad = InferType(MakeFunction(
      {a}, MakeCall(GetOp("nn.leaky_relu"), {a}, MakeAttrs({{"slope", 0.2}}))));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message())
                .find("operator nn.leaky_relu has no attribute 'slope' (valid: alpha)"),
            std::string::npos)
      << bad.status();
}

TEST(TypeInferenceTest, LetVariablesTakeTheirValueType) {
  Var x = MakeVar("x", F32({3}));
  Var v = MakeVar("v");
  Expr body = MakeLet(v, MakeCall(GetOp("exp"), {x}), MakeCall(GetOp("cast"), {v},
                                                               MakeAttrs({{"dtype", DataType::kInt32}})));
  auto typed = InferType(MakeFunction({x}, body));
  ASSERT_TRUE(typed.ok()) << typed.status();
  const auto* let = typed->as<FunctionNode>()->body.as<LetNode>();
  EXPECT_TRUE(StructuralEqual(let->var->type_annotation, F32({3})));
  EXPECT_TRUE(StructuralEqual(let->checked_type, MakeTensorType({3}, DataType::kInt32)));
  // The use of the variable in the body is the rebuilt, annotated variable.
  EXPECT_TRUE(let->body.as<CallNode>()->args[0].same_as(let->var));
}

TEST(TypeInferenceTest, TuplesIfsAndFunctionCalls) {
  Var c = MakeVar("c", MakeTensorType({}, DataType::kBool));
  Var x = MakeVar("x", F32({2}));
  Var p = MakeVar("p", F32({2}));
  Function inner = MakeFunction({p}, MakeCall(GetOp("negative"), {p}));
  Expr tuple = MakeTuple({MakeCall(inner, {x}), x});
  Expr pick = MakeTupleGetItem(tuple, 1);
  Expr branch = MakeIf(c, pick, MakeCall(GetOp("exp"), {x}));
  auto typed = InferType(MakeFunction({c, x}, branch));
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_TRUE(StructuralEqual(typed->as<FunctionNode>()->body->checked_type, F32({2})));

  auto bad_index = InferType(MakeFunction({c, x}, MakeTupleGetItem(tuple, 2)));
  ASSERT_FALSE(bad_index.ok());
  EXPECT_NE(std::string(bad_index.status().message()).find("index 2 out of range"),
            std::string::npos);
}

TEST(TypeInferenceTest, TypedSubtreesAreSharedNotRebuilt) {
  Var x = MakeVar("x", F32({8}));
  Expr chain = x;
  for (int i = 0; i < 100; ++i) chain = MakeCall(GetOp("exp"), {chain});
  auto typed = InferType(chain);
  ASSERT_TRUE(typed.ok());
  // A pass adds one node on top of the typed chain: re-inference keeps the
  // chain itself (same node), typing only the new root.
  Expr extended = MakeCall(GetOp("negative"), {*typed});
  auto retyped = InferType(extended);
  ASSERT_TRUE(retyped.ok());
  EXPECT_TRUE(retyped->as<CallNode>()->args[0].same_as(*typed));
  // Typing an already typed expression is the identity.
  EXPECT_TRUE(InferType(*retyped)->same_as(*retyped));
}

TEST(TypeInferenceTest, TypesA20000NodeChainWithoutRecursion) {
  Var x = MakeVar("x", F32({8}));
  Expr chain = x;
  for (int i = 0; i < 20'000; ++i) chain = MakeCall(GetOp(i % 2 ? "exp" : "negative"), {chain});
  auto typed = InferType(MakeFunction({x}, chain));
  ASSERT_TRUE(typed.ok());
  int untyped = 0;
  PostOrderVisit(*typed, [&](const Expr& e) {
    if (e->kind() != ObjectKind::kOp && !e->checked_type) ++untyped;
  });
  EXPECT_EQ(untyped, 0);
}

TEST(TypeInferenceTest, ModuleFunctionsSeeEarlierGlobals) {
  Var p = MakeVar("p", F32({2}));
  GlobalVar helper = MakeGlobalVar("helper");
  Var x = MakeVar("x", F32({2}));
  IRModule module = MakeModule({{helper, MakeFunction({p}, MakeCall(GetOp("exp"), {p}))},
                                {MakeGlobalVar("main"), MakeFunction({x}, MakeCall(helper, {x}))}});
  auto typed = InferType(module);
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_TRUE(StructuralEqual((*typed)->Lookup("main").as<FunctionNode>()->body->checked_type,
                              F32({2})));
}

}  // namespace
}  // namespace kiln
