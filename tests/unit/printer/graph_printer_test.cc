// The graph dialect printed as docs/graph-text-format.md describes it. Every expected string
// was written by hand from that document.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "engine/printer/printer.h"
#include "tests/unit/printer/test_modules.h"

namespace kiln {
namespace {

using testing::CallOp;
using testing::F32;

PrintOptions NoSpans() {
  PrintOptions options;
  options.show_spans = false;
  return options;
}

PrintOptions WithMetadata() {
  PrintOptions options;
  options.show_metadata = true;
  return options;
}

TEST(GraphPrinterTest, FormatDocumentExample) {
  EXPECT_EQ(PrintModule(testing::ConvReluModule()),
            "def @main(%x: Tensor[(1, 3, 224, 224), float32] /* si=input */, "
            "%w: Tensor[(64, 3, 7, 7), float32]) -> Tensor[(1, 64, 112, 112), float32] {\n"
            "  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3]) /* si=conv1 */;\n"
            "  %1 = nn.relu(%0) /* si=relu1 */;\n"
            "  add(%1, 1f) /* si=add1 */\n"
            "}\n");
}

TEST(GraphPrinterTest, HideSpansDropsEveryComment) {
  EXPECT_EQ(PrintModule(testing::ConvReluModule(), NoSpans()),
            "def @main(%x: Tensor[(1, 3, 224, 224), float32], "
            "%w: Tensor[(64, 3, 7, 7), float32]) -> Tensor[(1, 64, 112, 112), float32] {\n"
            "  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3]);\n"
            "  %1 = nn.relu(%0);\n"
            "  add(%1, 1f)\n"
            "}\n");
}

TEST(GraphPrinterTest, SpanForms) {
  Var x = MakeVar("x");
  Span quoted = MakeSpan("onnx::Conv_12");
  Span ranged = MakeSpan(MakeSourceName("model.onnx"), 3, 1, 3, 9);
  Span sequence = MakeSequentialSpan({MakeSpan("conv2"), MakeSpan("relu2")});
  Span quoted_sequence = MakeSequentialSpan({quoted, ranged});
  Span single = MakeRef<SequentialSpanNode>(std::vector<Span>{MakeSpan("only")});
  Span empty_name = MakeSpan("");
  Expr a = MakeCall(GetOp("a"), {x}, nullptr, quoted);
  Expr b = MakeCall(GetOp("b"), {a}, nullptr, ranged);
  Expr c = MakeCall(GetOp("c"), {b}, nullptr, sequence);
  Expr d = MakeCall(GetOp("d"), {c}, nullptr, quoted_sequence);
  Expr e = MakeCall(GetOp("e"), {d}, nullptr, single);
  Expr f = MakeCall(GetOp("f"), {e}, nullptr, empty_name);
  Expr g = MakeCall(GetOp("g"), {f}, nullptr, MakeSpan("a/b-c.d_e"));
  EXPECT_EQ(
      PrintModule(MakeModuleFromMain(MakeFunction({x}, g, nullptr, nullptr, MakeSpan("main_fn")))),
      "def @main(%x) {\n"
      "  %0 = a(%x) /* si=\"onnx::Conv_12\" */;\n"
      "  %1 = b(%0) /* si=model.onnx:3:1-3:9 */;\n"
      "  %2 = c(%1) /* si=[conv2, relu2] */;\n"
      "  %3 = d(%2) /* si=[\"onnx::Conv_12\", model.onnx:3:1-3:9] */;\n"
      "  %4 = e(%3) /* si=[only] */;\n"
      "  %5 = f(%4) /* si=\"\" */;\n"
      "  g(%5) /* si=a/b-c.d_e */\n"
      "} /* si=main_fn */\n");
}

TEST(GraphPrinterTest, SpansPrintOnTheirOwnAsInsideComments) {
  EXPECT_EQ(PrintNode(MakeSpan("conv1")), "conv1");
  EXPECT_EQ(PrintNode(MakeSpan(MakeSourceName("layer"), 3, 5, 3, 9)), "layer:3:5-3:9");
  EXPECT_EQ(PrintNode(MakeSequentialSpan({MakeSpan("a"), MakeSpan("onnx::Conv_1")})),
            "[a, \"onnx::Conv_1\"]");
}

TEST(GraphPrinterTest, VirtualDevicesInTheMinimalSyntax) {
  VirtualDevice cpu = MakeVirtualDevice("cpu", 0, "llvm", "global");
  VirtualDevice gpu = MakeVirtualDevice("cuda");
  VirtualDevice unconstrained = MakeVirtualDevice("", -1, "", "");
  Var x = MakeVar("x", F32({2}), MakeSpan("in"), cpu);
  Var y = MakeVar("y", nullptr, nullptr, unconstrained);
  Var z = MakeVar("z", F32({2}), MakeSpan("zz"), gpu);
  Expr body = MakeLet(z, CallOp("copy", {x}), CallOp("add", {z, y}), MakeSpan("let_z"));
  Function main = MakeFunction({x, y}, body, F32({2}), MakeAttrs({{"Primitive", 1}}), nullptr,
                               MakeVirtualDevice("cuda", 1));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(main)),
            "def @main(%x {virtual_device=VirtualDevice(device_type=\"cpu\", device_id=0, "
            "target=\"llvm\", memory_scope=\"global\")}: Tensor[(2), float32] /* si=in */, %y, "
            "Primitive=1, virtual_device=VirtualDevice(device_type=\"cuda\", device_id=1)) -> "
            "Tensor[(2), float32] {\n"
            "  %0 = copy(%x);\n"
            "  let %z {virtual_device=VirtualDevice(device_type=\"cuda\")}: Tensor[(2), float32] "
            "/* si=zz */ = %0 /* let_si=let_z */;\n"
            "  add(%z, %y)\n"
            "}\n");
}

