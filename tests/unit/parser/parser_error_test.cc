// Parse errors a user sees: exact line:column, the offending line, a caret
// under the column and what was expected; hostile input (deep nesting, stray
// bytes, truncation) yields an error, never a crash. The errors of ordinary
// text are lit tests (tests/lit/parser/errors/); here are the cases a text
// file holds badly: a control byte, tabs, input ending mid-expression.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine/parser/parser.h"

namespace kiln {
namespace {

std::string ModuleError(std::string_view text, const ParseOptions& options = {}) {
  absl::StatusOr<IRModule> module = ParseModule(text, options);
  if (module.ok()) return "<parsed>";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

struct ErrorCase {
  const char* name;
  const char* text;
  const char* message;  // the whole message: location, line and caret
};

class ParserErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, ReportsLocationLineAndCaret) {
  ParseOptions options;
  options.source_name = "bad.kir";
  EXPECT_EQ(ModuleError(GetParam().text, options), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParserErrorTest,
    ::testing::Values(ErrorCase{"TruncatedInput", "def @main(%x) {\n  %0 = add(%x,",
                                "bad.kir:2:15: error: expected an expression, found end of input\n"
                                "  %0 = add(%x,\n"
                                "              ^"},
                      ErrorCase{"StrayByte", "def @main(%x) {\n  \x01%x\n}\n",
                                "bad.kir:2:3: error: unexpected character\n"
                                "  ?%x\n"
                                "  ^"},
                      ErrorCase{"TabsKeepTheCaretAligned", "def @main(%x) {\n\t\tadd(%x, ])\n}\n",
                                "bad.kir:2:11: error: expected an expression, found ']'\n"
                                "\t\tadd(%x, ])\n"
                                "\t\t        ^"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ParserHostileInputTest, DeepParenthesesAreAnErrorNotAStackOverflow) {
  std::string text =
      "def @main(%x) {\n  " + std::string(100000, '(') + "%x" + std::string(100000, ')') + "\n}\n";
  std::string message = ModuleError(text);
  EXPECT_NE(message.find("error: nesting exceeds the limit of 1000 levels"), std::string::npos)
      << message.substr(0, 200);
}

TEST(ParserHostileInputTest, DeepIfsFunctionsTypesAndArraysAreErrors) {
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 50000;
  std::string ifs =
      "def @main(%c) {\n" + repeat("if (%c) { ", n) + "%c" + repeat(" } else { %c }", n) + "\n}\n";
  std::string fns = "def @main() {\n" + repeat("fn () { ", n) + "1f" + repeat(" }", n) + "\n}\n";
  std::string types = "def @main(%x: " + repeat("(", n) + "Tensor[(), float32]" + repeat(",)", n) +
                      ") {\n  %x\n}\n";
  std::string arrays = "def @main(%x) {\n  f(%x, a=" + repeat("[", n) + repeat("]", n) + ")\n}\n";
  std::string blocks = "def @main() {\n" + repeat("{ ", n) + "1f" + repeat(" }", n) + "\n}\n";
  for (const std::string& text : {ifs, fns, types, arrays, blocks}) {
    std::string message = ModuleError(text);
    EXPECT_NE(message.find("nesting exceeds the limit"), std::string::npos)
        << message.substr(0, 200);
  }
}

TEST(ParserHostileInputTest, HugeTokenDenseInputIsRejectedAtTheLimit) {
  // Tokens are read on demand: 50 million '(' are not lexed before the error.
  std::string text = "// metadata\ndef @main(%x) {\n  " + std::string(50'000'000, '(');
  std::string message = ModuleError(text);
  EXPECT_NE(message.find("3:1003: error: nesting exceeds the limit of 1000 levels"),
            std::string::npos)
      << message.substr(0, 200);
}

TEST(ParserHostileInputTest, NestingJustUnderTheLimitParses) {
  // 990 ifs, each bound to a temporary inside the then-branch of the last
  // (the canonical form), then as many nested functions and parentheses.
  const int n = 990;
  std::string ifs = "def @main(%c) {\n";
  for (int i = 0; i < n; ++i) ifs += "%" + std::to_string(i) + " = if (%c) {\n";
  ifs += "%c\n";
  for (int i = n - 1; i >= 0; --i) ifs += "} else { %c };\n%" + std::to_string(i) + "\n";
  ifs += "}\n";
  std::string fns = "def @main() {\n";
  for (int i = 0; i < n; ++i)
    fns += "%" + std::to_string(i) + " = fn (%p" + std::to_string(i) + ") {\n";
  fns += "%p0\n";
  for (int i = n - 1; i >= 0; --i) fns += "};\n%" + std::to_string(i) + "\n";
  fns += "}\n";
  std::string parens =
      "def @main(%x) {\n" + std::string(n, '(') + "%x" + std::string(n, ')') + "\n}\n";
  for (const std::string& text : {ifs, fns, parens}) EXPECT_EQ(ModuleError(text), "<parsed>");
}

TEST(ParserHostileInputTest, NestingLimitIsConfigurable) {
  std::string text = "def @main(%x) {\n  ((((%x))))\n}\n";
  ParseOptions tight;
  tight.max_nesting_depth = 3;
  EXPECT_NE(ModuleError(text, tight).find("nesting exceeds the limit of 3 levels"),
            std::string::npos);
  EXPECT_EQ(ModuleError(text), "<parsed>");
}

TEST(ParserHostileInputTest, EveryPrefixOfValidTextFailsCleanly) {
  const std::string text = R"(#[attrs(name="m", opset=13)]
def @main(%x {virtual_device=VirtualDevice(device_type="cpu")}: Tensor[(2, ?), float32] /* si=x */, Primitive=1) -> Tensor[(2, ?), float32] {
  %0 = nn.conv2d(%x, meta[Constant][0], strides=[2, 2], s="a\x01", sh=(1, N), f=1.5f, n=-inff) /* si=["c d":1:2-3:4, e] */;
  let %y: Tensor[(2, ?), float32] = %0 /* let_si=l */;
  %1 = if (True) { (%y,) } else { (%x,) };
  %2 = fn (%p) { %p.0 };
  %2(%1)
} /* si=f */

#[metadata]
meta[Constant][0] = Tensor[(1), int8] 0x7f;
)";
  ASSERT_EQ(ModuleError(text), "<parsed>");
  for (size_t n = 0; n < text.size(); ++n) {
    absl::StatusOr<IRModule> module = ParseModule(text.substr(0, n));
    // Some prefixes end at a complete function and are valid modules.
    if (!module.ok()) {
      EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(ParserHostileInputTest, RandomBytesAndMutationsNeverCrash) {
  const std::string valid = R"(def @main(%x: Tensor[(2), float32], %c) {
  %0 = add(%x, 1f /* si=one */) /* si=a:1:2-3:4 */;
  let %y = (%0, %x) /* let_si=[p, "q"] */;
  %1 = if (%c) { %y.0 } else { %y.1 };
  f(%1, a=[1, 2.5f, "s", (1, ?), float16, True])
}
)";
  std::mt19937 rng(1234);
  for (int i = 0; i < 3000; ++i) {
    std::string text = valid;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, "(){}[]%@,;=.\"/*:-0f\0\xff"[rng() % 22]);
          break;
      }
      if (text.empty()) text = "x";
    }
    (void)ParseModule(text);
    (void)ParseExpr(text);
    (void)ParseType(text);
  }
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>(rng() % 256));
  EXPECT_FALSE(ParseModule(garbage).ok());
  EXPECT_FALSE(ParseModule(std::string("def @main() {\n  1f\0\n}\n", 22)).ok());
}

TEST(ParserHostileInputTest, LongLinesAreShownAsAWindow) {
  std::string text = "def @main(%x) { " + std::string(5000, ' ') + "add(%x, ]) }";
  std::string message = ModuleError(text);
  size_t newline = message.find('\n');
  ASSERT_NE(newline, std::string::npos);
  std::string shown = message.substr(newline + 1, message.find('\n', newline + 1) - newline - 1);
  EXPECT_LE(shown.size(), 170u);
  std::string caret = message.substr(message.rfind('\n') + 1);
  EXPECT_EQ(shown[caret.size() - 1], ']');
}

}  // namespace
}  // namespace kiln
