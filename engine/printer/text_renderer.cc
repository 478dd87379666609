// Shared expression rendering, operator precedence and highlight bookkeeping.
#include "engine/printer/text_renderer.h"

#include "engine/support/check.h"

namespace kiln::printer {

namespace {

// Python's precedence, higher binds tighter. Atoms and postfix forms (call, index, attribute)
// are above every operator (TextRenderer::kPrecedenceAtom).
int Precedence(OperationKind op) {
  switch (op) {
    case OperationKind::kIfThenElse:
      return 1;
    case OperationKind::kOr:
      return 2;
    case OperationKind::kAnd:
      return 3;
    case OperationKind::kNot:
      return 4;
    case OperationKind::kLt:
    case OperationKind::kLtE:
    case OperationKind::kEq:
    case OperationKind::kNotEq:
    case OperationKind::kGt:
    case OperationKind::kGtE:
      return 5;
    case OperationKind::kBitOr:
      return 6;
    case OperationKind::kBitXor:
      return 7;
    case OperationKind::kBitAnd:
      return 8;
    case OperationKind::kLShift:
    case OperationKind::kRShift:
      return 9;
    case OperationKind::kAdd:
    case OperationKind::kSub:
      return 10;
    case OperationKind::kMul:
    case OperationKind::kDiv:
    case OperationKind::kFloorDiv:
    case OperationKind::kMod:
      return 11;
    case OperationKind::kNegative:
    case OperationKind::kInvert:
      return 12;
    case OperationKind::kPow:
      return 13;
  }
  return 0;
}

const char* OperatorText(OperationKind op) {
  switch (op) {
    case OperationKind::kNegative:
      return "-";
    case OperationKind::kInvert:
      return "~";
    case OperationKind::kNot:
      return "not ";
    case OperationKind::kAdd:
      return " + ";
    case OperationKind::kSub:
      return " - ";
    case OperationKind::kMul:
      return " * ";
    case OperationKind::kDiv:
      return " / ";
    case OperationKind::kFloorDiv:
      return " // ";
    case OperationKind::kMod:
      return " % ";
    case OperationKind::kPow:
      return " ** ";
    case OperationKind::kLShift:
      return " << ";
    case OperationKind::kRShift:
      return " >> ";
    case OperationKind::kBitAnd:
      return " & ";
    case OperationKind::kBitOr:
      return " | ";
    case OperationKind::kBitXor:
      return " ^ ";
    case OperationKind::kLt:
      return " < ";
    case OperationKind::kLtE:
      return " <= ";
    case OperationKind::kEq:
      return " == ";
    case OperationKind::kNotEq:
      return " != ";
    case OperationKind::kGt:
      return " > ";
    case OperationKind::kGtE:
      return " >= ";
    case OperationKind::kAnd:
      return " and ";
    case OperationKind::kOr:
      return " or ";
    case OperationKind::kIfThenElse:
      return "";
  }
  return "?";
}

bool IsUnary(OperationKind op) {
  return op == OperationKind::kNegative || op == OperationKind::kInvert ||
         op == OperationKind::kNot;
}

}  // namespace

std::string TextRenderer::Render(const Doc& doc) {
  if (auto expr = DocAs<ExprDocNode>(doc)) {
    RenderExpr(expr);
  } else if (auto stmt = DocAs<StmtDocNode>(doc)) {
    RenderStmt(stmt);
  }
  Finish();
  if (highlights_.empty()) return std::move(out_);
  return AddUnderlines(out_, std::move(highlights_));
}

void TextRenderer::RenderExpr(const ExprDoc& expr) {
  if (expr == nullptr) {
    out_.append("None");
    return;
  }
  const size_t begin = out_.size();
  switch (expr->kind()) {
    case DocKind::kId:
      RenderId(static_cast<const IdDocNode&>(*expr));
      break;
    case DocKind::kLiteral:
      RenderLiteral(static_cast<const LiteralDocNode&>(*expr));
      break;
    case DocKind::kTuple:
      RenderTuple(static_cast<const TupleDocNode&>(*expr));
      break;
    case DocKind::kIfExpr:
    case DocKind::kFunctionExpr:
    case DocKind::kBlockExpr:
    case DocKind::kFunctionType:
    case DocKind::kTensorBytes:
    case DocKind::kLambda:
      RenderLanguageSpecificExpr(expr);
      break;
    default:
      RenderSharedExpr(expr);
      break;
  }
  if (IsHighlighted(*expr)) Highlight(begin, out_.size());
  if (!expr->comment.empty()) RenderExprComment(expr->comment);
}

void TextRenderer::RenderStmt(const StmtDoc& stmt) {
  const size_t begin = out_.size();
  const bool record_line = options_.source_lines != nullptr && stmt->source;
  const int line_at_begin = record_line ? LineAt(begin) : 0;
  switch (stmt->kind()) {
    case DocKind::kAssign:
      RenderAssignDoc(static_cast<const AssignDocNode&>(*stmt));
      break;
    case DocKind::kReturn:
      RenderReturnDoc(static_cast<const ReturnDocNode&>(*stmt));
      break;
    case DocKind::kExprStmt:
      RenderExprStmtDoc(static_cast<const ExprStmtDocNode&>(*stmt));
      break;
    case DocKind::kComment:
      WriteCommentLines(static_cast<const CommentDocNode&>(*stmt).text, CommentMarker());
      break;
    case DocKind::kIf:
      RenderIfDoc(static_cast<const IfDocNode&>(*stmt));
      break;
    case DocKind::kWhile:
      RenderWhileDoc(static_cast<const WhileDocNode&>(*stmt));
      break;
    case DocKind::kFor:
      RenderForDoc(static_cast<const ForDocNode&>(*stmt));
      break;
    case DocKind::kScope:
      RenderScopeDoc(static_cast<const ScopeDocNode&>(*stmt));
      break;
    case DocKind::kFunction:
      RenderFunctionDoc(static_cast<const FunctionDocNode&>(*stmt));
      break;
    case DocKind::kClass:
      RenderClassDoc(static_cast<const ClassDocNode&>(*stmt));
      break;
    case DocKind::kStmtBlock:
      RenderStmtBlockDoc(static_cast<const StmtBlockDocNode&>(*stmt));
      break;
    case DocKind::kMetadata: {
      const auto& doc = static_cast<const MetadataDocNode&>(*stmt);
      if (!out_.empty()) out_.push_back('\n');
      WriteIndent();
      out_.append(MetadataHeader());
      out_.push_back('\n');
      for (const AssignDoc& entry : doc.entries) RenderStmt(entry);
      break;
    }
    default:
      break;
  }
  if (IsHighlighted(*stmt)) Highlight(begin, out_.size());
  if (record_line) RecordSourceLine(stmt->source.get(), begin, line_at_begin);
}

int TextRenderer::LineAt(size_t position) {
  // Statements start in order, so the count only moves forward.
  for (; lines_counted_to_ < position; ++lines_counted_to_) {
    newlines_ += out_[lines_counted_to_] == '\n';
  }
  return newlines_ + 1;
}

void TextRenderer::RecordSourceLine(const Object* source, size_t begin, int line_at_begin) {
  // Blank lines the statement printed before its text (between functions) move it down, and
  // so do decorators: a function's line is its `def`, as Python's own line tables have it.
  int line = line_at_begin;
  bool in_decorator = false;
  for (size_t i = begin; i < out_.size(); ++i) {
    char c = out_[i];
    if (c == '\n') {
      ++line;
      in_decorator = false;
    } else if (c == '@' && !in_decorator) {
      in_decorator = true;
    } else if (c != ' ' && !in_decorator) {
      break;
    }
  }
  options_.source_lines->emplace(source, line);
}

void TextRenderer::RenderStmts(const std::vector<StmtDoc>& stmts) {
  for (const StmtDoc& stmt : stmts) RenderStmt(stmt);
}

void TextRenderer::RenderCommaSeparated(const std::vector<ExprDoc>& exprs) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i != 0) out_.append(", ");
    RenderExpr(exprs[i]);
  }
}

