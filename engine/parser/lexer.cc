// A single-pass, allocation-free scanner for the graph text format.
#include "engine/parser/lexer.h"

#include <utility>

#include "engine/support/identifier.h"

namespace kiln {

namespace {

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

Token Lexer::Next() {
  if (done_) return token_;
  if (!SkipSpaceAndComments()) {
    done_ = true;
  } else if (pos_ >= src_.size()) {
    Emit(TokenKind::kEnd, pos_, pos_);
    done_ = true;
  } else if (!LexToken()) {
    done_ = true;
  }
  return token_;
}

bool Lexer::Fail(size_t begin, size_t end, const char* message) {
  Emit(TokenKind::kError, begin, end);
  error_ = message;
  return false;
}

// Skips whitespace, `//` comments and plain `/* */` comments. Stops in front
// of a span comment, which is a token. Returns false on a lexical error.
bool Lexer::SkipSpaceAndComments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && At(pos_ + 1) == '/') {
      size_t nl = src_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? src_.size() : nl + 1;
    } else if (c == '/' && At(pos_ + 1) == '*') {
      if (IsSpanComment()) return true;
      size_t close = src_.find("*/", pos_ + 2);
      if (close == std::string_view::npos) {
        return Fail(pos_, pos_ + 2, "unterminated comment: '/*' without a closing '*/'");
      }
      pos_ = close + 2;
    } else {
      return true;
    }
  }
  return true;
}

// At "/*": is this `/* si=` or `/* let_si=` (spaces optional)?
bool Lexer::IsSpanComment() const {
  size_t p = pos_ + 2;
  while (At(p) == ' ' || At(p) == '\t') ++p;
  std::string_view rest = src_.substr(p);
  return rest.starts_with("si=") || rest.starts_with("let_si=");
}

bool Lexer::LexToken() {
  size_t begin = pos_;
  char c = src_[pos_];
  bool after_dot = std::exchange(after_dot_, false);
  if (IsIdentStart(c)) {
    pos_ = ScanName(pos_);
    Emit(TokenKind::kIdent, begin, pos_);
    return true;
  }
  if (IsDigit(c) || (c == '-' && IsDigit(At(pos_ + 1)))) return LexNumber(after_dot);
  switch (c) {
    case '%':
      return LexSigil(TokenKind::kLocal, /*allow_number=*/true);
    case '@':
      return LexSigil(TokenKind::kGlobal, /*allow_number=*/false);
    case '"':
      return LexString();
    case '/':
      if (At(pos_ + 1) == '*') return LexSpanComment();
      return Fail(pos_, pos_ + 1, "unexpected character '/'");
    case '-':
      if (At(pos_ + 1) == '>') {
        pos_ += 2;
        Emit(TokenKind::kArrow, begin, pos_);
        return true;
      }
      return Punct(TokenKind::kMinus);
    case '(':
      return Punct(TokenKind::kLParen);
    case ')':
      return Punct(TokenKind::kRParen);
    case '[':
      return Punct(TokenKind::kLBracket);
    case ']':
      return Punct(TokenKind::kRBracket);
    case '{':
      return Punct(TokenKind::kLBrace);
    case '}':
      return Punct(TokenKind::kRBrace);
    case ',':
      return Punct(TokenKind::kComma);
    case ':':
      return Punct(TokenKind::kColon);
    case ';':
      return Punct(TokenKind::kSemicolon);
    case '=':
      return Punct(TokenKind::kEqual);
    case '?':
      return Punct(TokenKind::kQuestion);
    case '#':
      return Punct(TokenKind::kHash);
    case '.':
      ++pos_;
      Emit(TokenKind::kDot, begin, pos_);
      // `%2.0.1` is two tuple indices, not the number "0.1".
      after_dot_ = true;
      return true;
    default:
      break;
  }
  if (static_cast<unsigned char>(c) >= 0x80) {
    return Fail(pos_, pos_ + 1, "unexpected non-ASCII byte outside a string or comment");
  }
  return Fail(pos_, pos_ + 1, "unexpected character");
}

bool Lexer::Punct(TokenKind kind) {
  ++pos_;
  Emit(kind, pos_ - 1, pos_);
  return true;
}

// An identifier: segments of [A-Za-z_][A-Za-z0-9_]* joined by '.', where a
// dot continues the name only when a letter or '_' follows it.
size_t Lexer::ScanName(size_t p) const {
  while (true) {
    while (IsIdentChar(At(p))) ++p;
    if (At(p) == '.' && IsIdentStart(At(p + 1))) {
      ++p;
      continue;
    }
    return p;
  }
}

