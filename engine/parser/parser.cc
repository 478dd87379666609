// Entry points of the graph-text parser, token helpers and errors, and the
// module level: `#[attrs(...)]`, `def`s, and the `#[metadata]` table.
#include "engine/parser/parser.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "engine/parser/diagnostic.h"
#include "engine/parser/parser_impl.h"
#include "engine/support/status_macros.h"

namespace kiln {

namespace parser_internal {

namespace {

// The offset of the `#` of `#[metadata]`, found by lexing the whole text
// (only when the word occurs at all, which keeps plain modules one pass).
std::optional<size_t> FindMetadataHeader(std::string_view text) {
  if (text.find("metadata") == std::string_view::npos) return std::nullopt;
  Lexer lexer(text);
  Token window[4] = {};
  while (true) {
    Token token = lexer.Next();
    if (token.kind == TokenKind::kEnd || token.kind == TokenKind::kError) return std::nullopt;
    window[0] = window[1];
    window[1] = window[2];
    window[2] = window[3];
    window[3] = token;
    if (window[0].kind == TokenKind::kHash && window[1].kind == TokenKind::kLBracket &&
        window[2].kind == TokenKind::kIdent && window[2].text == "metadata" &&
        window[3].kind == TokenKind::kRBracket) {
      return static_cast<size_t>(window[0].text.data() - text.data());
    }
  }
}

// A token as quoted in "found ...": printable, and short.
std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
    case TokenKind::kSpanComment:
    case TokenKind::kLetSpanComment:
      return TokenKindName(token.kind);
    default:
      break;
  }
  constexpr size_t kMaxShown = 32;
  std::string shown;
  for (size_t i = 0; i < token.text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(token.text[i]);
    shown.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  if (token.text.size() > kMaxShown) shown += "...";
  return MessageCat("'", shown, "'");
}

// The lowest address this thread's stack may reach, plus a reserve for the
// error path below the last nesting check; null when the system cannot say.
// Asking the system can read /proc, so each thread asks once.
const char* ThreadStackLimit() {
  thread_local const char* const limit = []() -> const char* {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return nullptr;
    void* low = nullptr;
    size_t size = 0;
    int rc = pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    if (rc != 0 || low == nullptr) return nullptr;
    size_t reserve = std::min<size_t>(size / 4, 256 * 1024);
    return static_cast<const char*>(low) + reserve;
  }();
  return limit;
}

}  // namespace

Parser::Parser(std::string_view text, const ParseOptions& options)
    : text_(text),
      options_(options),
      stream_(Lexer(text)),
      stack_limit_(ThreadStackLimit()),
      metadata_offset_(FindMetadataHeader(text)) {
  if (metadata_offset_) stream_.stop_at = text_.data() + *metadata_offset_;
}

absl::Status Parser::ErrorAt(size_t offset, std::string_view message) const {
  return MakeParseError(options_.source_name, text_, offset, message);
}

absl::Status Parser::Unexpected(const Token& token, std::string_view expected) const {
  if (token.kind == TokenKind::kError) return ErrorAt(Offset(token), stream_.lexer.error());
  return ErrorAt(Offset(token),
                 MessageCat("expected ", expected, ", found ", DescribeToken(token)));
}

absl::Status Parser::Expect(TokenKind kind, std::string_view expected) {
  if (!Check(kind)) return Unexpected(Peek(), expected);
  Next();
  return absl::OkStatus();
}

absl::Status Parser::ExpectIdent(std::string_view word, std::string_view expected) {
  if (!CheckIdent(word)) return Unexpected(Peek(), expected);
  Next();
  return absl::OkStatus();
}

absl::Status Parser::TooDeep() const {
  if (depth_ <= options_.max_nesting_depth) {
    return ErrorAt(Offset(Peek()),
                   MessageCat("nesting of ", depth_, " levels exceeds the stack of this thread"));
  }
  return ErrorAt(Offset(Peek()), MessageCat("nesting exceeds the limit of ",
                                            options_.max_nesting_depth, " levels"));
}

absl::StatusOr<IRModule> Parser::ParseModule() {
  Attrs attrs;
  if (Check(TokenKind::kHash) && !AtEnd()) KILN_RETURN_IF_ERROR(ParseModuleAttrs(&attrs));
  std::vector<IRModuleNode::Entry> functions;
  while (!AtEnd()) {
    if (!CheckIdent("def")) {
      return Unexpected(Peek(), functions.empty() && !attrs ? "'def' or '#[attrs(...)]'"
                                                            : "'def' or '#[metadata]'");
    }
    KILN_RETURN_IF_ERROR(ParseDef(&functions));
  }
  if (metadata_offset_) KILN_RETURN_IF_ERROR(EnsureMetadata(Offset(Peek())));
  KILN_RETURN_IF_ERROR(CheckGlobalsDefined());
  return MakeModule(std::move(functions), std::move(attrs));
}

absl::StatusOr<Expr> Parser::ParseFragment() {
  allow_free_vars_ = true;
  KILN_ASSIGN_OR_RETURN(Expr expr, ParseBody());
  if (!AtEnd()) return Unexpected(Peek(), "end of input after the result expression");
  if (metadata_offset_) KILN_RETURN_IF_ERROR(EnsureMetadata(Offset(Peek())));
  return expr;
}

absl::StatusOr<Type> Parser::ParseStandaloneType() {
  KILN_ASSIGN_OR_RETURN(Type type, ParseType());
  if (Peek().kind != TokenKind::kEnd) return Unexpected(Peek(), "end of input after the type");
  return type;
}

absl::Status Parser::ParseModuleAttrs(Attrs* attrs) {
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kHash, "'#'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' after '#'"));
  KILN_RETURN_IF_ERROR(ExpectIdent("attrs", "'attrs' in '#[attrs(...)]'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after '#[attrs'"));
  std::vector<AttrsNode::Field> fields;
  if (!Check(TokenKind::kRParen)) {
    do {
      KILN_RETURN_IF_ERROR(ParseAttrField(&fields));
    } while (Accept(TokenKind::kComma));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the module attributes"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' to close '#[attrs(...)'"));
  *attrs = MakeAttrs(std::move(fields));
  return absl::OkStatus();
}

