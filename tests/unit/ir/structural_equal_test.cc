// Structural equality (variable mapping, spans on request, first-mismatch
// paths) and a hash consistent with it.
#include "engine/ir/structural_equal.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

Type F32(std::initializer_list<int64_t> shape) {
  return MakeTensorType(shape, DataType::kFloat32);
}

// fn (%x: Tensor[(1, 8), float32]) { nn.relu(add(%x, %x)) } with fresh vars.
Function MakeSmallFunction(const std::string& name, Attrs add_attrs = nullptr,
                           const std::string& relu_span = "relu") {
  Var x = MakeVar(name, F32({1, 8}));
  Expr add = MakeCall(GetOp("add"), {x, x}, add_attrs, MakeSpan("add"));
  Expr relu = MakeCall(GetOp("nn.relu"), {add}, nullptr, MakeSpan(relu_span));
  return MakeFunction({x}, relu, F32({1, 8}));
}

TEST(StructuralEqualTest, BoundVariablesAreMappedNotNamed) {
  EXPECT_TRUE(StructuralEqual(MakeSmallFunction("x"), MakeSmallFunction("y")));
  EXPECT_EQ(StructuralHash(MakeSmallFunction("x")), StructuralHash(MakeSmallFunction("y")));
}

TEST(StructuralEqualTest, FreeVariablesMustBeIdenticalUnlessMapped) {
  Expr a = MakeCall(GetOp("nn.relu"), {MakeVar("x")});
  Expr b = MakeCall(GetOp("nn.relu"), {MakeVar("x")});
  auto mismatch = FindFirstMismatch(a, b);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "args[0]");
  EXPECT_EQ(mismatch->reason, "different free variables");
  EXPECT_TRUE(StructuralEqual(a, b, {.map_free_vars = true}));
}

TEST(StructuralEqualTest, SwappedUsesOfParametersDiffer) {
  Var x1 = MakeVar("x"), y1 = MakeVar("y");
  Var x2 = MakeVar("x"), y2 = MakeVar("y");
  Function f = MakeFunction({x1, y1}, MakeCall(GetOp("subtract"), {x1, y1}));
  Function g = MakeFunction({x2, y2}, MakeCall(GetOp("subtract"), {y2, x2}));
  auto mismatch = FindFirstMismatch(f, g);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "body.args[0]");
  EXPECT_TRUE(mismatch->lhs.same_as(x1));
  EXPECT_TRUE(mismatch->rhs.same_as(y2));
}

TEST(StructuralEqualTest, SpansAreComparedOnlyWhenAsked) {
  Function a = MakeSmallFunction("x", nullptr, "relu_a");
  Function b = MakeSmallFunction("x", nullptr, "relu_b");
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  auto mismatch = FindFirstMismatch(a, b, {.compare_spans = true});
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "body.span");
  EXPECT_EQ(mismatch->reason, "span relu_a vs relu_b");
  EXPECT_TRUE(mismatch->lhs.same_as(a->body));
}

TEST(StructuralEqualTest, AttributeMismatchNamesTheKeyAndTheCall) {
  Function a = MakeSmallFunction("x", MakeAttrs({{"axis", 1}, {"keep", true}}));
  Function b = MakeSmallFunction("x", MakeAttrs({{"axis", 2}, {"keep", true}}));
  auto mismatch = FindFirstMismatch(a, b);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "body.args[0].attrs[\"axis\"]");
  EXPECT_TRUE(mismatch->lhs.same_as(a->body.as<CallNode>()->args[0]));
}

TEST(StructuralEqualTest, TypeMismatchPointsAtTheDimension) {
  Var x = MakeVar("x", F32({1, 8}));
  Var y = MakeVar("x", F32({1, 9}));
  IRModule a = MakeModuleFromMain(MakeFunction({x}, x));
  IRModule b = MakeModuleFromMain(MakeFunction({y}, y));
  auto mismatch = FindFirstMismatch(a, b);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "@main.params[0].type_annotation.shape[1]");
  EXPECT_EQ(mismatch->reason, "8 vs 9");
  EXPECT_TRUE(mismatch->lhs.same_as(x->type_annotation));
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
}

