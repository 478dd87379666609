// The lexer splits text the way the format's name and number rules say, and
// stops with an error token (never a crash) on bytes the format does not allow.
#include "engine/parser/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

std::vector<std::pair<TokenKind, std::string>> Tokens(std::string_view text) {
  std::vector<std::pair<TokenKind, std::string>> out;
  for (const Token& token : Lex(text).tokens) out.emplace_back(token.kind, std::string(token.text));
  return out;
}

using K = TokenKind;

TEST(LexerTest, NamesTakeDotsOnlyBeforeLetters) {
  auto tokens = Tokens("%x.0 %layer1_0.conv.weight nn.conv2d @f.g %12.3.4");
  std::vector<std::pair<TokenKind, std::string>> expected = {
      {K::kLocal, "%x"},        {K::kDot, "."},
      {K::kNumber, "0"},        {K::kLocal, "%layer1_0.conv.weight"},
      {K::kIdent, "nn.conv2d"}, {K::kGlobal, "@f.g"},
      {K::kTemp, "%12"},        {K::kDot, "."},
      {K::kNumber, "3"},        {K::kDot, "."},
      {K::kNumber, "4"},        {K::kEnd, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(LexerTest, NumbersKeepSignExponentAndSuffix) {
  auto tokens = Tokens("1f -2.5f 1e-05f 1e+10f 3i64 1f64 -7 0x00ff 0x -inff");
  std::vector<std::pair<TokenKind, std::string>> expected = {
      {K::kNumber, "1f"},   {K::kNumber, "-2.5f"}, {K::kNumber, "1e-05f"}, {K::kNumber, "1e+10f"},
      {K::kNumber, "3i64"}, {K::kNumber, "1f64"},  {K::kNumber, "-7"},     {K::kHex, "0x00ff"},
      {K::kHex, "0x"},      {K::kMinus, "-"},      {K::kIdent, "inff"},    {K::kEnd, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(LexerTest, SpanCommentsAreTokensOtherCommentsAreSkipped) {
  auto tokens = Tokens("a /* plain */ b // line\n c /* si=x:1:2-3:4 */ /*let_si=[\"*/\", y]*/");
  std::vector<std::pair<TokenKind, std::string>> expected = {{K::kIdent, "a"},
                                                             {K::kIdent, "b"},
                                                             {K::kIdent, "c"},
                                                             {K::kSpanComment, "x:1:2-3:4"},
                                                             {K::kLetSpanComment, "[\"*/\", y]"},
                                                             {K::kEnd, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(LexerTest, ErrorsEndTheTokenStream) {
  struct Case {
    std::string text;
    std::string error;
  };
  Case cases[] = {
      {std::string("a \0 b", 5), "unexpected character"},
      {"a \xff b", "unexpected non-ASCII byte outside a string or comment"},
      {"a /* never closed", "unterminated comment: '/*' without a closing '*/'"},
      {"a /* si=\"*/ b", "unterminated span comment: '/*' without a closing '*/'"},
      {"\"abc\ndef\"", "unterminated string: '\"' without a closing '\"' on its line"},
      {"% x", "expected a name or a number after '%'"},
      {"@1", "expected a name after '@'"},
  };
  for (const Case& c : cases) {
    LexResult result = Lex(c.text);
    ASSERT_FALSE(result.tokens.empty());
    EXPECT_EQ(result.tokens.back().kind, TokenKind::kError) << c.text;
    ASSERT_NE(result.error, nullptr);
    EXPECT_EQ(std::string(result.error), c.error);
  }
  // Inside strings and comments any byte is fine.
  LexResult ok = Lex(std::string("\"\xff\xfe\" /* \0\xff */ // \x01\n", 19));
  EXPECT_EQ(ok.tokens.back().kind, TokenKind::kEnd);
}

}  // namespace
}  // namespace kiln