TEST(GraphPrinterTest, TypesOfEveryForm) {
  EXPECT_EQ(PrintType(F32({})), "Tensor[(), float32]");
  EXPECT_EQ(PrintType(MakeTensorType({5}, DataType::kInt64)), "Tensor[(5), int64]");
  EXPECT_EQ(PrintType(MakeTensorType({Dim::Symbolic(), Dim::Symbolic("N"), Dim::Static(3)},
                                     DataType::kBFloat16)),
            "Tensor[(?, N, 3), bfloat16]");
  EXPECT_EQ(PrintType(MakeTupleType({F32({1}), MakeTensorType({}, DataType::kBool)})),
            "(Tensor[(1), float32], Tensor[(), bool])");
  EXPECT_EQ(PrintType(MakeTupleType({F32({1})})), "(Tensor[(1), float32],)");
  EXPECT_EQ(PrintType(MakeTupleType({})), "()");
  EXPECT_EQ(PrintType(MakeFuncType({F32({1}), MakeTupleType({})}, F32({2}))),
            "fn (Tensor[(1), float32], ()) -> Tensor[(2), float32]");
  PrintOptions script;
  script.format = PrintOptions::Format::kScript;
  EXPECT_EQ(PrintType(MakeTensorType({5}, DataType::kInt64), script), "Tensor[(5,), int64]");
}

