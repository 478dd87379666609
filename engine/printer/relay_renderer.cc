// The Relay-style renderer. Its spelling choices are those of docs/graph-text-format.md:
// sigils (`%x`, `@f`, `%0`), `/* ... */` comments after what they annotate, two-space
// indentation, scopes in braces whose last line is the bare result, typed scalar suffixes
// (`1f`, `3i64`, `1f64`), `#[...]` for module decorators and the metadata header. Statement
// forms the graph dialect never produces (while, for, with) get a C-like spelling so that any
// Doc renders.
#include "engine/printer/relay_renderer.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "engine/printer/literal_text.h"

namespace kiln::printer {

namespace {

class RelayRenderer final : public TextRenderer {
 public:
  using TextRenderer::TextRenderer;

 protected:
  void RenderStmtBody(const StmtDoc& stmt) override;
  void RenderId(const IdDocNode& id) override;
  void RenderLiteral(const LiteralDocNode& literal) override;
  void RenderTuple(const TupleDocNode& tuple) override;
  void RenderLanguageSpecificExpr(const ExprDoc& expr) override;
  void RenderExprComment(const std::string& text) override { AppendComment(text); }

 private:
  void AppendComment(std::string_view text) {
    out_.append(" /* ");
    out_.append(text);
    out_.append(" */");
  }
  // `%x {virtual_device=...}: TYPE /* si=... */`, shared by parameters and let statements.
  void RenderBinding(const AssignDocNode& assign);
  void RenderArgs(const std::vector<AssignDoc>& args);
  // Statements of a scope, one level deeper, then the closing brace at this level.
  void RenderBracedBody(const std::vector<StmtDoc>& body);
  void RenderFunctionDoc(const FunctionDocNode& function);
};

void RelayRenderer::RenderId(const IdDocNode& id) {
  switch (id.id_kind) {
    case IdKind::kLocal:
    case IdKind::kTemp:
      out_.push_back('%');
      break;
    case IdKind::kGlobal:
      out_.push_back('@');
      break;
    case IdKind::kPlain:
    case IdKind::kOp:
      break;
  }
  out_.append(id.name);
}

void RelayRenderer::RenderLiteral(const LiteralDocNode& literal) {
  using ValueKind = LiteralDocNode::ValueKind;
  switch (literal.value_kind) {
    case ValueKind::kNone:
      out_.append("None");
      return;
    case ValueKind::kBool:
      out_.append(literal.bool_value ? "True" : "False");
      return;
    case ValueKind::kString:
      AppendQuoted(literal.string_value, &out_);
      return;
    case ValueKind::kInt:
      absl::StrAppend(&out_, literal.int_value);
      if (literal.dtype == DataType::kInt64) out_.append("i64");
      return;
    case ValueKind::kFloat:
      if (literal.dtype == DataType::kFloat32) {
        out_.append(ShortestFloatText(static_cast<float>(literal.float_value)));
        out_.push_back('f');
      } else if (literal.dtype == DataType::kFloat64) {
        out_.append(ShortestDoubleText(literal.float_value));
        out_.append("f64");
      } else {
        // An attribute float: always recognizably a float, then the `f` suffix.
        std::string text = ShortestDoubleText(literal.float_value);
        out_.append(text);
        if (!LooksLikeFloat(text)) out_.append(".0");
        out_.push_back('f');
      }
      return;
  }
}

void RelayRenderer::RenderTuple(const TupleDocNode& tuple) {
  out_.push_back('(');
  RenderCommaSeparated(tuple.elements);
  if (tuple.elements.size() == 1 && !tuple.bare_singleton) out_.push_back(',');
  out_.push_back(')');
}

void RelayRenderer::RenderBinding(const AssignDocNode& assign) {
  RenderExpr(assign.lhs);
  if (!assign.lhs_attrs.empty()) {
    out_.append(" {");
    for (size_t i = 0; i < assign.lhs_attrs.size(); ++i) {
      if (i != 0) out_.append(", ");
      out_.append(assign.lhs_attrs[i].first);
      out_.push_back('=');
      RenderExpr(assign.lhs_attrs[i].second);
    }
    out_.push_back('}');
  }
  if (assign.annotation) {
    out_.append(": ");
    RenderExpr(assign.annotation);
  }
  if (!assign.lhs_comment.empty()) AppendComment(assign.lhs_comment);
}

void RelayRenderer::RenderArgs(const std::vector<AssignDoc>& args) {
  out_.push_back('(');
  for (size_t i = 0; i < args.size(); ++i) {
    if (i != 0) out_.append(", ");
    const size_t begin = out_.size();
    RenderBinding(*args[i]);
    if (args[i]->rhs) {
      out_.push_back('=');
      RenderExpr(args[i]->rhs);
    }
    if (IsHighlighted(*args[i])) Highlight(begin, out_.size());
  }
  out_.push_back(')');
}

void RelayRenderer::RenderBracedBody(const std::vector<StmtDoc>& body) {
  out_.append("{\n");
  indent_ += 2;
  RenderStmts(body);
  indent_ -= 2;
  WriteIndent();
  out_.push_back('}');
}

void RelayRenderer::RenderFunctionDoc(const FunctionDocNode& function) {
  for (const ExprDoc& decorator : function.decorators) {
    WriteIndent();
    out_.append("#[");
    RenderExpr(decorator);
    out_.append("]\n");
  }
  WriteIndent();
  out_.append("def ");
  RenderExpr(function.name);
  RenderArgs(function.args);
  if (function.return_type) {
    out_.append(" -> ");
    RenderExpr(function.return_type);
  }
  out_.push_back(' ');
  RenderBracedBody(function.body);
  if (!function.comment.empty()) AppendComment(function.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderLanguageSpecificExpr(const ExprDoc& expr) {
  switch (expr->kind()) {
    case DocKind::kIfExpr: {
      const auto& doc = static_cast<const IfExprDocNode&>(*expr);
      out_.append("if (");
      RenderExpr(doc.predicate);
      out_.append(") ");
      RenderBracedBody(doc.then_branch);
      out_.append(" else ");
      RenderBracedBody(doc.else_branch);
      break;
    }
    case DocKind::kFunctionExpr: {
      const auto& doc = static_cast<const FunctionExprDocNode&>(*expr);
      out_.append("fn ");
      RenderArgs(doc.args);
      if (doc.return_type) {
        out_.append(" -> ");
        RenderExpr(doc.return_type);
      }
      out_.push_back(' ');
      RenderBracedBody(doc.body);
      break;
    }
    case DocKind::kBlockExpr:
      RenderBracedBody(static_cast<const BlockExprDocNode&>(*expr).body);
      break;
    case DocKind::kFunctionType: {
      const auto& doc = static_cast<const FunctionTypeDocNode&>(*expr);
      out_.append("fn (");
      RenderCommaSeparated(doc.arg_types);
      out_.append(") -> ");
      RenderExpr(doc.return_type);
      break;
    }
    case DocKind::kTensorBytes: {
      const auto& doc = static_cast<const TensorBytesDocNode&>(*expr);
      RenderExpr(doc.type);
      out_.append(" 0x");
      AppendHex(doc.bytes, &out_);
      break;
    }
    case DocKind::kLambda: {
      const auto& doc = static_cast<const LambdaDocNode&>(*expr);
      out_.append("fn (");
      for (size_t i = 0; i < doc.args.size(); ++i) {
        if (i != 0) out_.append(", ");
        RenderExpr(doc.args[i]);
      }
      out_.append(") { ");
      RenderExpr(doc.body);
      out_.append(" }");
      break;
    }
    default:
      break;
  }
}

void RelayRenderer::RenderStmtBody(const StmtDoc& stmt) {
  switch (stmt->kind()) {
    case DocKind::kAssign: {
      const auto& doc = static_cast<const AssignDocNode&>(*stmt);
      WriteIndent();
      if (doc.is_let) out_.append("let ");
      RenderBinding(doc);
      if (doc.rhs) {
        out_.append(" = ");
        RenderExpr(doc.rhs);
      }
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.append(";\n");
      break;
    }
    case DocKind::kReturn: {
      const auto& doc = static_cast<const ReturnDocNode&>(*stmt);
      WriteIndent();
      RenderExpr(doc.value);
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.push_back('\n');
      break;
    }
    case DocKind::kExprStmt: {
      const auto& doc = static_cast<const ExprStmtDocNode&>(*stmt);
      WriteIndent();
      RenderExpr(doc.expr);
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.append(";\n");
      break;
    }
    case DocKind::kComment: {
      WriteCommentLines(static_cast<const CommentDocNode&>(*stmt).text, "// ");
      break;
    }
    case DocKind::kIf: {
      const auto& doc = static_cast<const IfDocNode&>(*stmt);
      WriteIndent();
      out_.append("if (");
      RenderExpr(doc.predicate);
      out_.append(") ");
      RenderBracedBody(doc.then_branch);
      if (!doc.else_branch.empty()) {
        out_.append(" else ");
        RenderBracedBody(doc.else_branch);
      }
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.push_back('\n');
      break;
    }
    case DocKind::kWhile: {
      const auto& doc = static_cast<const WhileDocNode&>(*stmt);
      WriteIndent();
      out_.append("while (");
      RenderExpr(doc.predicate);
      out_.append(") ");
      RenderBracedBody(doc.body);
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.push_back('\n');
      break;
    }
    case DocKind::kFor: {
      const auto& doc = static_cast<const ForDocNode&>(*stmt);
      WriteIndent();
      out_.append("for (");
      RenderExpr(doc.lhs);
      out_.append(" in ");
      RenderExpr(doc.rhs);
      out_.append(") ");
      RenderBracedBody(doc.body);
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.push_back('\n');
      break;
    }
    case DocKind::kScope: {
      const auto& doc = static_cast<const ScopeDocNode&>(*stmt);
      WriteIndent();
      out_.append("with (");
      RenderExpr(doc.rhs);
      out_.push_back(')');
      if (doc.lhs) {
        out_.append(" as ");
        RenderExpr(doc.lhs);
      }
      out_.push_back(' ');
      RenderBracedBody(doc.body);
      if (!doc.comment.empty()) AppendComment(doc.comment);
      out_.push_back('\n');
      break;
    }
    case DocKind::kFunction:
      RenderFunctionDoc(static_cast<const FunctionDocNode&>(*stmt));
      break;
    case DocKind::kClass: {
      const auto& doc = static_cast<const ClassDocNode&>(*stmt);
      for (const ExprDoc& decorator : doc.decorators) {
        WriteIndent();
        out_.append("#[");
        RenderExpr(decorator);
        out_.append("]\n");
      }
      for (size_t i = 0; i < doc.functions.size(); ++i) {
        if (i != 0) out_.push_back('\n');
        RenderStmt(doc.functions[i]);
      }
      break;
    }
    case DocKind::kStmtBlock:
      RenderStmts(static_cast<const StmtBlockDocNode&>(*stmt).stmts);
      break;
    case DocKind::kMetadata: {
      const auto& doc = static_cast<const MetadataDocNode&>(*stmt);
      if (!out_.empty()) out_.push_back('\n');
      WriteIndent();
      out_.append("#[metadata]\n");
      for (const AssignDoc& entry : doc.entries) RenderStmt(entry);
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::string RenderRelay(const Doc& doc, const RenderOptions& options) {
  RelayRenderer renderer(options);
  return renderer.Render(doc);
}

}  // namespace kiln::printer
