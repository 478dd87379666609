// The parser reads every construct of docs/graph-text-format.md into the IR a
// user would build by hand (compared structurally, spans included).
#include "engine/parser/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/ir/structural_equal.h"

namespace kiln {
namespace {

Type F32(std::initializer_list<int64_t> shape) { return MakeTensorType(shape, DataType::kFloat32); }

IRModule MustParse(std::string_view text) {
  absl::StatusOr<IRModule> module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? *module : IRModule();
}

// Equal including spans; on failure, says where.
::testing::AssertionResult SameIR(const ObjectRef& parsed, const ObjectRef& expected) {
  if (!parsed) return ::testing::AssertionFailure() << "nothing parsed";
  auto mismatch = FindFirstMismatch(parsed, expected, {.compare_spans = true});
  if (!mismatch) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "at " << mismatch->path << ": " << mismatch->reason;
}

TEST(ParserTest, FunctionWithCallsAndSpans) {
  IRModule parsed = MustParse(
      R"(def @main(%x: Tensor[(1, 3, 224, 224), float32] /* si=input */, %w: Tensor[(64, 3, 7, 7), float32]) -> Tensor[(1, 64, 112, 112), float32] {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3]) /* si=conv1 */;
  %1 = nn.relu(%0) /* si=relu1 */;
  add(%1, 1f) /* si=add1 */
}
)");
  Var x = MakeVar("x", F32({1, 3, 224, 224}), MakeSpan("input"));
  Var w = MakeVar("w", F32({64, 3, 7, 7}));
  Expr conv =
      MakeCall(GetOp("nn.conv2d"), {x, w},
               MakeAttrs({{"strides", IntArray({2, 2})}, {"padding", IntArray({3, 3, 3, 3})}}),
               MakeSpan("conv1"));
  Expr relu = MakeCall(GetOp("nn.relu"), {conv}, nullptr, MakeSpan("relu1"));
  Expr add =
      MakeCall(GetOp("add"), {relu, MakeConstant(MakeScalar(1.0f))}, nullptr, MakeSpan("add1"));
  IRModule expected = MakeModuleFromMain(MakeFunction({x, w}, add, F32({1, 64, 112, 112})));
  EXPECT_TRUE(SameIR(parsed, expected));
  // Uses of a parameter are the parameter node itself.
  const auto* function = parsed->functions[0].second.as<FunctionNode>();
  const auto* relu_call = function->body.as<CallNode>()->args[0].as<CallNode>();
  ASSERT_NE(relu_call, nullptr);
  EXPECT_TRUE(relu_call->args[0].as<CallNode>()->args[0].same_as(function->params[0]));
}

TEST(ParserTest, ModuleAttributesAndSeveralFunctions) {
  IRModule parsed = MustParse(R"(#[attrs(name="resnet18", opset=13)]
def @main(%x) {
  @helper(%x)
}

def @helper(%y, Primitive=1) {
  %y
}
)");
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  GlobalVar main = MakeGlobalVar("main");
  GlobalVar helper = MakeGlobalVar("helper");
  IRModule expected =
      MakeModule({{main, MakeFunction({x}, MakeCall(helper, {x}))},
                  {helper, MakeFunction({y}, y, nullptr, MakeAttrs({{"Primitive", 1}}))}},
                 MakeAttrs({{"name", "resnet18"}, {"opset", 13}}));
  EXPECT_TRUE(SameIR(parsed, expected));
  // The reference and the definition are one GlobalVar.
  const auto* body = parsed->functions[0].second.as<FunctionNode>()->body.as<CallNode>();
  EXPECT_TRUE(body->op.same_as(parsed->functions[1].first));
}

TEST(ParserTest, AttributeValuesOfEveryKind) {
  IRModule parsed = MustParse(R"(def @main(%x) {
  f(%x, i=-7, big=9223372036854775807i64, fl=1.5f, ex=1e-05f, pinf=inff, ninf=-inff, nan=nanf, t=True, f=False, s="a\"b\\c\n\t\x01", dt=float16, sh=(1, ?, N), sh1=(5,), sh0=(), arr=[1, [2.5f, "x"], []], empty=[])
}
)");
  AttrValue::Array nested = {AttrValue(int64_t{1}),
                             AttrValue(AttrValue::Array{AttrValue(2.5), AttrValue("x")}),
                             AttrValue(AttrValue::Array{})};
  Var x = MakeVar("x");
  Attrs attrs = MakeAttrs({
      {"i", -7},
      {"big", AttrValue(std::numeric_limits<int64_t>::max())},
      {"fl", 1.5},
      {"ex", 1e-05},
      {"pinf", std::numeric_limits<double>::infinity()},
      {"ninf", -std::numeric_limits<double>::infinity()},
      {"nan", std::numeric_limits<double>::quiet_NaN()},
      {"t", true},
      {"f", false},
      {"s", std::string("a\"b\\c\n\t\x01")},
      {"dt", DataType::kFloat16},
      {"sh", ShapeValue{{Dim::Static(1), Dim::Symbolic(), Dim::Symbolic("N")}}},
      {"sh1", ShapeValue{{Dim::Static(5)}}},
      {"sh0", ShapeValue{}},
      {"arr", AttrValue(nested)},
      {"empty", AttrValue(AttrValue::Array{})},
  });
  IRModule expected = MakeModuleFromMain(MakeFunction({x}, MakeCall(GetOp("f"), {x}, attrs)));
  EXPECT_TRUE(SameIR(parsed, expected));
}

