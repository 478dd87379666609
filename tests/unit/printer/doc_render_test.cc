// Stage two alone: hand-built Doc trees rendered by the Relay and script renderers. Each
// expected string is what a reader of that language should see.
#include <gtest/gtest.h>

#include <limits>

#include "engine/printer/doc.h"
#include "engine/printer/relay_renderer.h"
#include "engine/printer/script_renderer.h"

namespace kiln::printer {
namespace {

ExprDoc Op(OperationKind kind, std::vector<ExprDoc> operands) {
  return std::make_shared<OperationDocNode>(kind, std::move(operands));
}

std::shared_ptr<LiteralDocNode> Typed(std::shared_ptr<LiteralDocNode> literal, DataType dtype) {
  literal->dtype = dtype;
  return literal;
}

TEST(DocRenderTest, IdentifiersGetEachLanguagesSigils) {
  const std::vector<std::pair<IdKind, std::pair<const char*, const char*>>> cases = {
      {IdKind::kPlain, {"x", "x"}},  {IdKind::kLocal, {"%x", "x"}}, {IdKind::kGlobal, {"@x", "x"}},
      {IdKind::kTemp, {"%x", "_x"}}, {IdKind::kOp, {"x", "R.x"}},
  };
  for (const auto& [kind, expected] : cases) {
    EXPECT_EQ(RenderRelay(Id("x", kind)), expected.first);
    EXPECT_EQ(RenderScript(Id("x", kind)), expected.second);
  }
}

TEST(DocRenderTest, RelayLiteralsFollowTheFormatDocument) {
  EXPECT_EQ(RenderRelay(IntLiteral(-1)), "-1");
  EXPECT_EQ(RenderRelay(FloatLiteral(1.5)), "1.5f");
  EXPECT_EQ(RenderRelay(FloatLiteral(1.0)), "1.0f");
  EXPECT_EQ(RenderRelay(FloatLiteral(1e-05)), "1e-05f");
  EXPECT_EQ(RenderRelay(FloatLiteral(100.0)), "100.0f");
  EXPECT_EQ(RenderRelay(FloatLiteral(100000.0)), "1e+05f");  // shorter than 100000.0f
  EXPECT_EQ(RenderRelay(FloatLiteral(1e20)), "1e+20f");
  EXPECT_EQ(RenderRelay(FloatLiteral(-std::numeric_limits<double>::infinity())), "-inff");
  EXPECT_EQ(RenderRelay(FloatLiteral(std::numeric_limits<double>::quiet_NaN())), "nanf");
  EXPECT_EQ(RenderRelay(BoolLiteral(true)), "True");
  EXPECT_EQ(RenderRelay(StringLiteral("NCHW")), "\"NCHW\"");
  EXPECT_EQ(RenderRelay(NoneLiteral()), "None");
  // Typed scalars of constants.
  EXPECT_EQ(RenderRelay(Typed(FloatLiteral(1.0f), DataType::kFloat32)), "1f");
  EXPECT_EQ(RenderRelay(Typed(FloatLiteral(-2.5f), DataType::kFloat32)), "-2.5f");
  EXPECT_EQ(RenderRelay(Typed(FloatLiteral(1e-05f), DataType::kFloat32)), "1e-05f");
  EXPECT_EQ(RenderRelay(Typed(FloatLiteral(0.1f), DataType::kFloat32)), "0.1f");
  EXPECT_EQ(RenderRelay(Typed(FloatLiteral(1.0), DataType::kFloat64)), "1f64");
  EXPECT_EQ(RenderRelay(
                Typed(FloatLiteral(-std::numeric_limits<float>::quiet_NaN()), DataType::kFloat32)),
            "-nanf");
  EXPECT_EQ(RenderRelay(Typed(IntLiteral(3), DataType::kInt32)), "3");
  EXPECT_EQ(RenderRelay(Typed(IntLiteral(3), DataType::kInt64)), "3i64");
  EXPECT_EQ(RenderRelay(Typed(BoolLiteral(false), DataType::kBool)), "False");
}

TEST(DocRenderTest, ScriptLiteralsArePython) {
  EXPECT_EQ(RenderScript(FloatLiteral(1.0)), "1.0");
  EXPECT_EQ(RenderScript(FloatLiteral(1e-05)), "1e-05");
  EXPECT_EQ(RenderScript(Typed(FloatLiteral(1.0f), DataType::kFloat32)), "R.float32(1.0)");
  EXPECT_EQ(RenderScript(Typed(IntLiteral(3), DataType::kInt64)), "R.int64(3)");
  EXPECT_EQ(RenderScript(Typed(BoolLiteral(true), DataType::kBool)), "R.bool(True)");
  EXPECT_EQ(RenderScript(StringLiteral("a\"b\\c\nd\te\x01\xff")),
            "\"a\\\"b\\\\c\\nd\\te\\x01\\xff\"");
}

TEST(DocRenderTest, TuplesAndTensorShapes) {
  auto one = std::make_shared<TupleDocNode>(std::vector<ExprDoc>{IntLiteral(5)});
  EXPECT_EQ(RenderRelay(one), "(5,)");
  EXPECT_EQ(RenderRelay(std::make_shared<TupleDocNode>(std::vector<ExprDoc>{})), "()");
  auto shape = std::make_shared<TupleDocNode>(std::vector<ExprDoc>{IntLiteral(5)});
  shape->bare_singleton = true;
  EXPECT_EQ(RenderRelay(shape), "(5)");
  EXPECT_EQ(RenderScript(shape), "(5,)");  // Python needs the comma
}

TEST(DocRenderTest, CallsIndexingAndContainers) {
  auto call = std::make_shared<CallDocNode>(Id("conv", IdKind::kOp),
                                            std::vector<ExprDoc>{Id("x", IdKind::kLocal)});
  call->kwargs_keys = {"strides", "layout"};
  call->kwargs_values = {
      std::make_shared<ListDocNode>(std::vector<ExprDoc>{IntLiteral(2), IntLiteral(2)}),
      StringLiteral("NCHW")};
  EXPECT_EQ(RenderRelay(call), "conv(%x, strides=[2, 2], layout=\"NCHW\")");
  EXPECT_EQ(RenderScript(call), "R.conv(x, strides=[2, 2], layout=\"NCHW\")");

  auto kwargs_only = std::make_shared<CallDocNode>(Id("f"), std::vector<ExprDoc>{});
  kwargs_only->kwargs_keys = {"a"};
  kwargs_only->kwargs_values = {IntLiteral(1)};
  EXPECT_EQ(RenderRelay(kwargs_only), "f(a=1)");

  auto index = std::make_shared<IndexDocNode>(
      Id("A"),
      std::vector<ExprDoc>{std::make_shared<SliceDocNode>(IntLiteral(1), IntLiteral(10)),
                           IntLiteral(2), std::make_shared<SliceDocNode>(nullptr, nullptr)});
  EXPECT_EQ(RenderScript(index), "A[1:10, 2, :]");
  auto dict = std::make_shared<DictDocNode>(std::vector<ExprDoc>{StringLiteral("k")},
                                            std::vector<ExprDoc>{IntLiteral(1)});
  EXPECT_EQ(RenderScript(dict), "{\"k\": 1}");
  EXPECT_EQ(RenderScript(std::make_shared<AttrAccessDocNode>(Id("T"), "float32")), "T.float32");
  // A field number is tuple access: Relay `%t.0`, Python `t[0]`.
  auto field = std::make_shared<AttrAccessDocNode>(Id("t", IdKind::kLocal), "10");
  EXPECT_EQ(RenderRelay(field), "%t.10");
  EXPECT_EQ(RenderScript(field), "t[10]");
  EXPECT_EQ(
      RenderScript(std::make_shared<LambdaDocNode>(std::vector<IdDoc>{Id("a"), Id("b")}, Id("a"))),
      "lambda a, b: a");
}

TEST(DocRenderTest, OperatorsParenthesizeByPrecedence) {
  ExprDoc a = Id("a"), b = Id("b"), c = Id("c");
  // (a + b) * c
  EXPECT_EQ(RenderScript(Op(OperationKind::kMul, {Op(OperationKind::kAdd, {a, b}), c})),
            "(a + b) * c");
  // a + b * c needs none.
  EXPECT_EQ(RenderScript(Op(OperationKind::kAdd, {a, Op(OperationKind::kMul, {b, c})})),
            "a + b * c");
  // Left-associative: a - (b - c) keeps its parentheses, (a - b) - c does not.
  EXPECT_EQ(RenderScript(Op(OperationKind::kSub, {a, Op(OperationKind::kSub, {b, c})})),
            "a - (b - c)");
  EXPECT_EQ(RenderScript(Op(OperationKind::kSub, {Op(OperationKind::kSub, {a, b}), c})),
            "a - b - c");
  // `**` is right-associative.
  EXPECT_EQ(RenderScript(Op(OperationKind::kPow, {a, Op(OperationKind::kPow, {b, c})})),
            "a ** b ** c");
  EXPECT_EQ(RenderScript(Op(OperationKind::kPow, {Op(OperationKind::kPow, {a, b}), c})),
            "(a ** b) ** c");
  // Comparisons never chain by accident.
  EXPECT_EQ(RenderScript(Op(OperationKind::kLt, {Op(OperationKind::kLt, {a, b}), c})),
            "(a < b) < c");
  EXPECT_EQ(RenderScript(Op(OperationKind::kNegative, {Op(OperationKind::kAdd, {a, b})})),
            "-(a + b)");
  EXPECT_EQ(RenderScript(Op(OperationKind::kNot, {a})), "not a");
  EXPECT_EQ(RenderScript(Op(OperationKind::kIfThenElse, {a, b, c})), "b if a else c");
  EXPECT_EQ(RenderScript(std::make_shared<AttrAccessDocNode>(Op(OperationKind::kAdd, {a, b}), "x")),
            "(a + b).x");
}

std::shared_ptr<AssignDocNode> Assign(ExprDoc lhs, ExprDoc rhs, ExprDoc annotation = nullptr) {
  return std::make_shared<AssignDocNode>(std::move(lhs), std::move(rhs), std::move(annotation));
}

TEST(DocRenderTest, GenericStatementsRenderInBothLanguages) {
  auto body =
      std::vector<StmtDoc>{Assign(Id("y"), Id("x")), std::make_shared<ExprStmtDocNode>(Id("y"))};
  auto with = std::make_shared<ScopeDocNode>(Id("b"), Id("block"), body);
  auto loop = std::make_shared<ForDocNode>(Id("i"), Id("range"), std::vector<StmtDoc>{with});
  auto branch =
      std::make_shared<IfDocNode>(Id("c"), std::vector<StmtDoc>{loop}, std::vector<StmtDoc>{});
  auto spin = std::make_shared<WhileDocNode>(Id("c"), std::vector<StmtDoc>{});
  auto block = std::make_shared<StmtBlockDocNode>(
      std::vector<StmtDoc>{std::make_shared<CommentDocNode>("two\nlines"), branch, spin});
  EXPECT_EQ(RenderScript(block),
            "# two\n"
            "# lines\n"
            "if c:\n"
            "    for i in range:\n"
            "        with block as b:\n"
            "            y = x\n"
            "            y\n"
            "while c:\n"
            "    pass\n");
  EXPECT_EQ(RenderRelay(block),
            "// two\n"
            "// lines\n"
            "if (c) {\n"
            "  for (i in range) {\n"
            "    with (block) as b {\n"
            "      y = x;\n"
            "      y;\n"
            "    }\n"
            "  }\n"
            "}\n"
            "while (c) {\n"
            "}\n");
}

// The graph dialect's forms: a function with a parameter, an attribute, an if with a value and
// a nested function, with span comments.
Doc GraphLikeFunction() {
  auto param = Assign(
      Id("x", IdKind::kLocal), nullptr,
      std::make_shared<IndexDocNode>(
          Id("Tensor"),
          std::vector<ExprDoc>{std::make_shared<TupleDocNode>(std::vector<ExprDoc>{IntLiteral(2)}),
                               Id("float32")}));
  param->lhs_comment = "si=input";
  auto device = std::make_shared<CallDocNode>(Id("VirtualDevice"), std::vector<ExprDoc>{});
  device->kwargs_keys = {"device_type"};
  device->kwargs_values = {StringLiteral("cpu")};
  param->lhs_attrs.emplace_back("virtual_device", device);
  auto attr = Assign(Id("Primitive"), IntLiteral(1));

  auto relu = std::make_shared<CallDocNode>(Id("nn.relu", IdKind::kOp),
                                            std::vector<ExprDoc>{Id("x", IdKind::kLocal)});
  relu->comment = "si=relu";
  auto if_expr = std::make_shared<IfExprDocNode>(
      Id("c", IdKind::kLocal),
      std::vector<StmtDoc>{Assign(Id("1", IdKind::kTemp), relu),
                           std::make_shared<ReturnDocNode>(Id("1", IdKind::kTemp))},
      std::vector<StmtDoc>{std::make_shared<ReturnDocNode>(Id("x", IdKind::kLocal))});
  if_expr->comment = "si=branch";
  auto inner = std::make_shared<FunctionExprDocNode>(
      std::vector<AssignDoc>{Assign(Id("y", IdKind::kLocal), nullptr)}, nullptr,
      std::vector<StmtDoc>{std::make_shared<ReturnDocNode>(Id("y", IdKind::kLocal))});
  auto let = Assign(Id("z", IdKind::kLocal), Id("0", IdKind::kTemp));
  let->is_let = true;
  let->comment = "let_si=bind";
  auto function = std::make_shared<FunctionDocNode>(
      Id("main", IdKind::kGlobal), std::vector<AssignDoc>{param, attr}, std::vector<ExprDoc>{},
      nullptr,
      std::vector<StmtDoc>{Assign(Id("0", IdKind::kTemp), if_expr),
                           Assign(Id("2", IdKind::kTemp), inner), let,
                           std::make_shared<ReturnDocNode>(Id("z", IdKind::kLocal))});
  function->comment = "si=main";
  return function;
}

TEST(DocRenderTest, RelayRendersGraphForms) {
  EXPECT_EQ(RenderRelay(GraphLikeFunction()),
            "def @main(%x {virtual_device=VirtualDevice(device_type=\"cpu\")}: "
            "Tensor[(2,), float32] /* si=input */, Primitive=1) {\n"
            "  %0 = if (%c) {\n"
            "    %1 = nn.relu(%x) /* si=relu */;\n"
            "    %1\n"
            "  } else {\n"
            "    %x\n"
            "  } /* si=branch */;\n"
            "  %2 = fn (%y) {\n"
            "    %y\n"
            "  };\n"
            "  let %z = %0 /* let_si=bind */;\n"
            "  %z\n"
            "} /* si=main */\n");
}

TEST(DocRenderTest, ScriptUnfoldsScopesWithValues) {
  EXPECT_EQ(RenderScript(GraphLikeFunction()),
            "def main(x: R.annotate(Tensor[(2,), float32], "
            "virtual_device=VirtualDevice(device_type=\"cpu\")), Primitive=1):"
            "  # x: si=input; si=main\n"
            "    if c:  # si=branch\n"
            "        _1 = R.nn.relu(x)  # si=relu\n"
            "        _0 = _1\n"
            "    else:\n"
            "        _0 = x\n"
            "    def _2(y):\n"
            "        return y\n"
            "    z = _0  # let_si=bind\n"
            "    return z\n");
}

TEST(DocRenderTest, ModuleWithDecoratorsAndMetadata) {
  auto attrs = std::make_shared<CallDocNode>(Id("attrs"), std::vector<ExprDoc>{});
  attrs->kwargs_keys = {"name"};
  attrs->kwargs_values = {StringLiteral("m")};
  auto f = std::make_shared<FunctionDocNode>(
      Id("f", IdKind::kGlobal), std::vector<AssignDoc>{}, std::vector<ExprDoc>{}, Id("T"),
      std::vector<StmtDoc>{std::make_shared<ReturnDocNode>(IntLiteral(1))});
  auto g = std::make_shared<FunctionDocNode>(
      Id("g", IdKind::kGlobal), std::vector<AssignDoc>{}, std::vector<ExprDoc>{}, nullptr,
      std::vector<StmtDoc>{std::make_shared<ReturnDocNode>(IntLiteral(2))});
  auto module = std::make_shared<ClassDocNode>(Id("Module"), std::vector<ExprDoc>{attrs},
                                               std::vector<StmtDoc>{f, g});
  auto meta = std::make_shared<IndexDocNode>(Id("meta"), std::vector<ExprDoc>{IntLiteral(0)});
  auto entry =
      Assign(meta, std::make_shared<TensorBytesDocNode>(Id("T"), std::string("\x01\xab", 2)));
  auto doc = std::make_shared<StmtBlockDocNode>(std::vector<StmtDoc>{
      module, std::make_shared<MetadataDocNode>(std::vector<AssignDoc>{entry})});
  EXPECT_EQ(RenderRelay(doc),
            "#[attrs(name=\"m\")]\n"
            "def @f() -> T {\n"
            "  1\n"
            "}\n"
            "\n"
            "def @g() {\n"
            "  2\n"
            "}\n"
            "\n"
            "#[metadata]\n"
            "meta[0] = T 0x01ab;\n");
  EXPECT_EQ(RenderScript(doc),
            "@attrs(name=\"m\")\n"
            "class Module:\n"
            "    def f() -> T:\n"
            "        return 1\n"
            "\n"
            "    def g():\n"
            "        return 2\n"
            "\n"
            "# metadata\n"
            "meta[0] = R.tensor(T, \"0x01ab\")\n");
}

TEST(DocRenderTest, FunctionTypes) {
  auto type =
      std::make_shared<FunctionTypeDocNode>(std::vector<ExprDoc>{Id("A"), Id("B")}, Id("C"));
  EXPECT_EQ(RenderRelay(type), "fn (A, B) -> C");
  EXPECT_EQ(RenderScript(type), "Callable[[A, B], C]");
}

}  // namespace
}  // namespace kiln::printer