TEST(GraphPrinterTest, AttributeValuesOfEveryType) {
  Var x = MakeVar("x");
  Attrs attrs = MakeAttrs({
      {"i", int64_t{-1}},
      {"f", 1.5},
      {"whole", 2.0},
      {"tiny", 1e-05},
      {"inf", -std::numeric_limits<double>::infinity()},
      {"b", true},
      {"s", "NCHW"},
      {"esc", "a\"b"},
      {"dt", DataType::kFloat16},
      {"shape", ShapeValue{{Dim::Static(1), Dim::Symbolic(), Dim::Symbolic("N")}}},
      {"shape1", ShapeValue{{Dim::Static(5)}}},
      {"shape0", ShapeValue{}},
      {"nested", AttrValue::Array{IntArray({1, 2}), AttrValue::Array{}, "x"}},
  });
  EXPECT_EQ(PrintExpr(MakeCall(GetOp("op"), {x}, attrs)),
            "op(%x, i=-1, f=1.5f, whole=2.0f, tiny=1e-05f, inf=-inff, b=True, s=\"NCHW\", "
            "esc=\"a\\\"b\", dt=float16, shape=(1, ?, N), shape1=(5,), shape0=(), "
            "nested=[[1, 2], [], \"x\"])\n");
}

template <typename T>
Constant Scalar(DataType dtype, T value, Span span = nullptr) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return MakeConstant(MakeTensorData(dtype, {}, std::move(bytes)), std::move(span));
}

TEST(GraphPrinterTest, InlineConstantsAndMetadata) {
  const float weird_nan_bits_value = [] {
    uint32_t bits = 0x7fc00001;  // a NaN with a payload: `nanf` would lose it
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }();
  Constant big = testing::FloatTensor({2, 2}, {1, 2, 3, 4}, MakeSpan("weights"));
  std::vector<Expr> args = {
      Scalar(DataType::kFloat32, 1.0f),
      Scalar(DataType::kFloat32, -2.5f, MakeSpan("bias")),
      Scalar(DataType::kFloat32, 1e-05f),
      Scalar(DataType::kFloat64, 1.0),
      Scalar(DataType::kInt32, int32_t{3}),
      Scalar(DataType::kInt64, int64_t{3}),
      Scalar(DataType::kBool, uint8_t{1}),
      Scalar(DataType::kFloat32, std::numeric_limits<float>::infinity()),
      Scalar(DataType::kFloat64, -std::numeric_limits<double>::quiet_NaN()),
      Scalar(DataType::kFloat32, weird_nan_bits_value),  // metadata
      Scalar(DataType::kBool, uint8_t{2}),               // metadata
      Scalar(DataType::kInt8, int8_t{1}),                // metadata
      big,
      big,  // the same node: the same K
      MakeConstant(MakeTensorData(DataType::kFloat32, {0}, "")),
  };
  Expr call = MakeCall(GetOp("f"), args);
  const std::string functions =
      "def @main() {\n"
      "  f(1f, -2.5f /* si=bias */, 1e-05f, 1f64, 3, 3i64, True, inff, -nanf64, "
      "meta[Constant][0], meta[Constant][1], meta[Constant][2], meta[Constant][3] /* si=weights "
      "*/, "
      "meta[Constant][3] /* si=weights */, meta[Constant][4])\n"
      "}\n";
  IRModule module = MakeModuleFromMain(MakeFunction({}, call));
  EXPECT_EQ(PrintModule(module), functions);
  EXPECT_EQ(PrintModule(module, WithMetadata()),
            functions +
                "\n"
                "#[metadata]\n"
                "meta[Constant][0] = Tensor[(), float32] 0x0100c07f;\n"
                "meta[Constant][1] = Tensor[(), bool] 0x02;\n"
                "meta[Constant][2] = Tensor[(), int8] 0x01;\n"
                "meta[Constant][3] = Tensor[(2, 2), float32] "
                "0x0000803f000000400000404000008040;\n"
                "meta[Constant][4] = Tensor[(0), float32] 0x;\n");
}