absl::Status Parser::ParseDef(std::vector<IRModuleNode::Entry>* functions) {
  Next();  // def
  const Token& name = Peek();
  if (name.kind != TokenKind::kGlobal)
    return Unexpected(name, "a function name (@name) after 'def'");
  Next();
  GlobalInfo& info = globals_[name.text.substr(1)];
  if (info.defined) {
    return ErrorAt(Offset(name), MessageCat("function ", name.text, " is defined twice"));
  }
  if (!info.var) {
    info.var = MakeGlobalVar(std::string(name.text.substr(1)));
    info.first_use = Offset(name);
  }
  info.defined = true;
  GlobalVar var = info.var;  // `info` may move as globals_ grows
  // Temporaries are numbered per top-level function.
  scopes_.ResetTemps();
  KILN_ASSIGN_OR_RETURN(Function function, ParseFunctionRest());
  functions->emplace_back(std::move(var), std::move(function));
  return absl::OkStatus();
}

absl::Status Parser::CheckGlobalsDefined() const {
  const std::pair<const std::string_view, GlobalInfo>* first = nullptr;
  for (const auto& entry : globals_) {
    if (entry.second.defined) continue;
    if (first == nullptr || entry.second.first_use < first->second.first_use) first = &entry;
  }
  if (first == nullptr) return absl::OkStatus();
  return ErrorAt(first->second.first_use,
                 MessageCat("unknown function @", first->first, " (no 'def @", first->first,
                            "' in this module)"));
}