TEST(ParserTest, TypesOfEveryKind) {
  struct Case {
    const char* text;
    Type type;
  };
  Type scalar = MakeTensorType(std::vector<Dim>{}, DataType::kFloat32);
  Type symbolic = MakeTensorType({Dim::Symbolic(), Dim::Symbolic("batch"), Dim::Static(3)},
                                 DataType::kBFloat16);
  Case cases[] = {
      {"Tensor[(1, 3, 224, 224), float32]", F32({1, 3, 224, 224})},
      {"Tensor[(), float32]", scalar},
      {"Tensor[(5), int64]", MakeTensorType({5}, DataType::kInt64)},
      {"Tensor[(5,), int64]", MakeTensorType({5}, DataType::kInt64)},
      {"Tensor[(?, batch, 3), bfloat16]", symbolic},
      {"(Tensor[(), float32], Tensor[(5), int64])",
       MakeTupleType({scalar, MakeTensorType({5}, DataType::kInt64)})},
      {"(Tensor[(), float32],)", MakeTupleType({scalar})},
      {"()", MakeTupleType({})},
      {"fn (Tensor[(), float32], ()) -> (Tensor[(), float32],)",
       MakeFuncType({scalar, MakeTupleType({})}, MakeTupleType({scalar}))},
      {"fn () -> fn (Tensor[(), float32]) -> Tensor[(), float32]",
       MakeFuncType({}, MakeFuncType({scalar}, scalar))},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Type> type = ParseType(c.text);
    ASSERT_TRUE(type.ok()) << c.text << ": " << type.status().message();
    EXPECT_TRUE(SameIR(*type, c.type)) << c.text;
  }
  for (DataType dtype : kAllDataTypes) {
    std::string text = "Tensor[(2), " + std::string(DataTypeName(dtype)) + "]";
    absl::StatusOr<Type> type = ParseType(text);
    ASSERT_TRUE(type.ok()) << text;
    EXPECT_EQ(type->as<TensorTypeNode>()->dtype, dtype);
  }
}

TEST(ParserTest, ScalarConstants) {
  struct Case {
    const char* text;
    TensorData data;
  };
  float nanf_value = std::numeric_limits<float>::quiet_NaN();
  Case cases[] = {
      {"1f", MakeScalar(1.0f)},
      {"-2.5f", MakeScalar(-2.5f)},
      {"1e-05f", MakeScalar(1e-05f)},
      {"3.40282347e+38f", MakeScalar(std::numeric_limits<float>::max())},
      {"1.40129846e-45f", MakeScalar(std::numeric_limits<float>::denorm_min())},
      {"-0f", MakeScalar(-0.0f)},
      {"1f64", MakeScalar(1.0)},
      {"0.10000000000000001f64", MakeScalar(0.1)},
      {"4.9406564584124654e-324f64", MakeScalar(std::numeric_limits<double>::denorm_min())},
      {"3", MakeScalar(int32_t{3})},
      {"-2147483648", MakeScalar(std::numeric_limits<int32_t>::min())},
      {"3i64", MakeScalar(int64_t{3})},
      {"-9223372036854775808i64", MakeScalar(std::numeric_limits<int64_t>::min())},
      {"True", MakeScalar(true)},
      {"False", MakeScalar(false)},
      {"inff", MakeScalar(std::numeric_limits<float>::infinity())},
      {"-inff", MakeScalar(-std::numeric_limits<float>::infinity())},
      {"nanf", MakeScalar(nanf_value)},
      {"-nanf", MakeScalar(-nanf_value)},
      {"inff64", MakeScalar(std::numeric_limits<double>::infinity())},
      {"-inff64", MakeScalar(-std::numeric_limits<double>::infinity())},
      {"nanf64", MakeScalar(std::numeric_limits<double>::quiet_NaN())},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Expr> expr = ParseExpr(c.text);
    ASSERT_TRUE(expr.ok()) << c.text << ": " << expr.status().message();
    EXPECT_TRUE(SameIR(*expr, MakeConstant(c.data))) << c.text;
  }
}