TEST(GraphPrinterTest, MetadataIsNumberedAcrossTheModule) {
  Constant a = testing::FloatTensor({2}, {1, 2});
  Constant b = testing::FloatTensor({2}, {3, 4});
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  IRModule module = MakeModule({
      {MakeGlobalVar("f"), MakeFunction({x}, CallOp("add", {x, b}))},
      {MakeGlobalVar("g"), MakeFunction({y}, CallOp("add", {a, CallOp("add", {y, b})}))},
  });
  EXPECT_EQ(PrintModule(module, WithMetadata()),
            "def @f(%x) {\n"
            "  add(%x, meta[Constant][0])\n"
            "}\n"
            "\n"
            "def @g(%y) {\n"
            "  %0 = add(%y, meta[Constant][0]);\n"
            "  add(meta[Constant][1], %0)\n"
            "}\n"
            "\n"
            "#[metadata]\n"
            "meta[Constant][0] = Tensor[(2), float32] 0x0000404000008040;\n"
            "meta[Constant][1] = Tensor[(2), float32] 0x0000803f00000040;\n");
}

TEST(GraphPrinterTest, NamesAreSanitizedAndUniquePerFunction) {
  std::vector<Var> params = {MakeVar("x"),       MakeVar("x"),  MakeVar("x_1"),
                             MakeVar("0"),       MakeVar(""),   MakeVar("layer1.0.conv"),
                             MakeVar("onnx::a"), MakeVar(".a"), MakeVar("a."),
                             MakeVar("a.-b"),    MakeVar("_ok")};
  std::vector<Expr> args(params.begin(), params.end());
  Function f = MakeFunction(params, MakeTuple(args));
  // A second function restarts naming: its `x` is `%x` again.
  Var other = MakeVar("x");
  IRModule module = MakeModule(
      {{MakeGlobalVar("main"), f}, {MakeGlobalVar("1st fn"), MakeFunction({other}, other)}});
  EXPECT_EQ(PrintModule(module),
            "def @main(%x, %x_1, %x_1_1, %v0, %v, %layer1_0.conv, %onnx__a, %v.a, %a_, %a._b, "
            "%_ok) {\n"
            "  (%x, %x_1, %x_1_1, %v0, %v, %layer1_0.conv, %onnx__a, %v.a, %a_, %a._b, %_ok)\n"
            "}\n"
            "\n"
            "def @v1st_fn(%x) {\n"
            "  %x\n"
            "}\n");
}

TEST(GraphPrinterTest, GlobalsAreNamedBeforeAnyFunctionPrints) {
  GlobalVar helper = MakeGlobalVar("helper");
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  IRModule module = MakeModule({{MakeGlobalVar("main"), MakeFunction({x}, MakeCall(helper, {x}))},
                                {helper, MakeFunction({y}, y)}},
                               MakeAttrs({{"name", "resnet18"}, {"opset", 13}}));
  EXPECT_EQ(PrintModule(module),
            "#[attrs(name=\"resnet18\", opset=13)]\n"
            "def @main(%x) {\n"
            "  @helper(%x)\n"
            "}\n"
            "\n"
            "def @helper(%y) {\n"
            "  %y\n"
            "}\n");
}

TEST(GraphPrinterTest, SharedNodesPrintOnce) {
  Var x = MakeVar("x");
  Call shared = CallOp("nn.relu", {x});
  Call sum = CallOp("add", {shared, shared});
  Tuple pair = MakeTuple({sum, shared});
  Expr body = MakeTuple({MakeTupleGetItem(pair, 0), MakeTupleGetItem(pair, 1)});
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({x}, body))),
            "def @main(%x) {\n"
            "  %0 = nn.relu(%x);\n"
            "  %1 = add(%0, %0);\n"
            "  %2 = (%1, %0);\n"
            "  %3 = %2.0;\n"
            "  %4 = %2.1;\n"
            "  (%3, %4)\n"
            "}\n");
}

// The relu is read in a branch and after the If: it is computed before the If (IfScopes), so
// it is bound there, not inside the branch that meets it first.
TEST(GraphPrinterTest, SharedResultIsBoundAndNamed) {
  Var x = MakeVar("x");
  Var c = MakeVar("c");
  Call shared = CallOp("nn.relu", {x});
  Expr branch = MakeIf(c, shared, x);
  Expr body = MakeTuple({branch, shared});
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({c, x}, body))),
            "def @main(%c, %x) {\n"
            "  %0 = nn.relu(%x);\n"
            "  %1 = if (%c) {\n"
            "    %0\n"
            "  } else {\n"
            "    %x\n"
            "  };\n"
            "  (%1, %0)\n"
            "}\n");
}

