// The leaves of the graph text: types, attribute values, virtual devices,
// span comments, scalar constants, metadata references and string escapes.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "engine/parser/diagnostic.h"
#include "engine/parser/parser_impl.h"
#include "engine/support/identifier.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln::parser_internal {

namespace {

// A number token split as the lexer built it: [-]digits[.digits][e[+-]digits] suffix.
struct NumberParts {
  std::string_view numeric;
  std::string_view suffix;
  bool is_integer = true;  // no fraction and no exponent
};

NumberParts SplitNumber(std::string_view text) {
  size_t p = 0;
  if (p < text.size() && text[p] == '-') ++p;
  while (p < text.size() && IsDigit(text[p])) ++p;
  NumberParts parts;
  if (p < text.size() && text[p] == '.') {
    parts.is_integer = false;
    ++p;
    while (p < text.size() && IsDigit(text[p])) ++p;
  }
  if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    size_t q = p + 1;
    if (q < text.size() && (text[q] == '+' || text[q] == '-')) ++q;
    if (q < text.size() && IsDigit(text[q])) {
      parts.is_integer = false;
      p = q;
      while (p < text.size() && IsDigit(text[p])) ++p;
    }
  }
  parts.numeric = text.substr(0, p);
  parts.suffix = text.substr(p);
  return parts;
}

// Decimal text to a float type. from_chars refuses subnormal results on some
// libraries (ERANGE), so those fall back to strtod/strtof; overflow fails.
template <typename T>
bool ParseFloating(std::string_view numeric, T* out) {
  // from_chars does not take a leading '+'; the lexer never produces one.
  auto [end, ec] = std::from_chars(numeric.data(), numeric.data() + numeric.size(), *out);
  if (ec == std::errc() && end == numeric.data() + numeric.size()) return true;
  if (ec != std::errc::result_out_of_range) return false;
  std::string copy(numeric);
  char* stop = nullptr;
  T value;
  if constexpr (std::is_same_v<T, float>) {
    value = std::strtof(copy.c_str(), &stop);
  } else {
    value = std::strtod(copy.c_str(), &stop);
  }
  if (std::isinf(value)) return false;
  *out = value;
  return true;
}

template <typename T>
TensorData ScalarData(DataType dtype, T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return MakeTensorData(dtype, {}, std::move(bytes));
}

// inff, nanf, inff64, nanf64 (optionally negated) as a double; false otherwise.
bool NonFiniteWord(std::string_view word, bool negative, double* value, bool* is_f64) {
  std::string_view base = word;
  *is_f64 = false;
  if (base.ends_with("f64")) {
    *is_f64 = true;
    base.remove_suffix(3);
  } else if (base.ends_with("f")) {
    base.remove_suffix(1);
  } else {
    return false;
  }
  if (base == "inf") {
    *value = std::numeric_limits<double>::infinity();
  } else if (base == "nan") {
    *value = std::numeric_limits<double>::quiet_NaN();
  } else {
    return false;
  }
  if (negative) *value = -*value;
  return true;
}

constexpr char kDimExpected[] = "a dimension (a non-negative integer, '?' or a name)";

}  // namespace

absl::StatusOr<int64_t> Parser::ParseIndex(const Token& token, std::string_view what,
                                           int64_t max) const {
  bool digits_only = token.kind == TokenKind::kNumber && !token.text.empty();
  for (char c : token.text) digits_only = digits_only && IsDigit(c);
  if (!digits_only) return Unexpected(token, what);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
  if (ec != std::errc() || value > max) {
    return ErrorAt(Offset(token), MessageCat(what, " must be at most ", max));
  }
  return value;
}

// --- Types ---

