// Bodies, statements and expressions of the graph text: temporaries, lets,
// calls with attributes, tuples, tuple indices, ifs and functions.
#include <charconv>

#include "absl/container/flat_hash_set.h"
#include "engine/parser/diagnostic.h"
#include "engine/parser/parser_impl.h"
#include "engine/support/status_macros.h"

namespace kiln::parser_internal {

namespace {

bool IsScalarWord(std::string_view word) {
  return word == "True" || word == "False" || word == "inff" || word == "nanf" ||
         word == "inff64" || word == "nanf64";
}

}  // namespace

absl::StatusOr<Expr> Parser::LookupLocal(const Token& token) {
  std::string_view name = token.text.substr(1);
  if (const Var* var = scopes_.FindVar(name)) return Expr(*var);
  if (allow_free_vars_) {
    Var& free = free_vars_[name];
    if (!free) free = MakeVar(std::string(name));
    return Expr(free);
  }
  return ErrorAt(Offset(token), MessageCat("unknown variable ", token.text,
                                           " (not a parameter or let variable in scope)"));
}

absl::StatusOr<Expr> Parser::LookupTemp(const Token& token) {
  uint64_t number = 0;
  std::string_view digits = token.text.substr(1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  Expr value;
  std::string_view escaped;
  auto found =
      ec == std::errc() ? scopes_.FindTemp(number, &value, &escaped) : Scopes::TempLookup::kUnknown;
  if (found == Scopes::TempLookup::kUnknown) {
    return ErrorAt(Offset(token), MessageCat("unknown temporary ", token.text, " (no '", token.text,
                                             " = ...' before this use)"));
  }
  if (found == Scopes::TempLookup::kOutOfScope) {
    return ErrorAt(Offset(token), MessageCat("temporary ", token.text, " uses %", escaped,
                                             ", which is not in scope here"));
  }
  return value;
}

GlobalVar Parser::GetGlobal(std::string_view name, size_t offset) {
  GlobalInfo& info = globals_[name];
  if (!info.var) {
    info.var = MakeGlobalVar(std::string(name));
    info.first_use = offset;
  }
  return info.var;
}

Op Parser::LookupOp(std::string_view name) {
  Op& op = ops_[name];
  if (!op) op = GetOp(name);
  return op;
}

absl::StatusOr<Expr> Parser::ParseBody() {
  std::vector<PendingLet> lets;
  Scopes::Mark scope = scopes_.Open();
  Expr result;
  while (true) {
    const Token& token = Peek();
    if (token.kind == TokenKind::kTemp && Peek(1).kind == TokenKind::kEqual) {
      KILN_RETURN_IF_ERROR(ParseTempBinding());
    } else if (token.kind == TokenKind::kIdent && token.text == "let") {
      KILN_RETURN_IF_ERROR(ParseLetStatement(&lets));
    } else {
      KILN_ASSIGN_OR_RETURN(result, ParseExpression());
      break;
    }
  }
  scopes_.Close(scope);
  // Let bodies nest to the right; folded from the last, without recursion.
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    result =
        MakeLet(std::move(it->var), std::move(it->value), std::move(result), std::move(it->span));
  }
  return result;
}

absl::Status Parser::ParseTempBinding() {
  const Token& token = Next();
  Next();  // =
  uint64_t number = 0;
  std::string_view digits = token.text.substr(1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc()) return ErrorAt(Offset(token), "temporary number is too large");
  if (scopes_.HasTemp(number)) {
    return ErrorAt(Offset(token), MessageCat("temporary ", token.text, " is bound twice"));
  }
  scopes_.BeginTemp();
  KILN_ASSIGN_OR_RETURN(Expr value, ParseExpression());
  if (!Check(TokenKind::kSemicolon)) {
    return Unexpected(Peek(), MessageCat("';' after the binding of ", token.text));
  }
  Next();
  scopes_.EndTemp(number, std::move(value));
  return absl::OkStatus();
}

absl::Status Parser::ParseLetStatement(std::vector<PendingLet>* lets) {
  Next();  // let
  KILN_ASSIGN_OR_RETURN(Var var, ParseVarDecl("a variable name (%name) after 'let'"));
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' in the let binding"));
  KILN_ASSIGN_OR_RETURN(Expr value, ParseExpression());
  Span span;
  if (Check(TokenKind::kLetSpanComment)) {
    KILN_ASSIGN_OR_RETURN(span, ParseSpanText(Next()));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kSemicolon, "';' after the let binding"));
  // Visible in the rest of the scope, not in its own value.
  scopes_.BindVar(var->name_hint, var);
  lets->push_back(PendingLet{std::move(var), std::move(value), std::move(span)});
  return absl::OkStatus();
}