// Each If reads the last one's result in both branches: every If is bound in the body, one
// after the other, none inside another's branch.
TEST(GraphPrinterTest, AChainOfIfsPrintsFlat) {
  Var x = MakeVar("x");
  Var c = MakeVar("c");
  Expr last = x;
  for (int i = 0; i < 3; ++i) last = MakeIf(c, CallOp("nn.relu", {last}), CallOp("negative", {last}));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({c, x}, last))),
            "def @main(%c, %x) {\n"
            "  %0 = if (%c) {\n"
            "    nn.relu(%x)\n"
            "  } else {\n"
            "    negative(%x)\n"
            "  };\n"
            "  %1 = if (%c) {\n"
            "    nn.relu(%0)\n"
            "  } else {\n"
            "    negative(%0)\n"
            "  };\n"
            "  if (%c) {\n"
            "    nn.relu(%1)\n"
            "  } else {\n"
            "    negative(%1)\n"
            "  }\n"
            "}\n");
}

TEST(GraphPrinterTest, IfAsResultAndNestedScopes) {
  Var x = MakeVar("x", F32({1}));
  Var c = MakeVar("c", MakeTensorType({}, DataType::kBool));
  Expr cond = CallOp("less", {x, Scalar(DataType::kFloat32, 0.0f)});
  Expr then_value = CallOp("negative", {x}, nullptr, "neg");
  Expr else_value = MakeIf(c, CallOp("exp", {x}), x, MakeSpan("inner_if"));
  Expr body = MakeIf(cond, then_value, else_value, MakeSpan("outer_if"));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({x, c}, body))),
            "def @main(%x: Tensor[(1), float32], %c: Tensor[(), bool]) {\n"
            "  %0 = less(%x, 0f);\n"
            "  if (%0) {\n"
            "    negative(%x) /* si=neg */\n"
            "  } else {\n"
            "    if (%c) {\n"
            "      exp(%x)\n"
            "    } else {\n"
            "      %x\n"
            "    } /* si=inner_if */\n"
            "  } /* si=outer_if */\n"
            "}\n");
}

TEST(GraphPrinterTest, NestedFunctionsShareTheNameScope) {
  Var x = MakeVar("x");
  Var inner_x = MakeVar("x");
  Function inner = MakeFunction({inner_x}, CallOp("add", {inner_x, x}), F32({1}),
                                MakeAttrs({{"Primitive", 1}}), MakeSpan("fused"));
  Expr body = MakeCall(inner, {CallOp("nn.relu", {x})});
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({x}, body))),
            "def @main(%x) {\n"
            "  %0 = fn (%x_1, Primitive=1) -> Tensor[(1), float32] {\n"
            "    add(%x_1, %x)\n"
            "  } /* si=fused */;\n"
            "  %1 = nn.relu(%x);\n"
            "  %0(%1)\n"
            "}\n");
}

TEST(GraphPrinterTest, FunctionWithoutParametersAndWithOnlyAttributes) {
  Function inner = MakeFunction({}, Scalar(DataType::kInt32, int32_t{1}));
  Function main = MakeFunction({}, MakeCall(inner, {}), nullptr, MakeAttrs({{"Primitive", 1}}));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(main)),
            "def @main(Primitive=1) {\n"
            "  %0 = fn () {\n"
            "    1\n"
            "  };\n"
            "  %0()\n"
            "}\n");
}

TEST(GraphPrinterTest, LetChainsContinueTheScope) {
  EXPECT_EQ(PrintModule(testing::LetChainModule(3)),
            "def @main(%x: Tensor[(4), float32]) {\n"
            "  %0 = add(%x, %x);\n"
            "  let %v = %0;\n"
            "  %1 = add(%v, %v);\n"
            "  let %v_1 = %1;\n"
            "  %2 = add(%v_1, %v_1);\n"
            "  let %v_2 = %2;\n"
            "  %v_2\n"
            "}\n");
}