absl::StatusOr<Type> Parser::ParseType() {
  NestingGuard guard(this);
  if (guard.too_deep()) return TooDeep();
  const Token& token = Peek();
  if (token.kind == TokenKind::kIdent && token.text == "Tensor") {
    Next();
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' after 'Tensor'"));
    std::vector<Dim> dims;
    KILN_RETURN_IF_ERROR(ParseDims(&dims));
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between the shape and the dtype"));
    const Token& dtype_token = Peek();
    std::optional<DataType> dtype;
    if (dtype_token.kind == TokenKind::kIdent) dtype = ParseDataType(dtype_token.text);
    if (!dtype) return Unexpected(dtype_token, "a dtype (float32, int64, bool, ...)");
    Next();
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' to close the tensor type"));
    return Type(MakeTensorType(std::move(dims), *dtype));
  }
  if (token.kind == TokenKind::kLParen) {
    Next();
    std::vector<Type> fields;
    if (!Accept(TokenKind::kRParen)) {
      KILN_ASSIGN_OR_RETURN(Type first, ParseType());
      // `(T)` groups; `(T,)` is a one-field tuple type.
      if (Accept(TokenKind::kRParen)) return first;
      fields.push_back(std::move(first));
      KILN_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' or ')' in the tuple type"));
      while (!Check(TokenKind::kRParen)) {
        KILN_ASSIGN_OR_RETURN(Type field, ParseType());
        fields.push_back(std::move(field));
        if (!Accept(TokenKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the tuple type"));
    }
    return Type(MakeTupleType(std::move(fields)));
  }
  if (token.kind == TokenKind::kIdent && token.text == "fn") {
    Next();
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after 'fn' in a function type"));
    std::vector<Type> args;
    if (!Check(TokenKind::kRParen)) {
      do {
        KILN_ASSIGN_OR_RETURN(Type arg, ParseType());
        args.push_back(std::move(arg));
      } while (Accept(TokenKind::kComma));
    }
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the function type"));
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' and the result type"));
    KILN_ASSIGN_OR_RETURN(Type ret, ParseType());
    return Type(MakeFuncType(std::move(args), std::move(ret)));
  }
  return Unexpected(token, "a type (Tensor[...], a tuple type (...) or fn (...) -> ...)");
}

absl::Status Parser::ParseDims(std::vector<Dim>* dims) {
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' to open the shape"));
  while (!Check(TokenKind::kRParen)) {
    const Token& token = Peek();
    if (dims->size() >= static_cast<size_t>(kMaxTensorRank)) {
      return ErrorAt(Offset(token), MessageCat("a tensor type has more than the limit of ",
                                               kMaxTensorRank, " dimensions"));
    }
    if (token.kind == TokenKind::kQuestion) {
      dims->push_back(Dim::Symbolic());
    } else if (token.kind == TokenKind::kIdent) {
      dims->push_back(Dim::Symbolic(std::string(token.text)));
    } else if (token.kind == TokenKind::kNumber) {
      KILN_ASSIGN_OR_RETURN(int64_t extent,
                            ParseIndex(token, kDimExpected, std::numeric_limits<int64_t>::max()));
      dims->push_back(Dim::Static(extent));
    } else {
      return Unexpected(token, kDimExpected);
    }
    Next();
    if (!Accept(TokenKind::kComma)) break;
  }
  return Expect(TokenKind::kRParen, "',' or ')' in the shape");
}

// --- Attributes and virtual devices ---

absl::Status Parser::ParseAttrField(std::vector<AttrsNode::Field>* fields) {
  const Token& key = Peek();
  if (key.kind != TokenKind::kIdent) return Unexpected(key, "an attribute name");
  Next();
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the attribute name"));
  for (const auto& field : *fields) {
    if (field.first == key.text) {
      return ErrorAt(Offset(key), MessageCat("duplicate attribute '", key.text, "'"));
    }
  }
  KILN_ASSIGN_OR_RETURN(AttrValue value, ParseAttrValue());
  fields->emplace_back(std::string(key.text), std::move(value));
  return absl::OkStatus();
}

absl::StatusOr<AttrValue> Parser::ParseAttrValue() {
  NestingGuard guard(this);
  if (guard.too_deep()) return TooDeep();
  const Token& token = Peek();
  switch (token.kind) {
    case TokenKind::kNumber: {
      NumberParts parts = SplitNumber(token.text);
      if (parts.suffix.empty() || parts.suffix == "i64") {
        if (!parts.is_integer) {
          return ErrorAt(Offset(token),
                         "a float attribute value needs the suffix 'f' (as in 1.5f)");
        }
        int64_t value = 0;
        auto [end, ec] = std::from_chars(parts.numeric.data(),
                                         parts.numeric.data() + parts.numeric.size(), value);
        if (ec != std::errc()) {
          return ErrorAt(Offset(token), "integer attribute value does not fit in int64");
        }
        Next();
        return AttrValue(value);
      }
      if (parts.suffix == "f" || parts.suffix == "f64") {
        double value = 0;
        if (!ParseFloating(parts.numeric, &value)) {
          return ErrorAt(Offset(token), "float attribute value is out of range");
        }
        Next();
        return AttrValue(value);
      }
      return ErrorAt(Offset(token) + parts.numeric.size(),
                     MessageCat("unknown number suffix '", parts.suffix,
                                "' (expected none or i64 for ints, f for floats)"));
    }
    case TokenKind::kMinus: {
      Next();
      double value = 0;
      bool is_f64 = false;
      const Token& word = Peek();
      if (word.kind != TokenKind::kIdent || !NonFiniteWord(word.text, true, &value, &is_f64)) {
        return Unexpected(word, "'inff' or 'nanf' after '-'");
      }
      Next();
      return AttrValue(value);
    }
    case TokenKind::kIdent: {
      std::string_view word = token.text;
      double value = 0;
      bool is_f64 = false;
      if (word == "True" || word == "False") {
        Next();
        return AttrValue(word == "True");
      }
      if (NonFiniteWord(word, false, &value, &is_f64)) {
        Next();
        return AttrValue(value);
      }
      if (std::optional<DataType> dtype = ParseDataType(word)) {
        Next();
        return AttrValue(*dtype);
      }
      if (word == "VirtualDevice") {
        return ErrorAt(Offset(token),
                       "a VirtualDevice(...) value is only allowed as a function's "
                       "virtual_device= or in a variable's {virtual_device=...}");
      }
      return Unexpected(token,
                        "an attribute value (int, float with suffix f, True/False, \"string\", "
                        "dtype, (shape) or [array])");
    }
    case TokenKind::kString: {
      Next();
      KILN_ASSIGN_OR_RETURN(std::string value, DecodeString(token.text, Offset(token)));
      return AttrValue(std::move(value));
    }
    case TokenKind::kLParen: {
      ShapeValue shape;
      KILN_RETURN_IF_ERROR(ParseDims(&shape.dims));
      return AttrValue(std::move(shape));
    }
    case TokenKind::kLBracket: {
      Next();
      AttrValue::Array elements;
      while (!Check(TokenKind::kRBracket)) {
        KILN_ASSIGN_OR_RETURN(AttrValue element, ParseAttrValue());
        elements.push_back(std::move(element));
        if (!Accept(TokenKind::kComma)) break;
      }
      KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "',' or ']' in the array"));
      return AttrValue(std::move(elements));
    }
    default:
      return Unexpected(token, "an attribute value");
  }
}

