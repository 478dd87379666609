// Diagnostics: underlines under chosen IR nodes, and the structural-equality failure report of
// the unified printer RFC (both sides printed, the first mismatch underlined on each).
#include <gtest/gtest.h>

#include "engine/ir/structural_equal.h"
#include "engine/printer/printer.h"
#include "tests/unit/printer/test_modules.h"

namespace kiln {
namespace {

using testing::CallOp;

// The RFC's example: two functions that differ only in one parameter's shape.
IRModule FuncWithParamShape(int64_t extent) {
  Var a = MakeVar("A", MakeTensorType({extent}, DataType::kInt32));
  return MakeModuleFromMain(MakeFunction({a}, CallOp("copy", {a})));
}

TEST(DiagnosticsTest, StructuralMismatchUnderlinesTheParameterType) {
  IRModule lhs = FuncWithParamShape(1);
  IRModule rhs = FuncWithParamShape(8);
  std::optional<StructuralMismatch> mismatch = FindFirstMismatch(lhs, rhs);
  ASSERT_TRUE(mismatch.has_value());
  const std::string report = RenderStructuralMismatch(lhs, rhs, *mismatch);
  const std::string header = "StructuralEqual check failed, first mismatch at " + mismatch->path +
                             ": " + mismatch->reason + "\n";
  EXPECT_EQ(report, header +
                        "def @main(%A: Tensor[(1), int32]) {\n"
                        "              ^^^^^^^^^^^^^^^^^^\n"
                        "  copy(%A)\n"
                        "}\n"
                        "\n"
                        "def @main(%A: Tensor[(8), int32]) {\n"
                        "              ^^^^^^^^^^^^^^^^^^\n"
                        "  copy(%A)\n"
                        "}\n");
}

TEST(DiagnosticsTest, StructuralMismatchInsideTheBody) {
  Var x = MakeVar("x");
  auto make = [&](std::vector<int64_t> strides) {
    Expr relu = CallOp("nn.relu", {x}, nullptr, "relu");
    Expr conv = CallOp("nn.conv2d", {relu, x}, MakeAttrs({{"strides", IntArray(strides)}}));
    return MakeModuleFromMain(MakeFunction({x}, CallOp("nn.relu", {conv})));
  };
  IRModule lhs = make({1, 1});
  IRModule rhs = make({2, 2});
  std::optional<StructuralMismatch> mismatch = FindFirstMismatch(lhs, rhs);
  ASSERT_TRUE(mismatch.has_value());
  const std::string report = RenderStructuralMismatch(lhs, rhs, *mismatch);
  EXPECT_NE(report.find("  %1 = nn.conv2d(%0, %x, strides=[1, 1]);\n"
                        "       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("  %1 = nn.conv2d(%0, %x, strides=[2, 2]);\n"
                        "       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"),
            std::string::npos)
      << report;
}

TEST(DiagnosticsTest, MismatchOfExpressionsPrintsFragments) {
  Var x = MakeVar("x");
  Expr lhs = CallOp("add", {CallOp("neg", {x}), x});
  Expr rhs = CallOp("add", {CallOp("exp", {x}), x});
  std::optional<StructuralMismatch> mismatch = FindFirstMismatch(lhs, rhs);
  ASSERT_TRUE(mismatch.has_value());
  const std::string report = RenderStructuralMismatch(lhs, rhs, *mismatch);
  EXPECT_NE(report.find("\n%0 = neg(%x);\n"), std::string::npos) << report;
  EXPECT_NE(report.find("\n%0 = exp(%x);\n"), std::string::npos) << report;
  EXPECT_NE(report.find("^"), std::string::npos) << report;
}

TEST(DiagnosticsTest, UnderlinesEveryPlaceANodePrints) {
  Var x = MakeVar("x");
  Call relu = CallOp("nn.relu", {x}, nullptr, "relu1");
  Expr body = CallOp("add", {relu, x});
  IRModule module = MakeModuleFromMain(MakeFunction({x}, body));
  EXPECT_EQ(PrintModuleWithUnderlines(module, {relu}),
            "def @main(%x) {\n"
            "  %0 = nn.relu(%x) /* si=relu1 */;\n"
            "       ^^^^^^^^^^^\n"
            "  add(%0, %x)\n"
            "}\n");
  // A variable: its parameter and both uses.
  EXPECT_EQ(PrintModuleWithUnderlines(module, {x}),
            "def @main(%x) {\n"
            "          ^^\n"
            "  %0 = nn.relu(%x) /* si=relu1 */;\n"
            "               ^^\n"
            "  add(%0, %x)\n"
            "          ^^\n"
            "}\n");
  // The function: its first line.
  EXPECT_EQ(PrintModuleWithUnderlines(module, {module->functions[0].second}),
            "def @main(%x) {\n"
            "^^^^^^^^^^^^^^^\n"
            "  %0 = nn.relu(%x) /* si=relu1 */;\n"
            "  add(%0, %x)\n"
            "}\n");
  EXPECT_EQ(PrintExprWithUnderlines(body, {body}),
            "%0 = nn.relu(%x) /* si=relu1 */;\n"
            "add(%0, %x)\n"
            "^^^^^^^^^^^\n");
}

TEST(DiagnosticsTest, UnderlinesInTheScriptFormat) {
  Var x = MakeVar("x");
  Call relu = CallOp("nn.relu", {x}, nullptr, "relu1");
  IRModule module = MakeModuleFromMain(MakeFunction({x}, CallOp("add", {relu, x})));
  PrintOptions script;
  script.format = PrintOptions::Format::kScript;
  EXPECT_EQ(PrintModuleWithUnderlines(module, {relu}, script),
            "class Module:\n"
            "    def main(x):\n"
            "        _0 = R.nn.relu(x)  # si=relu1\n"
            "             ^^^^^^^^^^^^\n"
            "        return R.add(_0, x)\n");
}

}  // namespace
}  // namespace kiln