TEST(GraphPrinterTest, LetOfAnAtomAndLetInValuePosition) {
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  Var z = MakeVar("z");
  // let %y = 2f (with the constant's own span); the let used as a call argument is a block.
  Expr inner_let = MakeLet(z, x, CallOp("neg", {z}), MakeSpan("lz"));
  Expr body =
      MakeLet(y, Scalar(DataType::kFloat32, 2.0f, MakeSpan("two")), CallOp("add", {y, inner_let}));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({x}, body))),
            "def @main(%x) {\n"
            "  let %y = 2f /* si=two */;\n"
            "  %0 = {\n"
            "    let %z = %x /* let_si=lz */;\n"
            "    neg(%z)\n"
            "  };\n"
            "  add(%y, %0)\n"
            "}\n");
}

TEST(GraphPrinterTest, SharedLetIsABlockAlsoAsResult) {
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  Expr let = MakeLet(y, CallOp("neg", {x}), y);
  Var c = MakeVar("c");
  Expr body = MakeIf(c, let, CallOp("add", {let, x}));
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({c, x}, body))),
            "def @main(%c, %x) {\n"
            "  if (%c) {\n"
            "    %0 = {\n"
            "      %1 = neg(%x);\n"
            "      let %y = %1;\n"
            "      %y\n"
            "    };\n"
            "    %0\n"
            "  } else {\n"
            "    add(%0, %x)\n"
            "  }\n"
            "}\n");
}

TEST(GraphPrinterTest, CallsOfVariablesAndTemporaries) {
  Var f = MakeVar("f", MakeFuncType({F32({1})}, F32({1})));
  Var x = MakeVar("x");
  Expr body = MakeCall(MakeCall(f, {x}), {x});
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({f, x}, body))),
            "def @main(%f: fn (Tensor[(1), float32]) -> Tensor[(1), float32], %x) {\n"
            "  %0 = %f(%x);\n"
            "  %0(%x)\n"
            "}\n");
}

TEST(GraphPrinterTest, TupleIndexOfAConstantIsParenthesized) {
  // `3.0` would read back as a float constant.
  Expr item = MakeTupleGetItem(MakeConstant(MakeScalar(int32_t{3})), 0);
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({}, item))),
            "def @main() {\n"
            "  (3).0\n"
            "}\n");
}

TEST(GraphPrinterTest, EmptyModuleAndOneElementTuples) {
  EXPECT_EQ(PrintModule(MakeModule({})), "");
  Var x = MakeVar("x");
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({x}, MakeTuple({x})))),
            "def @main(%x) {\n"
            "  (%x,)\n"
            "}\n");
  EXPECT_EQ(PrintModule(MakeModuleFromMain(MakeFunction({}, MakeTuple({})))),
            "def @main() {\n"
            "  ()\n"
            "}\n");
}

TEST(GraphPrinterTest, FragmentsNameTheirFreeVariables) {
  Var x = MakeVar("x");
  Var x2 = MakeVar("x");
  Var y = MakeVar("y", F32({3}));
  Expr relu = CallOp("nn.relu", {x}, nullptr, "r");
  EXPECT_EQ(PrintExpr(CallOp("add", {relu, x2})),
            "%0 = nn.relu(%x) /* si=r */;\n"
            "add(%0, %x_1)\n");
  EXPECT_EQ(PrintExpr(x), "%x\n");
  EXPECT_EQ(PrintExpr(Scalar(DataType::kInt64, int64_t{7})), "7i64\n");
  EXPECT_EQ(PrintExpr(GetOp("nn.relu")), "nn.relu\n");
  EXPECT_EQ(PrintExpr(MakeGlobalVar("main")), "@main\n");
  EXPECT_EQ(PrintExpr(MakeFunction({y}, CallOp("neg", {y}))),
            "fn (%y: Tensor[(3), float32]) {\n"
            "  neg(%y)\n"
            "}\n");
  Constant big = testing::FloatTensor({2}, {1, 2});
  EXPECT_EQ(PrintExpr(CallOp("add", {x, big}), WithMetadata()),
            "add(%x, meta[Constant][0])\n"
            "\n"
            "#[metadata]\n"
            "meta[Constant][0] = Tensor[(2), float32] 0x0000803f00000040;\n");
}