absl::StatusOr<VirtualDevice> Parser::ParseVirtualDevice() {
  KILN_RETURN_IF_ERROR(ExpectIdent("VirtualDevice", "'VirtualDevice(...)'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after 'VirtualDevice'"));
  std::string device_type, target, memory_scope;
  int device_id = -1;
  bool seen[4] = {false, false, false, false};
  static constexpr std::string_view kFields[4] = {"device_type", "device_id", "target",
                                                  "memory_scope"};
  if (!Check(TokenKind::kRParen)) {
    do {
      const Token& key = Peek();
      int field = -1;
      for (int i = 0; i < 4; ++i) {
        if (key.kind == TokenKind::kIdent && key.text == kFields[i]) field = i;
      }
      if (field < 0) {
        return Unexpected(key,
                          "a VirtualDevice field (device_type, device_id, target or "
                          "memory_scope)");
      }
      if (seen[field]) {
        return ErrorAt(Offset(key), MessageCat("duplicate VirtualDevice field '", key.text, "'"));
      }
      seen[field] = true;
      Next();
      KILN_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the field name"));
      const Token& value = Peek();
      if (field == 1) {
        NumberParts parts = SplitNumber(value.text);
        int64_t id = 0;
        bool ok = value.kind == TokenKind::kNumber && parts.suffix.empty() && parts.is_integer;
        if (ok) {
          auto [end, ec] = std::from_chars(parts.numeric.data(),
                                           parts.numeric.data() + parts.numeric.size(), id);
          ok = ec == std::errc() && id >= -1 && id <= INT32_MAX;
        }
        if (!ok) return Unexpected(value, "a device id (an integer from -1 to 2147483647)");
        device_id = static_cast<int>(id);
      } else {
        if (value.kind != TokenKind::kString) return Unexpected(value, "a quoted string");
        KILN_ASSIGN_OR_RETURN(std::string text, DecodeString(value.text, Offset(value)));
        (field == 0 ? device_type : field == 2 ? target : memory_scope) = std::move(text);
      }
      Next();
    } while (Accept(TokenKind::kComma));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in VirtualDevice(...)"));
  VirtualDevice device = MakeVirtualDevice(std::move(device_type), device_id, std::move(target),
                                           std::move(memory_scope));
  if (IsFullyUnconstrained(device)) return VirtualDevice();
  return device;
}

absl::StatusOr<VirtualDevice> Parser::ParseVarAttributes() {
  if (!Accept(TokenKind::kLBrace)) return VirtualDevice();
  const Token& key = Peek();
  if (key.kind != TokenKind::kIdent || key.text != "virtual_device") {
    return Unexpected(key, "'virtual_device' (the only attribute a variable takes)");
  }
  Next();
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'virtual_device'"));
  KILN_ASSIGN_OR_RETURN(VirtualDevice device, ParseVirtualDevice());
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' after the variable's virtual device"));
  return device;
}

// --- Strings and spans ---

absl::StatusOr<std::string> Parser::DecodeString(std::string_view quoted, size_t offset) const {
  std::string out;
  out.reserve(quoted.size());
  // Between the quotes; the lexer (or span scanner) checked they are there.
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    char c = quoted[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    char e = i + 2 < quoted.size() ? quoted[i + 1] : '\0';
    auto hex = [](char h) -> int {
      if (h >= '0' && h <= '9') return h - '0';
      if (h >= 'a' && h <= 'f') return h - 'a' + 10;
      if (h >= 'A' && h <= 'F') return h - 'A' + 10;
      return -1;
    };
    if (e == '"' || e == '\\') {
      out.push_back(e);
      ++i;
    } else if (e == 'n') {
      out.push_back('\n');
      ++i;
    } else if (e == 't') {
      out.push_back('\t');
      ++i;
    } else if (e == 'x' && i + 4 < quoted.size() && hex(quoted[i + 2]) >= 0 &&
               hex(quoted[i + 3]) >= 0) {
      out.push_back(static_cast<char>(hex(quoted[i + 2]) * 16 + hex(quoted[i + 3])));
      i += 3;
    } else {
      return ErrorAt(offset + i,
                     "unknown escape in string (expected \\\", \\\\, \\n, \\t or \\xHH)");
    }
  }
  return out;
}

absl::StatusOr<Span> Parser::MaybeSpan() {
  if (!Check(TokenKind::kSpanComment)) return Span();
  return ParseSpanText(Next());
}

absl::StatusOr<Span> Parser::ParseSpanText(const Token& token) {
  std::string_view text = token.text;
  size_t base = Offset(token);
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
  };
  auto error = [&](std::string_view message) { return ErrorAt(base + i, message); };
  auto parse_int = [&](int* out) -> absl::Status {
    size_t begin = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    int value = 0;
    auto [end, ec] = std::from_chars(text.data() + begin, text.data() + i, value);
    if (begin == i || ec != std::errc()) {
      i = begin;
      return error("expected a line or column number (0 to 2147483647) in the span");
    }
    *out = value;
    return absl::OkStatus();
  };
  auto parse_plain = [&]() -> absl::StatusOr<Span> {
    // The name as written (quotes and escapes included) keys the intern table.
    size_t begin = i;
    SourceName source;
    if (i < text.size() && text[i] == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (i >= text.size()) {
        i = begin;
        return error("unterminated quoted source name in the span");
      }
      ++i;
      SourceName& interned = source_names_[text.substr(begin, i - begin)];
      if (!interned) {
        KILN_ASSIGN_OR_RETURN(std::string name,
                              DecodeString(text.substr(begin, i - begin), base + begin));
        interned = MakeSourceName(std::move(name));
      }
      source = interned;
    } else if (i < text.size() && IsIdentStart(text[i])) {
      while (i < text.size() && (IsIdentChar(text[i]) || text[i] == '.' || text[i] == '-' ||
                                 text[i] == '/')) {
        ++i;
      }
      SourceName& interned = source_names_[text.substr(begin, i - begin)];
      if (!interned) interned = MakeSourceName(std::string(text.substr(begin, i - begin)));
      source = interned;
    } else {
      return error("expected a source name (bare or \"quoted\") in the span");
    }
    int line = 0, column = 0, end_line = 0, end_column = 0;
    if (i < text.size() && text[i] == ':') {
      ++i;
      KILN_RETURN_IF_ERROR(parse_int(&line));
      if (i >= text.size() || text[i] != ':') return error("expected ':' before the span's column");
      ++i;
      KILN_RETURN_IF_ERROR(parse_int(&column));
      if (i >= text.size() || text[i] != '-') return error("expected '-' before the span's end");
      ++i;
      KILN_RETURN_IF_ERROR(parse_int(&end_line));
      if (i >= text.size() || text[i] != ':') {
        return error("expected ':' before the span's end column");
      }
      ++i;
      KILN_RETURN_IF_ERROR(parse_int(&end_column));
    }
    return MakeSpan(std::move(source), line, column, end_line, end_column);
  };

  skip_space();
  Span span;
  if (i < text.size() && text[i] == '[') {
    ++i;
    std::vector<Span> spans;
    skip_space();
    if (i < text.size() && text[i] == ']') {
      ++i;
    } else {
      while (true) {
        skip_space();
        KILN_ASSIGN_OR_RETURN(Span element, parse_plain());
        spans.push_back(std::move(element));
        skip_space();
        if (i < text.size() && text[i] == ',') {
          ++i;
          continue;
        }
        if (i < text.size() && text[i] == ']') {
          ++i;
          break;
        }
        return error("expected ',' or ']' in the sequential span");
      }
    }
    span = MakeRef<SequentialSpanNode>(std::move(spans));
  } else {
    KILN_ASSIGN_OR_RETURN(span, parse_plain());
  }
  skip_space();
  if (i != text.size()) return error("unexpected text after the span");
  return span;
}