absl::Status Parser::EnsureMetadata(size_t use_offset) {
  if (metadata_parsed_) return absl::OkStatus();
  if (!metadata_offset_) {
    return ErrorAt(use_offset,
                   "metadata reference without a '#[metadata]' table in the text (print with "
                   "metadata shown to include it)");
  }
  // Read the table with a token stream of its own, then resume where parsing was.
  TokenStream saved = std::exchange(stream_, TokenStream(Lexer(text_, *metadata_offset_)));
  absl::Status status = ParseMetadataTable();
  stream_ = saved;
  metadata_parsed_ = status.ok();
  return status;
}

absl::Status Parser::ParseMetadataTable() {
  // The header was matched when the parser was made.
  for (int i = 0; i < 4; ++i) Next();
  while (Peek().kind != TokenKind::kEnd) KILN_RETURN_IF_ERROR(ParseMetadataEntry());
  return absl::OkStatus();
}

absl::Status Parser::ParseMetadataEntry() {
  KILN_RETURN_IF_ERROR(
      ExpectIdent("meta", "a metadata entry 'meta[Constant][K] = TYPE 0x...;' or end of input"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' after 'meta'"));
  KILN_RETURN_IF_ERROR(ExpectIdent("Constant", "'Constant' (the only metadata kind)"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' after 'meta[Constant'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' before the metadata index"));
  const Token& index_token = Next();
  KILN_ASSIGN_OR_RETURN(int64_t index, ParseIndex(index_token, "a metadata index", INT32_MAX));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' after the metadata index"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'meta[Constant][K]'"));
  const Token& type_token = Peek();
  KILN_ASSIGN_OR_RETURN(Type type, ParseType());
  const auto* tensor_type = type.as<TensorTypeNode>();
  if (tensor_type == nullptr) {
    return ErrorAt(Offset(type_token), "a metadata constant needs a tensor type");
  }
  std::vector<int64_t> shape;
  // The byte count the type implies, refusing shapes whose size overflows.
  uint64_t expected = static_cast<uint64_t>(DataTypeBytes(tensor_type->dtype));
  for (const Dim& dim : tensor_type->shape) {
    if (!dim.is_static()) {
      return ErrorAt(Offset(type_token), "a metadata constant needs static dimensions");
    }
    shape.push_back(dim.value);
    uint64_t extent = static_cast<uint64_t>(dim.value);
    if (extent != 0 && expected > (uint64_t{1} << 62) / extent) {
      return ErrorAt(Offset(type_token), "the metadata constant's type is too large");
    }
    expected *= extent;
  }
  const Token& hex = Peek();
  if (hex.kind != TokenKind::kHex) return Unexpected(hex, "the constant's bytes as 0x<hex digits>");
  Next();
  std::string_view digits = hex.text.substr(2);
  if (digits.size() % 2 != 0) {
    return ErrorAt(Offset(hex), "hex bytes need an even number of digits");
  }
  if (digits.size() / 2 != expected) {
    return ErrorAt(Offset(hex), MessageCat("meta[Constant][", index, "] has ", digits.size() / 2,
                                           " bytes, but its type needs ", expected));
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;  // the lexer admits only hex digits
  };
  std::string bytes(digits.size() / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>(nibble(digits[2 * i]) * 16 + nibble(digits[2 * i + 1]));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kSemicolon, "';' after the metadata entry"));
  auto [it, inserted] = meta_data_.try_emplace(index);
  if (!inserted) {
    return ErrorAt(Offset(index_token), MessageCat("meta[Constant][", index, "] is defined twice"));
  }
  it->second = MakeTensorData(tensor_type->dtype, std::move(shape), std::move(bytes));
  return absl::OkStatus();
}

}  // namespace parser_internal

absl::StatusOr<IRModule> ParseModule(std::string_view text, const ParseOptions& options) {
  return parser_internal::Parser(text, options).ParseModule();
}

absl::StatusOr<Expr> ParseExpr(std::string_view text, const ParseOptions& options) {
  return parser_internal::Parser(text, options).ParseFragment();
}

absl::StatusOr<Type> ParseType(std::string_view text, const ParseOptions& options) {
  return parser_internal::Parser(text, options).ParseStandaloneType();
}

}  // namespace kiln