bool Lexer::LexSigil(TokenKind name_kind, bool allow_number) {
  size_t begin = pos_;
  char c = At(pos_ + 1);
  if (IsIdentStart(c)) {
    pos_ = ScanName(pos_ + 1);
    Emit(name_kind, begin, pos_);
    return true;
  }
  if (allow_number && IsDigit(c)) {
    pos_ += 1;
    while (IsDigit(At(pos_))) ++pos_;
    Emit(TokenKind::kTemp, begin, pos_);
    return true;
  }
  return Fail(begin, begin + 1,
              allow_number ? "expected a name or a number after '%'" : "expected a name after '@'");
}

bool Lexer::LexNumber(bool after_dot) {
  size_t begin = pos_;
  if (!after_dot && src_[pos_] == '0' && (At(pos_ + 1) == 'x' || At(pos_ + 1) == 'X')) {
    pos_ += 2;
    while (IsHexDigit(At(pos_))) ++pos_;
    Emit(TokenKind::kHex, begin, pos_);
    return true;
  }
  if (src_[pos_] == '-') ++pos_;
  while (IsDigit(At(pos_))) ++pos_;
  if (after_dot) {
    Emit(TokenKind::kNumber, begin, pos_);
    return true;
  }
  if (At(pos_) == '.' && IsDigit(At(pos_ + 1))) {
    ++pos_;
    while (IsDigit(At(pos_))) ++pos_;
  }
  if (At(pos_) == 'e' || At(pos_) == 'E') {
    size_t p = pos_ + 1;
    if (At(p) == '+' || At(p) == '-') ++p;
    if (IsDigit(At(p))) {
      while (IsDigit(At(p))) ++p;
      pos_ = p;
    }
  }
  // A suffix: f, f64, i64 (checked by the parser).
  if (IsIdentStart(At(pos_))) {
    while (IsIdentChar(At(pos_))) ++pos_;
  }
  Emit(TokenKind::kNumber, begin, pos_);
  return true;
}

bool Lexer::LexString() {
  size_t begin = pos_;
  size_t p = pos_ + 1;
  while (p < src_.size()) {
    char c = src_[p];
    if (c == '"') {
      pos_ = p + 1;
      Emit(TokenKind::kString, begin, pos_);
      return true;
    }
    if (c == '\n') break;
    p += (c == '\\' && p + 1 < src_.size() && src_[p + 1] != '\n') ? 2 : 1;
  }
  return Fail(begin, begin + 1, "unterminated string: '\"' without a closing '\"' on its line");
}

// `/* si=SPAN */` or `/* let_si=SPAN */`. SPAN may hold quoted names that
// contain "*/", so quotes are skipped while looking for the end.
bool Lexer::LexSpanComment() {
  size_t begin = pos_;
  size_t p = pos_ + 2;
  while (At(p) == ' ' || At(p) == '\t') ++p;
  TokenKind kind = TokenKind::kSpanComment;
  if (src_.substr(p).starts_with("let_si=")) {
    kind = TokenKind::kLetSpanComment;
    p += 7;
  } else {
    p += 3;  // "si="
  }
  size_t content = p;
  while (p < src_.size()) {
    char c = src_[p];
    if (c == '*' && At(p + 1) == '/') {
      size_t end = p;
      while (end > content && (src_[end - 1] == ' ' || src_[end - 1] == '\t')) --end;
      pos_ = p + 2;
      token_ = Token{kind, src_.substr(content, end - content)};
      return true;
    }
    if (c == '"') {
      ++p;
      while (p < src_.size() && src_[p] != '"') p += src_[p] == '\\' ? 2 : 1;
      if (p >= src_.size()) break;
    }
    ++p;
  }
  return Fail(begin, begin + 2, "unterminated span comment: '/*' without a closing '*/'");
}

LexResult Lex(std::string_view source) {
  LexResult result;
  Lexer lexer(source);
  while (true) {
    result.tokens.push_back(lexer.Next());
    TokenKind kind = result.tokens.back().kind;
    if (kind == TokenKind::kEnd || kind == TokenKind::kError) break;
  }
  result.error = lexer.error();
  return result;
}

const char* TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kError:
      return "invalid text";
    case TokenKind::kIdent:
      return "identifier";
    case TokenKind::kLocal:
      return "variable";
    case TokenKind::kTemp:
      return "temporary";
    case TokenKind::kGlobal:
      return "global name";
    case TokenKind::kNumber:
      return "number";
    case TokenKind::kHex:
      return "hex bytes";
    case TokenKind::kString:
      return "string";
    case TokenKind::kSpanComment:
      return "span comment";
    case TokenKind::kLetSpanComment:
      return "let span comment";
    case TokenKind::kLParen:
      return "'('";
    case TokenKind::kRParen:
      return "')'";
    case TokenKind::kLBracket:
      return "'['";
    case TokenKind::kRBracket:
      return "']'";
    case TokenKind::kLBrace:
      return "'{'";
    case TokenKind::kRBrace:
      return "'}'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kSemicolon:
      return "';'";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kDot:
      return "'.'";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kHash:
      return "'#'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kArrow:
      return "'->'";
  }
  return "token";
}

}  // namespace kiln
