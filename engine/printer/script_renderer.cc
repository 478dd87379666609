// The Python-like renderer. Design, for the graph dialect's Docs:
//
//   @attrs(name="m")                                  module attributes as a class decorator
//   class Module:
//       def main(x: Tensor[(1, 3), float32], Primitive=1) -> Tensor[(1, 3), float32]:  # x:
//       si=input
//           _0 = R.nn.conv2d(x, w, strides=[2, 2])  # si=conv1
//           y: Tensor[(1, 3), float32] = _0  # y: si=y; let_si=bind
//           if c:                                     an if with a value assigns it in each branch
//               _3 = ...
//               _2 = _3
//           else:
//               _2 = y
//           def _4(z):                                a nested function is a nested def
//               return z
//           return R.add(_0, R.float32(1.0))  # si=add1
//
// Sigils are dropped: variables and globals print bare, temporaries as `_N`, operators and
// typed scalars under the dialect prefix (`R.nn.conv2d`, `R.int64(3)`), tuple fields as
// indices (`_3[0]`). Comments cannot sit
// inside a Python line, so every comment of a line is deferred to its end, joined by "; "; a
// comment about a bound name (a parameter's or let variable's span) is prefixed with the name.
// Attributes of a bound name (a virtual device) wrap its annotation:
// `x: R.annotate(Tensor[...], virtual_device=VirtualDevice(...))`. A block (a Let used as a
// value) is spliced into the enclosing scope, as Python has no block scope.
#include "engine/printer/script_renderer.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/printer/literal_text.h"

namespace kiln::printer {

namespace {

constexpr int kIndentWidth = 4;

class ScriptRenderer final : public TextRenderer {
 public:
  ScriptRenderer(const RenderOptions& options, const ScriptRenderOptions& script_options)
      : TextRenderer(options), prefix_(script_options.dialect_prefix) {}

 protected:
  void RenderAssignDoc(const AssignDocNode& assign) override;
  void RenderReturnDoc(const ReturnDocNode& ret) override {
    RenderValue(ret.value, bare_target_, ret.comment);
  }
  void RenderExprStmtDoc(const ExprStmtDocNode& stmt) override;
  void RenderIfDoc(const IfDocNode& if_doc) override;
  void RenderWhileDoc(const WhileDocNode& loop) override;
  void RenderForDoc(const ForDocNode& loop) override;
  void RenderScopeDoc(const ScopeDocNode& scope) override;
  void RenderFunctionDoc(const FunctionDocNode& function) override {
    RenderDef(function.name, function.args, function.decorators, function.return_type,
              function.body, function.comment);
  }
  void RenderClassDoc(const ClassDocNode& class_doc) override;
  void RenderStmtBlockDoc(const StmtBlockDocNode& block) override {
    RenderBody(block.stmts, bare_target_);
  }
  std::string_view CommentMarker() const override { return "# "; }
  std::string_view MetadataHeader() const override { return "# metadata"; }
  void RenderId(const IdDocNode& id) override;
  void RenderLiteral(const LiteralDocNode& literal) override;
  void RenderTuple(const TupleDocNode& tuple) override;
  void RenderLanguageSpecificExpr(const ExprDoc& expr) override;
  void RenderExprComment(const std::string& text) override { pending_comments_.push_back(text); }
  void RenderAttrAccess(const AttrAccessDocNode& access) override;
  void Finish() override {
    if (!pending_comments_.empty()) EndLine();
  }

 private:
  // Where the value of a scope goes: `return v`, `lhs = v`, or (top level) just `v`.
  struct ValueTarget {
    enum class Kind { kReturn, kAssign, kBare } kind;
    ExprDoc lhs;  // for kAssign
  };

  void EndLine();
  void AppendPythonNumber(const LiteralDocNode& literal);
  void RenderBinding(const AssignDocNode& assign);
  void RenderArgs(const std::vector<AssignDoc>& args);
  void RenderBody(const std::vector<StmtDoc>& body, const ValueTarget& target);
  void RenderBlock(const std::string& comment, const std::vector<StmtDoc>& body);
  void RenderScopeStmt(const StmtDoc& stmt, const ValueTarget& target);
  // Gives `value` to `target`, unfolding the forms Python has no expression for.
  void RenderValue(const ExprDoc& value, const ValueTarget& target, const std::string& comment);
  void RenderDef(const ExprDoc& name, const std::vector<AssignDoc>& args,
                 const std::vector<ExprDoc>& decorators, const ExprDoc& return_type,
                 const std::vector<StmtDoc>& body, const std::string& comment);