TEST(ParserTest, LetIfTupleAndTupleGetItem) {
  IRModule parsed = MustParse(R"(def @main(%c: Tensor[(), bool], %x) {
  %0 = (%x, %x);
  %1 = (%0,);
  %2 = ();
  let %t = %1 /* let_si=bind_t */;
  %3 = %t.0;
  %4 = %3.1 /* si=item */;
  %5 = if (%c) {
    %4
  } else {
    let %u = 2f /* si=two */ /* let_si=bind_u */;
    %u
  } /* si=branch */;
  (%5, %2)
}
)");
  Var c = MakeVar("c", MakeTensorType(std::vector<Dim>{}, DataType::kBool));
  Var x = MakeVar("x");
  Var t = MakeVar("t");
  Var u = MakeVar("u");
  Expr pair = MakeTuple({x, x});
  Expr one = MakeTuple({pair});
  Expr empty = MakeTuple({});
  Expr item = MakeTupleGetItem(MakeTupleGetItem(t, 0), 1, MakeSpan("item"));
  Expr else_branch =
      MakeLet(u, MakeConstant(MakeScalar(2.0f), MakeSpan("two")), u, MakeSpan("bind_u"));
  Expr branch = MakeIf(c, item, else_branch, MakeSpan("branch"));
  Expr body = MakeLet(t, one, MakeTuple({branch, empty}), MakeSpan("bind_t"));
  IRModule expected = MakeModuleFromMain(MakeFunction({c, x}, body));
  EXPECT_TRUE(SameIR(parsed, expected));
}

TEST(ParserTest, TemporariesOutliveTheBranchThatBoundThem) {
  IRModule parsed = MustParse(R"(def @main(%c, %x) {
  %1 = if (%c) {
    %0 = nn.relu(%x);
    %0
  } else {
    %x
  };
  add(%1, %0)
}
)");
  const auto* body = parsed->functions[0].second.as<FunctionNode>()->body.as<CallNode>();
  ASSERT_NE(body, nullptr);
  const auto* branch = body->args[0].as<IfNode>();
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(branch->true_branch.same_as(body->args[1]));
}

TEST(ParserTest, NestedFunctionsAndCallsOfBoundFunctions) {
  IRModule parsed = MustParse(R"(def @main(%x: Tensor[(4), float32]) {
  %0 = fn (%p: Tensor[(4), float32], Primitive=1, name="fused") -> Tensor[(4), float32] {
    %1 = nn.relu(%p);
    exp(%1)
  } /* si=fused */;
  %0(%x) /* si=call */
}
)");
  Var x = MakeVar("x", F32({4}));
  Var p = MakeVar("p", F32({4}));
  Function fused =
      MakeFunction({p}, MakeCall(GetOp("exp"), {MakeCall(GetOp("nn.relu"), {p})}), F32({4}),
                   MakeAttrs({{"Primitive", 1}, {"name", "fused"}}), MakeSpan("fused"));
  IRModule expected =
      MakeModuleFromMain(MakeFunction({x}, MakeCall(fused, {x}, nullptr, MakeSpan("call"))));
  EXPECT_TRUE(SameIR(parsed, expected));
}