absl::StatusOr<Expr> Parser::ParseExpression() {
  NestingGuard guard(this);
  if (guard.too_deep()) return TooDeep();
  bool is_reference = false;
  KILN_ASSIGN_OR_RETURN(Expr expr, ParsePrimary(&is_reference));
  while (true) {
    if (Check(TokenKind::kDot)) {
      KILN_ASSIGN_OR_RETURN(expr, ParseTupleIndexRest(std::move(expr)));
    } else if (Check(TokenKind::kLParen)) {
      KILN_ASSIGN_OR_RETURN(expr, ParseCallRest(std::move(expr)));
    } else {
      break;
    }
    is_reference = false;
  }
  if (Check(TokenKind::kSpanComment)) return SpanAfterExpressionError(is_reference);
  return expr;
}

absl::StatusOr<Expr> Parser::ParseTupleIndexRest(Expr tuple) {
  Next();  // .
  const Token& index_token = Next();
  KILN_ASSIGN_OR_RETURN(int64_t index,
                        ParseIndex(index_token, "a tuple index after '.'", INT32_MAX));
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  return Expr(MakeTupleGetItem(std::move(tuple), static_cast<int>(index), std::move(span)));
}

absl::Status Parser::SpanAfterExpressionError(bool is_reference) const {
  return ErrorAt(Offset(Peek()),
                 is_reference ? "a span comment cannot follow a reference (a variable's span is "
                                "written where it is bound)"
                              : "a second span comment for one expression");
}

absl::StatusOr<Expr> Parser::ParsePrimary(bool* is_reference) {
  // Only dispatch here: this frame is on the path of every nested scope.
  const Token& token = Peek();
  switch (token.kind) {
    case TokenKind::kTemp:
    case TokenKind::kLocal:
    case TokenKind::kGlobal:
      *is_reference = true;
      return ParseReference();
    case TokenKind::kNumber:
    case TokenKind::kMinus:
      return ParseScalarConstant();
    case TokenKind::kLParen:
      return ParseTupleOrGroup();
    case TokenKind::kLBrace:
      return ParseBlock();
    case TokenKind::kIdent: {
      std::string_view word = token.text;
      if (IsScalarWord(word)) return ParseScalarConstant();
      if (word == "meta" && Peek(1).kind == TokenKind::kLBracket) return ParseMetaRef();
      if (word == "fn") return ParseFunctionExpr();
      if (word == "if") return ParseIf();
      *is_reference = true;
      return ParseReference();
    }
    default:
      return Unexpected(token, "an expression");
  }
}

absl::StatusOr<Expr> Parser::ParseReference() {
  const Token& token = Next();
  switch (token.kind) {
    case TokenKind::kTemp:
      return LookupTemp(token);
    case TokenKind::kLocal:
      return LookupLocal(token);
    case TokenKind::kGlobal:
      return Expr(GetGlobal(token.text.substr(1), Offset(token)));
    default:
      break;
  }
  std::string_view word = token.text;
  if (word == "let" || word == "def" || word == "else") {
    return Unexpected(token, word == "let" ? "an expression (a let binding starts a statement)"
                                           : "an expression");
  }
  return Expr(LookupOp(word));
}

absl::StatusOr<Expr> Parser::ParseBlock() {
  // A block scope: a Let used where an expression is expected.
  Next();  // {
  KILN_ASSIGN_OR_RETURN(Expr body, ParseBody());
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' to close the block"));
  return body;
}

absl::StatusOr<Expr> Parser::ParseFunctionExpr() {
  Next();  // fn
  KILN_ASSIGN_OR_RETURN(Function function, ParseFunctionRest());
  return Expr(std::move(function));
}

absl::StatusOr<Expr> Parser::ParseCallRest(Expr callee) {
  Next();  // (
  std::vector<Expr> args;
  std::vector<AttrsNode::Field> fields;
  if (!Check(TokenKind::kRParen)) {
    do {
      if (Check(TokenKind::kIdent) && Peek(1).kind == TokenKind::kEqual) {
        KILN_RETURN_IF_ERROR(ParseAttrField(&fields));
      } else {
        if (!fields.empty()) {
          return Unexpected(Peek(), "an attribute (key=value): arguments come before attributes");
        }
        KILN_ASSIGN_OR_RETURN(Expr arg, ParseExpression());
        args.push_back(std::move(arg));
      }
    } while (Accept(TokenKind::kComma));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the call"));
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  Attrs attrs = fields.empty() ? Attrs() : MakeAttrs(std::move(fields));
  return Expr(MakeCall(std::move(callee), std::move(args), std::move(attrs), std::move(span)));
}

absl::StatusOr<Expr> Parser::ParseTupleOrGroup() {
  Next();  // (
  std::vector<Expr> elements;
  if (!Accept(TokenKind::kRParen)) {
    KILN_ASSIGN_OR_RETURN(Expr first, ParseExpression());
    // `(e)` groups; `(e,)` is a one-element tuple.
    if (Accept(TokenKind::kRParen)) return first;
    elements.push_back(std::move(first));
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' or ')' in the tuple"));
    while (!Check(TokenKind::kRParen)) {
      KILN_ASSIGN_OR_RETURN(Expr element, ParseExpression());
      elements.push_back(std::move(element));
      if (!Accept(TokenKind::kComma)) break;
    }
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the tuple"));
  }
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  return Expr(MakeTuple(std::move(elements), std::move(span)));
}

