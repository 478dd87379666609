// The recursive-descent parser behind parser.h (internal). Its definitions are
// split by concern: parser.cc (entry points, module level, metadata table),
// parse_expr.cc (bodies, statements, expressions, functions) and
// parse_literal.cc (types, attribute values, virtual devices, spans, constants).
//
// Recursion follows syntactic nesting only (parentheses, scopes, inline
// expressions) and is capped by ParseOptions::max_nesting_depth; the bindings
// of a body are a loop, so a 20,000-binding function costs constant depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/parser/lexer.h"
#include "engine/parser/parser.h"
#include "engine/parser/scopes.h"

// Keeps helpers out of the recursive functions' frames.
#define KILN_PARSER_NOINLINE __attribute__((noinline))

namespace kiln::parser_internal {

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options);

  absl::StatusOr<IRModule> ParseModule();
  absl::StatusOr<Expr> ParseFragment();
  absl::StatusOr<Type> ParseStandaloneType();

 private:
  // Counts one level of syntactic nesting for as long as it lives.
  class NestingGuard {
   public:
    explicit NestingGuard(Parser* parser) : parser_(parser) { ++parser_->depth_; }
    ~NestingGuard() { --parser_->depth_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;
    // Past the depth limit, or so close to the end of the thread's stack that
    // going deeper could overflow it (frames are large under sanitizers).
    bool too_deep() const {
      return parser_->depth_ > parser_->options_.max_nesting_depth ||
             static_cast<const char*>(__builtin_frame_address(0)) < parser_->stack_limit_;
    }

   private:
    Parser* parser_;
  };

  struct GlobalInfo {
    GlobalVar var;
    size_t first_use = 0;  // offset of the first reference, for "undefined" errors
    bool defined = false;
  };

  // --- Tokens and errors (parser.cc) ---
  // Tokens are values (views into the text), read through a two-token window.
  // The `#` of a metadata table reads as the end of input to the code before
  // it, as do kEnd and kError: those tokens repeat instead of advancing.
  Token Peek(size_t ahead = 0) const {
    while (stream_.buffered <= ahead) Fill();
    return stream_.buffer[ahead];
  }
  Token Next() {
    Token token = Peek();
    stream_.buffer[0] = stream_.buffer[1];
    --stream_.buffered;
    return token;
  }
  void Fill() const {
    Token token = stream_.stopped ? stream_.stop_token : stream_.lexer.Next();
    if (token.kind == TokenKind::kHash && token.text.data() == stream_.stop_at) {
      stream_.stopped = true;
      stream_.stop_token = token;
    }
    stream_.buffer[stream_.buffered++] = token;
  }
  bool Check(TokenKind kind) const { return Peek().kind == kind; }
  bool CheckIdent(std::string_view word) const {
    return Peek().kind == TokenKind::kIdent && Peek().text == word;
  }
  bool Accept(TokenKind kind) {
    if (!Check(kind)) return false;
    Next();
    return true;
  }
  bool AtEnd() const {
    Token token = Peek();
    return token.kind == TokenKind::kEnd || (stream_.stopped && token.kind == TokenKind::kHash);
  }
  size_t Offset(const Token& token) const {
    return static_cast<size_t>(token.text.data() - text_.data());
  }
  absl::Status ErrorAt(size_t offset, std::string_view message) const;
  // "expected EXPECTED, found <token>" at the token (or the lexer's message).
  absl::Status Unexpected(const Token& token, std::string_view expected) const;
  absl::Status Expect(TokenKind kind, std::string_view expected);
  absl::Status ExpectIdent(std::string_view word, std::string_view expected);
  absl::Status TooDeep() const;

  // --- Module level and metadata (parser.cc) ---
  absl::Status ParseModuleAttrs(Attrs* attrs);
  absl::Status ParseDef(std::vector<IRModuleNode::Entry>* functions);
  absl::Status CheckGlobalsDefined() const;
  // Parses the `#[metadata]` table once, on first need.
  absl::Status EnsureMetadata(size_t use_offset);
  absl::Status ParseMetadataTable();
  absl::Status ParseMetadataEntry();

  // --- Expressions (parse_expr.cc) ---
  // Statements then the result; stops in front of what follows the result.
  absl::StatusOr<Expr> ParseBody();
  // The statements of a body, split out so the frames on the recursion path
  // stay small: `%N = EXPR;` and `let VAR = EXPR;`.
  struct PendingLet {
    Var var;
    Expr value;
    Span span;
  };
  KILN_PARSER_NOINLINE absl::Status ParseTempBinding();
  KILN_PARSER_NOINLINE absl::Status ParseLetStatement(std::vector<PendingLet>* lets);
  // One expression with its postfix tuple indices and calls.
  absl::StatusOr<Expr> ParseExpression();
  absl::StatusOr<Expr> ParsePrimary(bool* is_reference);
  absl::StatusOr<Expr> ParseCallRest(Expr callee);
  KILN_PARSER_NOINLINE absl::StatusOr<Expr> ParseTupleIndexRest(Expr tuple);
  KILN_PARSER_NOINLINE absl::StatusOr<Expr> ParseBlock();
  // `%0`, `%x`, `@f` or an operator name.
  KILN_PARSER_NOINLINE absl::StatusOr<Expr> ParseReference();
  KILN_PARSER_NOINLINE absl::Status ParseBranchStart(bool then_branch);
  KILN_PARSER_NOINLINE absl::StatusOr<Expr> ParseFunctionExpr();
  KILN_PARSER_NOINLINE absl::Status SpanAfterExpressionError(bool is_reference) const;
  absl::StatusOr<Expr> ParseTupleOrGroup();
  absl::StatusOr<Expr> ParseIf();
  // After `fn` or `def @name`: parameters, attributes, return type, body, span.
  absl::StatusOr<Function> ParseFunctionRest();
  // The `(...)` of a function: parameters, attributes and the result device.
  KILN_PARSER_NOINLINE absl::Status ParseParameterList(std::vector<Var>* params,
                                                       std::vector<AttrsNode::Field>* fields,
                                                       VirtualDevice* result_device);
  // `%name {virtual_device=...}: TYPE /* si=... */`.
  absl::StatusOr<Var> ParseVarDecl(std::string_view what);
  absl::StatusOr<Expr> LookupLocal(const Token& token);
  absl::StatusOr<Expr> LookupTemp(const Token& token);
  GlobalVar GetGlobal(std::string_view name, size_t offset);
  Op LookupOp(std::string_view name);

  // --- Literals (parse_literal.cc) ---
  absl::StatusOr<Type> ParseType();
  absl::Status ParseDims(std::vector<Dim>* dims);
  absl::StatusOr<AttrValue> ParseAttrValue();
  // `key=value` of a call, a function or the module; appends to `fields`.
  absl::Status ParseAttrField(std::vector<AttrsNode::Field>* fields);
  absl::StatusOr<VirtualDevice> ParseVirtualDevice();
  // The optional `{virtual_device=...}` after a variable name.
  absl::StatusOr<VirtualDevice> ParseVarAttributes();
  // The span of an optional `/* si=... */` (null when absent).
  absl::StatusOr<Span> MaybeSpan();
  absl::StatusOr<Span> ParseSpanText(const Token& token);
  absl::StatusOr<Expr> ParseScalarConstant();
  absl::StatusOr<Expr> ParseMetaRef();
  absl::StatusOr<std::string> DecodeString(std::string_view quoted, size_t offset) const;
  // A non-negative decimal integer token (tuple index, metadata index, dim).
  absl::StatusOr<int64_t> ParseIndex(const Token& token, std::string_view what, int64_t max) const;

  std::string_view text_;
  ParseOptions options_;
  // The token window; swapped for another one to read the metadata table.
  struct TokenStream {
    explicit TokenStream(Lexer lexer) : lexer(lexer) {}
    Lexer lexer;
    Token buffer[2] = {};
    size_t buffered = 0;
    // The `#` of the metadata table: from there on, that token repeats.
    const char* stop_at = nullptr;
    bool stopped = false;
    Token stop_token = {};
  };
  mutable TokenStream stream_;
  size_t depth_ = 0;
  // The lowest stack address nesting may reach (null when unknown).
  const char* stack_limit_ = nullptr;

  Scopes scopes_;
  bool allow_free_vars_ = false;
  absl::flat_hash_map<std::string_view, Var> free_vars_;
  absl::flat_hash_map<std::string_view, GlobalInfo> globals_;
  absl::flat_hash_map<std::string_view, Op> ops_;
  // Source names by their text as written (one node per distinct name).
  absl::flat_hash_map<std::string_view, SourceName> source_names_;

  // The metadata table: the offset of its `#`, and its constants once parsed.
  std::optional<size_t> metadata_offset_;
  bool metadata_parsed_ = false;
  absl::flat_hash_map<int64_t, TensorData> meta_data_;
  // The Constant node made for each index, so references share one node.
  absl::flat_hash_map<int64_t, Constant> meta_nodes_;
};

}  // namespace kiln::parser_internal
