// The lexer of the graph text format (docs/graph-text-format.md). Tokens are
// views into the source (no per-token allocation); the parser keeps the
// source alive while it runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln {

enum class TokenKind : uint8_t {
  kEnd,             // end of input (always the last token unless lexing failed)
  kError,           // a lexical error; LexResult::error says what, the token says where
  kIdent,           // identifier with letter-led dotted segments: nn.conv2d, float32, True
  kLocal,           // %x, %conv1.weight (text includes the '%')
  kTemp,            // %12 (text includes the '%')
  kGlobal,          // @main (text includes the '@')
  kNumber,          // -1, 2.5f, 1e-05f, 3i64: sign, digits, fraction, exponent, suffix
  kHex,             // 0x00ff (text includes "0x")
  kString,          // "..." (text includes the quotes; escapes undecoded)
  kSpanComment,     // /* si=SPAN */ (text is SPAN, without the key)
  kLetSpanComment,  // /* let_si=SPAN */
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kColon,
  kSemicolon,
  kEqual,
  kDot,
  kQuestion,
  kHash,
  kMinus,
  kArrow,
};

struct Token {
  TokenKind kind;
  std::string_view text;  // a view into the source
};

// Produces tokens on demand, so memory does not grow with the input and
// hostile text is rejected as soon as the parser sees enough of it. Any byte
// sequence is accepted as input: bytes the format does not allow outside
// strings and comments (NUL, invalid UTF-8, stray punctuation) give a kError
// token. After kEnd or kError, Next() keeps returning that token.
class Lexer {
 public:
  explicit Lexer(std::string_view source, size_t offset = 0) : src_(source), pos_(offset) {}

  Token Next();
  // What the kError token means (null before any error).
  const char* error() const { return error_; }

 private:
  void Emit(TokenKind kind, size_t begin, size_t end) {
    token_ = Token{kind, src_.substr(begin, end - begin)};
  }
  bool Fail(size_t begin, size_t end, const char* message);
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  bool SkipSpaceAndComments();
  bool IsSpanComment() const;
  bool LexToken();
  bool Punct(TokenKind kind);
  size_t ScanName(size_t p) const;
  bool LexSigil(TokenKind name_kind, bool allow_number);
  bool LexNumber(bool after_dot);
  bool LexString();
  bool LexSpanComment();

  std::string_view src_;
  size_t pos_ = 0;
  bool after_dot_ = false;
  bool done_ = false;
  Token token_{TokenKind::kEnd, {}};
  const char* error_ = nullptr;
};

struct LexResult {
  // Ends with kEnd, or with kError (and nothing after it) at the first error.
  std::vector<Token> tokens;
  const char* error = nullptr;  // the message for a trailing kError token
};

// Every token of `source` at once (for tests and tools).
LexResult Lex(std::string_view source);

// How a token reads in "found ..." of an error message.
const char* TokenKindName(TokenKind kind);

}  // namespace kiln