TEST(GraphPrinterTest, ScriptFormat) {
  PrintOptions script;
  script.format = PrintOptions::Format::kScript;
  EXPECT_EQ(PrintModule(testing::ConvReluModule(), script),
            "class Module:\n"
            "    def main(x: Tensor[(1, 3, 224, 224), float32], w: Tensor[(64, 3, 7, 7), float32])"
            " -> Tensor[(1, 64, 112, 112), float32]:  # x: si=input\n"
            "        _0 = R.nn.conv2d(x, w, strides=[2, 2], padding=[3, 3, 3, 3])  # si=conv1\n"
            "        _1 = R.nn.relu(_0)  # si=relu1\n"
            "        return R.add(_1, R.float32(1.0))  # si=add1\n");
  EXPECT_EQ(PrintModule(testing::LetChainModule(2), script),
            "class Module:\n"
            "    def main(x: Tensor[(4,), float32]):\n"
            "        _0 = R.add(x, x)\n"
            "        v = _0\n"
            "        _1 = R.add(v, v)\n"
            "        v_1 = _1\n"
            "        return v_1\n");
}

TEST(GraphPrinterTest, PrintingIsDeterministic) {
  IRModule module = testing::ConvReluModule();
  EXPECT_EQ(PrintModule(module), PrintModule(module));
  IRModule chain = testing::ChainModule(500);
  EXPECT_EQ(PrintModule(chain, WithMetadata()), PrintModule(chain, WithMetadata()));
}

TEST(GraphPrinterTest, ConcurrentPrintsAgree) {
  IRModule module = testing::ChainModule(300);
  const std::string expected = PrintModule(module);
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = PrintModule(module); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& result : results) EXPECT_EQ(result, expected);
}

size_t CountLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(GraphPrinterTest, ChainOf20000NodesPrintsWithoutDeepRecursion) {
  constexpr int kLength = 20'000;
  IRModule module = testing::ChainModule(kLength);
  const auto start = std::chrono::steady_clock::now();
  std::string text = PrintModule(module);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // def line + (kLength - 1) bindings + result + closing brace.
  EXPECT_EQ(CountLines(text), static_cast<size_t>(kLength + 2));
  EXPECT_NE(
      text.find("  %19998 = nn.relu(%19997) /* si=relu */;\n  nn.relu(%19998) /* si=relu */\n}\n"),
      std::string::npos);
  std::printf("printed %d nodes in %.1f ms (%.0f nodes/s)\n", kLength, seconds * 1e3,
              kLength / seconds);
}

TEST(GraphPrinterTest, LetChainOf20000PrintsWithoutDeepRecursion) {
  constexpr int kLength = 20'000;
  std::string text = PrintModule(testing::LetChainModule(kLength));
  EXPECT_EQ(CountLines(text), static_cast<size_t>(2 * kLength + 3));
  EXPECT_NE(text.find("  let %v_19999 = %19999;\n  %v_19999\n}\n"), std::string::npos);
  // The expression alone, as a fragment, and the script form take the same paths.
  PrintOptions script;
  script.format = PrintOptions::Format::kScript;
  EXPECT_EQ(CountLines(PrintModule(testing::LetChainModule(kLength), script)),
            static_cast<size_t>(2 * kLength + 3));
}

}  // namespace
}  // namespace kiln