// --- Constants ---

absl::StatusOr<Expr> Parser::ParseScalarConstant() {
  const Token& token = Peek();
  TensorData data;
  if (token.kind == TokenKind::kMinus || token.kind == TokenKind::kIdent) {
    bool negative = token.kind == TokenKind::kMinus;
    if (negative) Next();
    const Token& word = Peek();
    double value = 0;
    bool is_f64 = false;
    if (word.kind == TokenKind::kIdent && !negative &&
        (word.text == "True" || word.text == "False")) {
      data = MakeScalar(word.text == "True");
    } else if (word.kind == TokenKind::kIdent &&
               NonFiniteWord(word.text, negative, &value, &is_f64)) {
      data = is_f64 ? MakeScalar(value) : MakeScalar(static_cast<float>(value));
    } else {
      return Unexpected(word, "'inff' or 'nanf' after '-'");
    }
    Next();
  } else {
    NumberParts parts = SplitNumber(token.text);
    if (parts.suffix.empty() || parts.suffix == "i64") {
      if (!parts.is_integer) {
        return ErrorAt(Offset(token), "a float constant needs the suffix f or f64 (as in 1.5f)");
      }
      const char* begin = parts.numeric.data();
      const char* end = begin + parts.numeric.size();
      if (parts.suffix.empty()) {
        int32_t value = 0;
        if (std::from_chars(begin, end, value).ec != std::errc()) {
          return ErrorAt(Offset(token),
                         "integer constant does not fit in int32 (add the suffix i64)");
        }
        data = MakeScalar(value);
      } else {
        int64_t value = 0;
        if (std::from_chars(begin, end, value).ec != std::errc()) {
          return ErrorAt(Offset(token), "integer constant does not fit in int64");
        }
        data = MakeScalar(value);
      }
    } else if (parts.suffix == "f") {
      float value = 0;
      if (!ParseFloating(parts.numeric, &value)) {
        return ErrorAt(Offset(token), "float32 constant is out of range");
      }
      data = MakeScalar(value);
    } else if (parts.suffix == "f64") {
      double value = 0;
      if (!ParseFloating(parts.numeric, &value)) {
        return ErrorAt(Offset(token), "float64 constant is out of range");
      }
      data = MakeScalar(value);
    } else {
      return ErrorAt(Offset(token) + parts.numeric.size(),
                     MessageCat("unknown constant suffix '", parts.suffix,
                                "' (expected f, f64, i64 or none for int32)"));
    }
    Next();
  }
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  return Expr(MakeConstant(std::move(data), std::move(span)));
}

absl::StatusOr<Expr> Parser::ParseMetaRef() {
  size_t start = Offset(Next());  // meta
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' after 'meta'"));
  KILN_RETURN_IF_ERROR(ExpectIdent("Constant", "'Constant' (the only metadata kind)"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' after 'meta[Constant'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'[' before the metadata index"));
  const Token& index_token = Next();
  KILN_ASSIGN_OR_RETURN(int64_t index, ParseIndex(index_token, "a metadata index", INT32_MAX));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' after the metadata index"));
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  KILN_RETURN_IF_ERROR(EnsureMetadata(start));
  auto data = meta_data_.find(index);
  if (data == meta_data_.end()) {
    return ErrorAt(Offset(index_token),
                   MessageCat("meta[Constant][", index, "] is not in the #[metadata] table"));
  }
  // Every reference to one metadata constant is one node (the graph is a DAG).
  Constant& node = meta_nodes_[index];
  if (node && SpanEqual(node->span, span)) return Expr(node);
  Constant constant = MakeConstant(data->second, std::move(span));
  if (!node) node = constant;
  return Expr(constant);
}

}  // namespace kiln::parser_internal