TEST(StructuralEqualTest, VirtualDevicesOnParametersAndResultsAreCompared) {
  VirtualDevice cpu = MakeVirtualDevice("cpu", 0);
  VirtualDevice gpu = MakeVirtualDevice("cuda", 0);
  Var x = MakeVar("x", nullptr, nullptr, cpu);
  Var y = MakeVar("x", nullptr, nullptr, gpu);
  auto mismatch = FindFirstMismatch(MakeFunction({x}, x), MakeFunction({y}, y));
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "params[0].virtual_device");
  Var z = MakeVar("x");
  Var w = MakeVar("x");
  EXPECT_FALSE(StructuralEqual(MakeFunction({z}, z, nullptr, nullptr, nullptr, cpu),
                               MakeFunction({w}, w, nullptr, nullptr, nullptr, gpu)));
}

TEST(StructuralEqualTest, ModulesCompareFunctionsByName) {
  IRModule a = MakeModule({{MakeGlobalVar("main"), MakeSmallFunction("x")},
                           {MakeGlobalVar("helper"), MakeSmallFunction("x")}});
  IRModule b = MakeModule({{MakeGlobalVar("main"), MakeSmallFunction("x")},
                           {MakeGlobalVar("other"), MakeSmallFunction("x")}});
  auto mismatch = FindFirstMismatch(a, b);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->reason, "function @helper vs @other");
}

TEST(StructuralEqualTest, ConstantsCompareByValue) {
  Expr a = MakeConstant(MakeScalar(1.0f));
  Expr b = MakeConstant(MakeScalar(1.0f));
  Expr c = MakeConstant(MakeScalar(2.0f));
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  auto mismatch = FindFirstMismatch(a, c);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->reason, "constants differ in value");
}

TEST(StructuralEqualTest, LetVariablesAreMapped) {
  Var x1 = MakeVar("x"), v1 = MakeVar("v");
  Var x2 = MakeVar("x"), v2 = MakeVar("w");
  Function f = MakeFunction({x1}, MakeLet(v1, MakeCall(GetOp("exp"), {x1}), v1));
  Function g = MakeFunction({x2}, MakeLet(v2, MakeCall(GetOp("exp"), {x2}), v2));
  EXPECT_TRUE(StructuralEqual(f, g));
  Function h = MakeFunction({x2}, MakeLet(v2, MakeCall(GetOp("exp"), {x2}), x2));
  auto mismatch = FindFirstMismatch(f, h);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->path, "body.body");
}

TEST(StructuralEqualTest, TwentyThousandNodeChainsCompareAndHash) {
  auto chain = [](const std::string& last_span) {
    Var x = MakeVar("x", F32({4}));
    Expr e = x;
    for (int i = 0; i < 20'000; ++i) {
      e = MakeCall(GetOp(i % 2 ? "nn.relu" : "negative"), {e}, nullptr,
                   MakeSpan(i == 19'999 ? last_span : "n" + std::to_string(i)));
    }
    return Expr(MakeFunction({x}, e));
  };
  Expr a = chain("end"), b = chain("end"), c = chain("other");
  EXPECT_TRUE(StructuralEqual(a, b, {.compare_spans = true}));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_FALSE(StructuralEqual(a, c, {.compare_spans = true}));
  // The deepest difference is found too: flip the op at the bottom.
  Var x = MakeVar("x", F32({4}));
  Expr d = MakeCall(GetOp("exp"), {x});
  for (int i = 1; i < 20'000; ++i) d = MakeCall(GetOp(i % 2 ? "nn.relu" : "negative"), {d});
  auto mismatch = FindFirstMismatch(a, MakeFunction({x}, d));
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->reason, "operator negative vs exp");
}

TEST(StructuralEqualTest, SharedAndDuplicatedSubgraphsAreEqual) {
  Var x = MakeVar("x");
  Expr shared = MakeCall(GetOp("exp"), {x});
  Expr a = MakeFunction({x}, MakeCall(GetOp("add"), {shared, shared}));
  Var y = MakeVar("y");
  Expr b = MakeFunction(
      {y}, MakeCall(GetOp("add"), {MakeCall(GetOp("exp"), {y}), MakeCall(GetOp("exp"), {y})}));
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
}

}  // namespace
}  // namespace kiln