absl::StatusOr<Expr> Parser::ParseIf() {
  Next();  // if
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after 'if'"));
  KILN_ASSIGN_OR_RETURN(Expr cond, ParseExpression());
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the if condition"));
  Expr branches[2];
  for (int i = 0; i < 2; ++i) {
    KILN_RETURN_IF_ERROR(ParseBranchStart(i == 0));
    KILN_ASSIGN_OR_RETURN(branches[i], ParseBody());
    KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, i == 0 ? "'}' to close the then-branch"
                                                           : "'}' to close the else-branch"));
  }
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  return Expr(
      MakeIf(std::move(cond), std::move(branches[0]), std::move(branches[1]), std::move(span)));
}

absl::Status Parser::ParseBranchStart(bool then_branch) {
  if (then_branch) return Expect(TokenKind::kLBrace, "'{' to open the then-branch");
  KILN_RETURN_IF_ERROR(ExpectIdent("else", "'else' after the then-branch"));
  return Expect(TokenKind::kLBrace, "'{' after 'else'");
}

absl::StatusOr<Var> Parser::ParseVarDecl(std::string_view what) {
  const Token& name = Peek();
  if (name.kind != TokenKind::kLocal) return Unexpected(name, what);
  Next();
  KILN_ASSIGN_OR_RETURN(VirtualDevice device, ParseVarAttributes());
  Type type;
  if (Accept(TokenKind::kColon)) {
    KILN_ASSIGN_OR_RETURN(type, ParseType());
  }
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  return MakeVar(std::string(name.text.substr(1)), std::move(type), std::move(span),
                 std::move(device));
}

absl::StatusOr<Function> Parser::ParseFunctionRest() {
  Scopes::Mark scope = scopes_.Open();
  std::vector<Var> params;
  std::vector<AttrsNode::Field> fields;
  VirtualDevice result_device;
  KILN_RETURN_IF_ERROR(ParseParameterList(&params, &fields, &result_device));
  Type ret_type;
  if (Accept(TokenKind::kArrow)) {
    KILN_ASSIGN_OR_RETURN(ret_type, ParseType());
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' to open the function body"));
  KILN_ASSIGN_OR_RETURN(Expr body, ParseBody());
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' to close the function body"));
  KILN_ASSIGN_OR_RETURN(Span span, MaybeSpan());
  scopes_.Close(scope);
  Attrs attrs = fields.empty() ? Attrs() : MakeAttrs(std::move(fields));
  return MakeFunction(std::move(params), std::move(body), std::move(ret_type), std::move(attrs),
                      std::move(span), std::move(result_device));
}

absl::Status Parser::ParseParameterList(std::vector<Var>* params,
                                        std::vector<AttrsNode::Field>* fields,
                                        VirtualDevice* result_device) {
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' to open the parameter list"));
  bool has_result_device = false;
  absl::flat_hash_set<std::string_view> param_names;
  if (!Check(TokenKind::kRParen)) {
    do {
      const Token& token = Peek();
      if (token.kind == TokenKind::kLocal) {
        if (!fields->empty() || has_result_device) {
          return Unexpected(token, "an attribute (key=value): parameters come before attributes");
        }
        KILN_ASSIGN_OR_RETURN(Var param, ParseVarDecl("a parameter"));
        if (!param_names.insert(token.text.substr(1)).second) {
          return ErrorAt(Offset(token), MessageCat("duplicate parameter ", token.text));
        }
        params->push_back(std::move(param));
      } else if (token.kind == TokenKind::kIdent && token.text == "virtual_device" &&
                 Peek(1).kind == TokenKind::kEqual) {
        // The result's device: promoted to the Function field, never an attribute.
        if (has_result_device) {
          return ErrorAt(Offset(token), "duplicate attribute 'virtual_device'");
        }
        Next();
        Next();
        KILN_ASSIGN_OR_RETURN(*result_device, ParseVirtualDevice());
        has_result_device = true;
      } else if (token.kind == TokenKind::kIdent && Peek(1).kind == TokenKind::kEqual) {
        KILN_RETURN_IF_ERROR(ParseAttrField(fields));
      } else {
        return Unexpected(token, "a parameter (%name) or an attribute (key=value)");
      }
    } while (Accept(TokenKind::kComma));
  }
  KILN_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the parameter list"));
  for (const Var& param : *params) scopes_.BindVar(param->name_hint, param);
  return absl::OkStatus();
}

}  // namespace kiln::parser_internal