TEST(ParserTest, SpanFormsRoundIntoSpanObjects) {
  IRModule parsed = MustParse(R"(def @main(%x) {
  %0 = a(%x) /* si=plain */;
  %1 = b(%0) /* si=conv1:3:5-3:17 */;
  %2 = c(%1) /* si="onnx::Conv_12" */;
  %3 = d(%2) /* si="we\"ird\\ */ name\x7f":1:2-3:4 */;
  %4 = e(%3) /* si=[a, "b c":1:0-0:0, d-e/f.g] */;
  %5 = f(%4) /*si=[single]*/;
  %6 = g(%5) /* si=[] */;
  /* a plain comment */ // and a line comment
  h(%6) /* si=path/to-x.y */
}
)");
  SourceName b = MakeSourceName("b c");
  Span seq = MakeRef<SequentialSpanNode>(
      std::vector<Span>{MakeSpan("a"), MakeSpan(b, 1, 0, 0, 0), MakeSpan("d-e/f.g")});
  Var x = MakeVar("x");
  Expr e0 = MakeCall(GetOp("a"), {x}, nullptr, MakeSpan("plain"));
  Expr e1 = MakeCall(GetOp("b"), {e0}, nullptr, MakeSpan(MakeSourceName("conv1"), 3, 5, 3, 17));
  Expr e2 = MakeCall(GetOp("c"), {e1}, nullptr, MakeSpan("onnx::Conv_12"));
  Expr e3 = MakeCall(GetOp("d"), {e2}, nullptr,
                     MakeSpan(MakeSourceName("we\"ird\\ */ name\x7f"), 1, 2, 3, 4));
  Expr e4 = MakeCall(GetOp("e"), {e3}, nullptr, seq);
  Expr e5 = MakeCall(GetOp("f"), {e4}, nullptr,
                     MakeRef<SequentialSpanNode>(std::vector<Span>{MakeSpan("single")}));
  Expr e6 = MakeCall(GetOp("g"), {e5}, nullptr, MakeRef<SequentialSpanNode>(std::vector<Span>{}));
  Expr e7 = MakeCall(GetOp("h"), {e6}, nullptr, MakeSpan("path/to-x.y"));
  EXPECT_TRUE(SameIR(parsed, MakeModuleFromMain(MakeFunction({x}, e7))));
  // `[single]` stays a SequentialSpan (distinct from the plain span).
  const auto* body = parsed->functions[0].second.as<FunctionNode>()->body.as<CallNode>();
  const auto* g = body->args[0].as<CallNode>();
  EXPECT_NE(g->args[0]->span.as<SequentialSpanNode>(), nullptr);
}

TEST(ParserTest, VirtualDevicesOnParamsLetVarsAndResults) {
  IRModule parsed = MustParse(
      R"(def @main(%x {virtual_device=VirtualDevice(device_type="cpu", device_id=0, target="llvm", memory_scope="global")}: Tensor[(2), float32] /* si=x */, virtual_device=VirtualDevice(device_type="cuda")) {
  let %y {virtual_device=VirtualDevice(device_id=1)}: Tensor[(2), float32] /* si=yvar */ = %x /* let_si=ylet */;
  %0 = fn (%z {virtual_device=VirtualDevice(memory_scope="shared")}, virtual_device=VirtualDevice(target="llvm -mcpu=znver4"), Primitive=1) {
    %z
  };
  %0(%y)
} /* si=main_fn */
)");
  Var x = MakeVar("x", F32({2}), MakeSpan("x"), MakeVirtualDevice("cpu", 0, "llvm", "global"));
  Var y = MakeVar("y", F32({2}), MakeSpan("yvar"), MakeVirtualDevice("", 1));
  Var z = MakeVar("z", nullptr, nullptr, MakeVirtualDevice("", -1, "", "shared"));
  Function inner = MakeFunction({z}, z, nullptr, MakeAttrs({{"Primitive", 1}}), nullptr,
                                MakeVirtualDevice("", -1, "llvm -mcpu=znver4"));
  Expr body = MakeLet(y, x, MakeCall(inner, {y}), MakeSpan("ylet"));
  Function main =
      MakeFunction({x}, body, nullptr, nullptr, MakeSpan("main_fn"), MakeVirtualDevice("cuda"));
  EXPECT_TRUE(SameIR(parsed, MakeModuleFromMain(main)));
  // The result device is a field, never an attribute.
  const auto* function = parsed->functions[0].second.as<FunctionNode>();
  EXPECT_FALSE(function->attrs.defined());
  ASSERT_TRUE(function->virtual_device.defined());
  EXPECT_EQ(function->virtual_device->device_type, "cuda");
}