void TextRenderer::RenderSharedExpr(const ExprDoc& expr) {
  switch (expr->kind()) {
    case DocKind::kAttrAccess:
      RenderAttrAccess(static_cast<const AttrAccessDocNode&>(*expr));
      break;
    case DocKind::kIndex: {
      const auto& doc = static_cast<const IndexDocNode&>(*expr);
      RenderOperand(doc.value, kPrecedenceAtom, false);
      out_.push_back('[');
      RenderCommaSeparated(doc.indices);
      out_.push_back(']');
      break;
    }
    case DocKind::kCall: {
      const auto& doc = static_cast<const CallDocNode&>(*expr);
      RenderOperand(doc.callee, kPrecedenceAtom, false);
      out_.push_back('(');
      RenderCommaSeparated(doc.args);
      for (size_t i = 0; i < doc.kwargs_keys.size(); ++i) {
        if (i != 0 || !doc.args.empty()) out_.append(", ");
        out_.append(doc.kwargs_keys[i]);
        out_.push_back('=');
        RenderExpr(doc.kwargs_values[i]);
      }
      out_.push_back(')');
      break;
    }
    case DocKind::kOperation:
      RenderOperation(static_cast<const OperationDocNode&>(*expr));
      break;
    case DocKind::kList: {
      out_.push_back('[');
      RenderCommaSeparated(static_cast<const ListDocNode&>(*expr).elements);
      out_.push_back(']');
      break;
    }
    case DocKind::kDict: {
      const auto& doc = static_cast<const DictDocNode&>(*expr);
      out_.push_back('{');
      for (size_t i = 0; i < doc.keys.size(); ++i) {
        if (i != 0) out_.append(", ");
        RenderExpr(doc.keys[i]);
        out_.append(": ");
        RenderExpr(doc.values[i]);
      }
      out_.push_back('}');
      break;
    }
    case DocKind::kSlice: {
      const auto& doc = static_cast<const SliceDocNode&>(*expr);
      if (doc.start) RenderExpr(doc.start);
      out_.push_back(':');
      if (doc.stop) RenderExpr(doc.stop);
      if (doc.step) {
        out_.push_back(':');
        RenderExpr(doc.step);
      }
      break;
    }
    default:
      KILN_UNREACHABLE() << "no shared rendering for " << DocKindName(expr->kind());
  }
}