  std::string prefix_;
  std::vector<std::string> pending_comments_;
  ValueTarget bare_target_{ValueTarget::Kind::kBare, nullptr};
};

void ScriptRenderer::EndLine() {
  if (!pending_comments_.empty()) {
    out_.append("  # ");
    out_.append(absl::StrJoin(pending_comments_, "; "));
    pending_comments_.clear();
  }
  out_.push_back('\n');
}

void ScriptRenderer::RenderId(const IdDocNode& id) {
  switch (id.id_kind) {
    case IdKind::kTemp:
      out_.push_back('_');
      break;
    case IdKind::kOp:
      out_.append(prefix_);
      out_.push_back('.');
      break;
    case IdKind::kPlain:
    case IdKind::kLocal:
    case IdKind::kGlobal:
      break;
  }
  out_.append(id.name);
}

void ScriptRenderer::RenderAttrAccess(const AttrAccessDocNode& access) {
  // Python attributes are identifiers; a field number (tuple access `%t.0`) is an index.
  const bool numeric =
      !access.attr.empty() && access.attr.find_first_not_of("0123456789") == std::string::npos;
  if (!numeric) {
    TextRenderer::RenderAttrAccess(access);
    return;
  }
  RenderOperand(access.value, kPrecedenceAtom, false);
  absl::StrAppend(&out_, "[", access.attr, "]");
}

void ScriptRenderer::AppendPythonNumber(const LiteralDocNode& literal) {
  if (literal.value_kind == LiteralDocNode::ValueKind::kInt) {
    absl::StrAppend(&out_, literal.int_value);
    return;
  }
  std::string text = literal.dtype == DataType::kFloat32
                         ? ShortestFloatText(static_cast<float>(literal.float_value))
                         : ShortestDoubleText(literal.float_value);
  out_.append(text);
  if (!LooksLikeFloat(text)) out_.append(".0");
}

void ScriptRenderer::RenderLiteral(const LiteralDocNode& literal) {
  using ValueKind = LiteralDocNode::ValueKind;
  const bool typed = literal.dtype.has_value();
  if (typed) absl::StrAppend(&out_, prefix_, ".", DataTypeName(*literal.dtype), "(");
  switch (literal.value_kind) {
    case ValueKind::kNone:
      out_.append("None");
      break;
    case ValueKind::kBool:
      out_.append(literal.bool_value ? "True" : "False");
      break;
    case ValueKind::kString:
      AppendQuoted(literal.string_value, &out_);
      break;
    case ValueKind::kInt:
    case ValueKind::kFloat:
      AppendPythonNumber(literal);
      break;
  }
  if (typed) out_.push_back(')');
}

void ScriptRenderer::RenderTuple(const TupleDocNode& tuple) {
  out_.push_back('(');
  RenderCommaSeparated(tuple.elements);
  if (tuple.elements.size() == 1) out_.push_back(',');
  out_.push_back(')');
}

void ScriptRenderer::RenderLanguageSpecificExpr(const ExprDoc& expr) {
  switch (expr->kind()) {
    case DocKind::kFunctionType: {
      const auto& doc = static_cast<const FunctionTypeDocNode&>(*expr);
      out_.append("Callable[[");
      RenderCommaSeparated(doc.arg_types);
      out_.append("], ");
      RenderExpr(doc.return_type);
      out_.push_back(']');
      break;
    }
    case DocKind::kTensorBytes: {
      const auto& doc = static_cast<const TensorBytesDocNode&>(*expr);
      absl::StrAppend(&out_, prefix_, ".tensor(");
      RenderExpr(doc.type);
      out_.append(", \"0x");
      AppendHex(doc.bytes, &out_);
      out_.append("\")");
      break;
    }
    case DocKind::kLambda: {
      const auto& doc = static_cast<const LambdaDocNode&>(*expr);
      out_.append("lambda");
      for (size_t i = 0; i < doc.args.size(); ++i) {
        out_.append(i == 0 ? " " : ", ");
        RenderExpr(doc.args[i]);
      }
      out_.append(": ");
      RenderExpr(doc.body);
      break;
    }
    default:
      // Scopes with a value only ever appear where RenderValue unfolds them; anywhere else
      // Python has no spelling, so the Ellipsis stands in.
      out_.append("...");
      break;
  }
}

void ScriptRenderer::RenderBinding(const AssignDocNode& assign) {
  const size_t name_begin = out_.size();
  RenderExpr(assign.lhs);
  const std::string name = out_.substr(name_begin);
  if (assign.annotation || !assign.lhs_attrs.empty()) {
    out_.append(": ");
    if (assign.lhs_attrs.empty()) {
      RenderExpr(assign.annotation);
    } else {
      absl::StrAppend(&out_, prefix_, ".annotate(");
      bool first = true;
      if (assign.annotation) {
        RenderExpr(assign.annotation);
        first = false;
      }
      for (const auto& [key, value] : assign.lhs_attrs) {
        if (!first) out_.append(", ");
        first = false;
        absl::StrAppend(&out_, key, "=");
        RenderExpr(value);
      }
      out_.push_back(')');
    }
  }
  if (!assign.lhs_comment.empty()) {
    pending_comments_.push_back(absl::StrCat(name, ": ", assign.lhs_comment));
  }
}

void ScriptRenderer::RenderArgs(const std::vector<AssignDoc>& args) {
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

void ScriptRenderer::RenderDef(const ExprDoc& name, const std::vector<AssignDoc>& args,
                               const std::vector<ExprDoc>& decorators, const ExprDoc& return_type,
                               const std::vector<StmtDoc>& body, const std::string& comment) {
  for (const ExprDoc& decorator : decorators) {
    WriteIndent();
    out_.push_back('@');
    RenderExpr(decorator);
    EndLine();
  }
  WriteIndent();
  out_.append("def ");
  RenderExpr(name);
  RenderArgs(args);
  if (return_type) {
    out_.append(" -> ");
    RenderExpr(return_type);
  }
  out_.push_back(':');
  if (!comment.empty()) pending_comments_.push_back(comment);
  EndLine();
  indent_ += kIndentWidth;
  RenderBody(body, ValueTarget{ValueTarget::Kind::kReturn, nullptr});
  indent_ -= kIndentWidth;
}

void ScriptRenderer::RenderBody(const std::vector<StmtDoc>& body, const ValueTarget& target) {
  if (body.empty()) {
    WriteIndent();
    out_.append("pass\n");
    return;
  }
  for (const StmtDoc& stmt : body) RenderScopeStmt(stmt, target);
}

void ScriptRenderer::RenderScopeStmt(const StmtDoc& stmt, const ValueTarget& target) {
  if (auto ret = DocAs<ReturnDocNode>(stmt)) {
    const size_t begin = out_.size();
    RenderValue(ret->value, target, ret->comment);
    if (IsHighlighted(*ret)) Highlight(begin, out_.size());
    return;
  }
  RenderStmt(stmt);
}

void ScriptRenderer::RenderValue(const ExprDoc& value, const ValueTarget& target,
                                 const std::string& comment) {
  const size_t begin = out_.size();
  const bool highlighted = value && IsHighlighted(*value);
  auto highlight = [&] {
    if (highlighted) Highlight(begin, out_.size());
  };
  if (auto if_expr = DocAs<IfExprDocNode>(value)) {
    WriteIndent();
    out_.append("if ");
    RenderExpr(if_expr->predicate);
    out_.push_back(':');
    if (!if_expr->comment.empty()) pending_comments_.push_back(if_expr->comment);
    if (!comment.empty()) pending_comments_.push_back(comment);
    EndLine();
    highlight();
    indent_ += kIndentWidth;
    RenderBody(if_expr->then_branch, target);
    indent_ -= kIndentWidth;
    WriteIndent();
    out_.append("else:\n");
    indent_ += kIndentWidth;
    RenderBody(if_expr->else_branch, target);
    indent_ -= kIndentWidth;
    return;
  }
  if (auto function = DocAs<FunctionExprDocNode>(value)) {
    // A def needs a name: the assigned one, else a local `_` that is then the value.
    ExprDoc name = target.kind == ValueTarget::Kind::kAssign ? target.lhs : Id("_");
    std::string def_comment = function->comment;
    if (!comment.empty())
      def_comment = def_comment.empty() ? comment : def_comment + "; " + comment;
    RenderDef(name, function->args, {}, function->return_type, function->body, def_comment);
    highlight();
    if (target.kind == ValueTarget::Kind::kReturn) {
      WriteIndent();
      out_.append("return _\n");
    }
    return;
  }
  if (auto block = DocAs<BlockExprDocNode>(value)) {
    if (!comment.empty()) pending_comments_.push_back(comment);
    RenderBody(block->body, target);
    return;
  }
  WriteIndent();
  switch (target.kind) {
    case ValueTarget::Kind::kReturn:
      out_.append("return ");
      break;
    case ValueTarget::Kind::kAssign:
      RenderExpr(target.lhs);
      out_.append(" = ");
      break;
    case ValueTarget::Kind::kBare:
      break;
  }
  RenderExpr(value);
  if (!comment.empty()) pending_comments_.push_back(comment);
  EndLine();
}

void ScriptRenderer::RenderAssignDoc(const AssignDocNode& assign) {
  const bool unfolds = DocAs<IfExprDocNode>(assign.rhs) || DocAs<FunctionExprDocNode>(assign.rhs) ||
                       DocAs<BlockExprDocNode>(assign.rhs);
  if (unfolds && assign.annotation == nullptr && assign.lhs_attrs.empty() &&
      assign.lhs_comment.empty()) {
    RenderValue(assign.rhs, ValueTarget{ValueTarget::Kind::kAssign, assign.lhs}, assign.comment);
    return;
  }
  WriteIndent();
  RenderBinding(assign);
  if (assign.rhs) {
    out_.append(" = ");
    RenderExpr(assign.rhs);
  }
  if (!assign.comment.empty()) pending_comments_.push_back(assign.comment);
  EndLine();
}

void ScriptRenderer::RenderExprStmtDoc(const ExprStmtDocNode& stmt) {
  WriteIndent();
  RenderExpr(stmt.expr);
  if (!stmt.comment.empty()) pending_comments_.push_back(stmt.comment);
  EndLine();
}

// Ends a block's header line (`if x`, `for i in r`, ...) with ':' and its
// comment, then renders the block's statements one level deeper.
void ScriptRenderer::RenderBlock(const std::string& comment, const std::vector<StmtDoc>& body) {
  out_.push_back(':');
  if (!comment.empty()) pending_comments_.push_back(comment);
  EndLine();
  indent_ += kIndentWidth;
  RenderBody(body, bare_target_);
  indent_ -= kIndentWidth;
}

void ScriptRenderer::RenderIfDoc(const IfDocNode& if_doc) {
  WriteIndent();
  out_.append("if ");
  RenderExpr(if_doc.predicate);
  RenderBlock(if_doc.comment, if_doc.then_branch);
  if (!if_doc.else_branch.empty()) {
    WriteIndent();
    out_.append("else");
    RenderBlock("", if_doc.else_branch);
  }
}

void ScriptRenderer::RenderWhileDoc(const WhileDocNode& loop) {
  WriteIndent();
  out_.append("while ");
  RenderExpr(loop.predicate);
  RenderBlock(loop.comment, loop.body);
}

void ScriptRenderer::RenderForDoc(const ForDocNode& loop) {
  WriteIndent();
  out_.append("for ");
  RenderExpr(loop.lhs);
  out_.append(" in ");
  RenderExpr(loop.rhs);
  RenderBlock(loop.comment, loop.body);
}

void ScriptRenderer::RenderScopeDoc(const ScopeDocNode& scope) {
  WriteIndent();
  out_.append("with ");
  RenderExpr(scope.rhs);
  if (scope.lhs) {
    out_.append(" as ");
    RenderExpr(scope.lhs);
  }
  RenderBlock(scope.comment, scope.body);
}

void ScriptRenderer::RenderClassDoc(const ClassDocNode& class_doc) {
  for (const ExprDoc& decorator : class_doc.decorators) {
    WriteIndent();
    out_.push_back('@');
    RenderExpr(decorator);
    EndLine();
  }
  WriteIndent();
  out_.append("class ");
  RenderExpr(class_doc.name);
  out_.push_back(':');
  if (!class_doc.comment.empty()) pending_comments_.push_back(class_doc.comment);
  EndLine();
  indent_ += kIndentWidth;
  for (size_t i = 0; i < class_doc.functions.size(); ++i) {
    if (i != 0) out_.push_back('\n');
    RenderStmt(class_doc.functions[i]);
  }
  if (class_doc.functions.empty()) {
    WriteIndent();
    out_.append("pass\n");
  }
  indent_ -= kIndentWidth;
}

}  // namespace

std::string RenderScript(const Doc& doc, const RenderOptions& options,
                         const ScriptRenderOptions& script_options) {
  ScriptRenderer renderer(options, script_options);
  return renderer.Render(doc);
}

}  // namespace kiln::printer
