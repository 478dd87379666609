// Caret lines: exact columns, several ranges per line, multi-line ranges, and highlights
// recorded by the renderers from Doc sources.
#include "engine/printer/underline.h"

#include <gtest/gtest.h>

#include "engine/ir/expr.h"
#include "engine/printer/relay_renderer.h"
#include "engine/printer/script_renderer.h"

namespace kiln::printer {
namespace {

TEST(UnderlineTest, MarksExactColumns) {
  EXPECT_EQ(AddUnderlines("abc def\nghi\n", {{4, 7}}), "abc def\n    ^^^\nghi\n");
  EXPECT_EQ(AddUnderlines("abc def\nghi\n", {{8, 11}}), "abc def\nghi\n^^^\n");
}

TEST(UnderlineTest, MergesRangesOnOneLine) {
  EXPECT_EQ(AddUnderlines("f(a, b)\n", {{2, 3}, {5, 6}}), "f(a, b)\n  ^  ^\n");
}

TEST(UnderlineTest, MultiLineRangeUnderlinesItsFirstLine) {
  EXPECT_EQ(AddUnderlines("x = {\n  y\n}\n", {{4, 11}}), "x = {\n    ^\n  y\n}\n");
}

TEST(UnderlineTest, SkipsLeadingIndentation) {
  EXPECT_EQ(AddUnderlines("a\n  b;\n", {{2, 7}}), "a\n  b;\n  ^^\n");
}

TEST(UnderlineTest, UnterminatedLastLine) {
  EXPECT_EQ(AddUnderlines("abc", {{1, 2}}), "abc\n ^");
  EXPECT_EQ(AddUnderlines("abc", {}), "abc");
}

TEST(UnderlineTest, EmptyRangeGetsOneCaret) {
  EXPECT_EQ(AddUnderlines("abc\n", {{1, 1}}), "abc\n ^\n");
}

TEST(UnderlineTest, RenderersUnderlineDocsOfAGivenSource) {
  Var x = MakeVar("x");
  auto call = std::make_shared<CallDocNode>(Id("f", IdKind::kOp),
                                            std::vector<ExprDoc>{Id("y", IdKind::kLocal)});
  auto arg = Id("x", IdKind::kLocal);
  arg->source = x;
  call->args.push_back(arg);
  call->comment = "si=f";
  RenderOptions options;
  options.highlight_sources.insert(x.get());
  // The comment is not part of the underlined text.
  EXPECT_EQ(RenderRelay(call, options), "f(%y, %x) /* si=f */\n      ^^");
  EXPECT_EQ(RenderScript(call, options), "R.f(y, x)  # si=f\n       ^\n");
}

}  // namespace
}  // namespace kiln::printer