TEST(ParserTest, MetadataConstantsResolveAndShareNodes) {
  IRModule parsed = MustParse(R"(def @main(%x) {
  %0 = add(%x, meta[Constant][0] /* si=w */);
  %1 = multiply(%0, meta[Constant][0] /* si=w */);
  subtract(%1, meta[Constant][1])
}

#[metadata]
meta[Constant][0] = Tensor[(2, 2), float32] 0x0000803f000000400000404000008040;
meta[Constant][1] = Tensor[(0), int8] 0x;
)");
  std::string bytes(16, '\0');
  float values[4] = {1, 2, 3, 4};
  std::memcpy(bytes.data(), values, 16);
  Constant w = MakeConstant(MakeTensorData(DataType::kFloat32, {2, 2}, bytes), MakeSpan("w"));
  Constant empty = MakeConstant(MakeTensorData(DataType::kInt8, {0}, ""));
  Var x = MakeVar("x");
  Expr body = MakeCall(GetOp("subtract"),
                       {MakeCall(GetOp("multiply"), {MakeCall(GetOp("add"), {x, w}), w}), empty});
  EXPECT_TRUE(SameIR(parsed, MakeModuleFromMain(MakeFunction({x}, body))));
  const auto* outer = parsed->functions[0].second.as<FunctionNode>()->body.as<CallNode>();
  const auto* mul = outer->args[0].as<CallNode>();
  EXPECT_TRUE(mul->args[1].same_as(mul->args[0].as<CallNode>()->args[1]));
}

TEST(ParserTest, BlockScopeHoldsANonTailLet) {
  IRModule parsed = MustParse(R"(def @main(%x) {
  %0 = {
    let %y = %x;
    %y
  };
  add(%0, %0)
}
)");
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  Expr let = MakeLet(y, x, y);
  EXPECT_TRUE(
      SameIR(parsed, MakeModuleFromMain(MakeFunction({x}, MakeCall(GetOp("add"), {let, let})))));
}

TEST(ParserTest, InlineNestedExpressionsAreAccepted) {
  absl::StatusOr<Expr> parsed = ParseExpr("add(nn.relu(%x) /* si=r */, (%x, 1f).1)");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const auto* add = parsed->as<CallNode>();
  ASSERT_NE(add, nullptr);
  Var x = Downcast<VarNode>(add->args[0].as<CallNode>()->args[0]);
  Expr expected =
      MakeCall(GetOp("add"), {MakeCall(GetOp("nn.relu"), {x}, nullptr, MakeSpan("r")),
                              MakeTupleGetItem(MakeTuple({x, MakeConstant(MakeScalar(1.0f))}), 1)});
  EXPECT_TRUE(SameIR(*parsed, expected));
}

TEST(ParserTest, FragmentsHaveFreeVariablesOnePerName) {
  absl::StatusOr<Expr> parsed = ParseExpr("%0 = add(%a, %b);\nmultiply(%0, %a)");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const auto* mul = parsed->as<CallNode>();
  const auto* add = mul->args[0].as<CallNode>();
  EXPECT_TRUE(add->args[0].same_as(mul->args[1]));
  EXPECT_FALSE(add->args[0].same_as(add->args[1]));
}

TEST(ParserTest, DottedNamesAndTupleIndices) {
  // `%layer1_0.conv.weight` is one name; `.0` after a name is a tuple index.
  IRModule parsed = MustParse(R"(def @main(%layer1_0.conv.weight, %t) {
  %0 = %t.0;
  %1 = %0.12;
  nn.conv2d(%layer1_0.conv.weight, %1)
}
)");
  const auto* function = parsed->functions[0].second.as<FunctionNode>();
  EXPECT_EQ(function->params[0]->name_hint, "layer1_0.conv.weight");
  const auto* conv = function->body.as<CallNode>();
  EXPECT_EQ(conv->op.as<OpNode>()->name, "nn.conv2d");
  const auto* outer = conv->args[1].as<TupleGetItemNode>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->index, 12);
  EXPECT_EQ(outer->tuple.as<TupleGetItemNode>()->index, 0);
}

TEST(ParserTest, LongBindingChainParsesWithoutDeepRecursion) {
  constexpr int kBindings = 20000;
  std::string text = "def @main(%x: Tensor[(1, 8), float32]) {\n  %0 = nn.relu(%x) /* si=n0 */;\n";
  for (int i = 1; i < kBindings; ++i) {
    text += "  %" + std::to_string(i) + " = add(%" + std::to_string(i - 1) + ", 1f) /* si=n" +
            std::to_string(i) + " */;\n";
  }
  text += "  %" + std::to_string(kBindings - 1) + "\n}\n";
  IRModule parsed = MustParse(text);
  ASSERT_TRUE(parsed);
  int depth = 0;
  Expr e = parsed->functions[0].second.as<FunctionNode>()->body;
  while (const auto* call = e.as<CallNode>()) {
    ++depth;
    e = call->args[0];
  }
  EXPECT_EQ(depth, kBindings);
}

}  // namespace
}  // namespace kiln