void TextRenderer::WriteCommentLines(std::string_view text, std::string_view marker) {
  while (true) {
    size_t newline = text.find('\n');
    WriteIndent();
    out_.append(marker);
    out_.append(text.substr(0, newline));
    out_.push_back('\n');
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
}

void TextRenderer::RenderAttrAccess(const AttrAccessDocNode& access) {
  // `3.0` would read as a float: a literal before `.` needs parentheses.
  if (DocAs<LiteralDocNode>(access.value)) {
    out_.push_back('(');
    RenderExpr(access.value);
    out_.push_back(')');
  } else {
    RenderOperand(access.value, kPrecedenceAtom, false);
  }
  out_.push_back('.');
  out_.append(access.attr);
}

void TextRenderer::RenderOperation(const OperationDocNode& operation) {
  const int precedence = Precedence(operation.op);
  const auto& operands = operation.operands;
  if (operation.op == OperationKind::kIfThenElse) {
    KILN_CHECK(operands.size() == 3) << "if-then-else takes three operands";
    RenderOperand(operands[1], precedence, true);
    out_.append(" if ");
    RenderOperand(operands[0], precedence, true);
    out_.append(" else ");
    RenderOperand(operands[2], precedence, false);
    return;
  }
  if (IsUnary(operation.op)) {
    KILN_CHECK(operands.size() == 1) << "a unary operation takes one operand";
    out_.append(OperatorText(operation.op));
    RenderOperand(operands[0], precedence, false);
    return;
  }
  KILN_CHECK(operands.size() == 2) << "a binary operation takes two operands";
  // Left-associative except `**`; comparisons chain in Python, so equal ones get parentheses.
  const bool is_pow = operation.op == OperationKind::kPow;
  const bool is_comparison = precedence == 5;
  RenderOperand(operands[0], precedence, is_pow || is_comparison);
  out_.append(OperatorText(operation.op));
  RenderOperand(operands[1], precedence, !is_pow || is_comparison);
}

void TextRenderer::RenderOperand(const ExprDoc& operand, int parent_precedence,
                                 bool parenthesize_equal) {
  int precedence = kPrecedenceAtom;
  if (auto operation = DocAs<OperationDocNode>(operand)) precedence = Precedence(operation->op);
  if (DocAs<LambdaDocNode>(operand)) precedence = 0;
  const bool parenthesize =
      precedence < parent_precedence || (parenthesize_equal && precedence == parent_precedence);
  if (parenthesize) out_.push_back('(');
  RenderExpr(operand);
  if (parenthesize) out_.push_back(')');
}

}  // namespace kiln::printer
