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
  void RenderAssignDoc(const AssignDocNode& assign) override;
  void RenderReturnDoc(const ReturnDocNode& ret) override;
  void RenderExprStmtDoc(const ExprStmtDocNode& stmt) override;
  void RenderIfDoc(const IfDocNode& if_doc) override;
  void RenderWhileDoc(const WhileDocNode& loop) override;
  void RenderForDoc(const ForDocNode& loop) override;
  void RenderScopeDoc(const ScopeDocNode& scope) override;
  void RenderFunctionDoc(const FunctionDocNode& function) override;
  void RenderClassDoc(const ClassDocNode& class_doc) override;
  std::string_view CommentMarker() const override { return "// "; }
  std::string_view MetadataHeader() const override { return "#[metadata]"; }
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

void RelayRenderer::RenderAssignDoc(const AssignDocNode& assign) {
  WriteIndent();
  if (assign.is_let) out_.append("let ");
  RenderBinding(assign);
  if (assign.rhs) {
    out_.append(" = ");
    RenderExpr(assign.rhs);
  }
  if (!assign.comment.empty()) AppendComment(assign.comment);
  out_.append(";\n");
}

void RelayRenderer::RenderReturnDoc(const ReturnDocNode& ret) {
  WriteIndent();
  RenderExpr(ret.value);
  if (!ret.comment.empty()) AppendComment(ret.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderExprStmtDoc(const ExprStmtDocNode& stmt) {
  WriteIndent();
  RenderExpr(stmt.expr);
  if (!stmt.comment.empty()) AppendComment(stmt.comment);
  out_.append(";\n");
}

void RelayRenderer::RenderIfDoc(const IfDocNode& if_doc) {
  WriteIndent();
  out_.append("if (");
  RenderExpr(if_doc.predicate);
  out_.append(") ");
  RenderBracedBody(if_doc.then_branch);
  if (!if_doc.else_branch.empty()) {
    out_.append(" else ");
    RenderBracedBody(if_doc.else_branch);
  }
  if (!if_doc.comment.empty()) AppendComment(if_doc.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderWhileDoc(const WhileDocNode& loop) {
  WriteIndent();
  out_.append("while (");
  RenderExpr(loop.predicate);
  out_.append(") ");
  RenderBracedBody(loop.body);
  if (!loop.comment.empty()) AppendComment(loop.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderForDoc(const ForDocNode& loop) {
  WriteIndent();
  out_.append("for (");
  RenderExpr(loop.lhs);
  out_.append(" in ");
  RenderExpr(loop.rhs);
  out_.append(") ");
  RenderBracedBody(loop.body);
  if (!loop.comment.empty()) AppendComment(loop.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderScopeDoc(const ScopeDocNode& scope) {
  WriteIndent();
  out_.append("with (");
  RenderExpr(scope.rhs);
  out_.push_back(')');
  if (scope.lhs) {
    out_.append(" as ");
    RenderExpr(scope.lhs);
  }
  out_.push_back(' ');
  RenderBracedBody(scope.body);
  if (!scope.comment.empty()) AppendComment(scope.comment);
  out_.push_back('\n');
}

void RelayRenderer::RenderClassDoc(const ClassDocNode& class_doc) {
  for (const ExprDoc& decorator : class_doc.decorators) {
    WriteIndent();
    out_.append("#[");
    RenderExpr(decorator);
    out_.append("]\n");
  }
  for (size_t i = 0; i < class_doc.functions.size(); ++i) {
    if (i != 0) out_.push_back('\n');
    RenderStmt(class_doc.functions[i]);
  }
}

}  // namespace

std::string RenderRelay(const Doc& doc, const RenderOptions& options) {
  RelayRenderer renderer(options);
  return renderer.Render(doc);
}

}  // namespace kiln::printer
