// The half of stage two (Doc -> text) that the Relay and script renderers share: the output
// buffer and indentation, highlight bookkeeping for underlines, the one dispatch over expression
// and statement kinds, and the forms both languages spell alike (calls, indexing, attribute
// access, operators with precedence, lists, dicts, slices; comment lines and the metadata
// section). Each renderer supplies the forms that differ.
//
// Renderers recurse along the Doc tree, whose depth is the nesting depth of the IR (scopes,
// branches, nested functions), never the length of a dataflow chain: a chain becomes a flat
// list of statements.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/ir/object.h"
#include "engine/printer/doc.h"
#include "engine/printer/underline.h"

namespace kiln::printer {

struct RenderOptions {
  // Docs whose `source` is one of these IR nodes are underlined (`^^^`).
  std::unordered_set<const Object*> highlight_sources;
  // When set, filled with the 1-based line on which each statement doc with a source starts
  // printing (its first appearance): how native code's debug info points into printed loop IR.
  // Not together with highlight_sources (underlines add lines).
  std::unordered_map<const Object*, int>* source_lines = nullptr;
};

class TextRenderer {
 public:
  explicit TextRenderer(const RenderOptions& options) : options_(options) {}
  TextRenderer(const TextRenderer&) = delete;
  TextRenderer& operator=(const TextRenderer&) = delete;
  virtual ~TextRenderer() = default;

  // Renders `doc` (an expression or a statement) and adds the underline lines.
  std::string Render(const Doc& doc);

 protected:
  // The statement forms whose spelling differs, called by RenderStmt; each writes whole lines
  // at the current indentation.
  virtual void RenderAssignDoc(const AssignDocNode& assign) = 0;
  virtual void RenderReturnDoc(const ReturnDocNode& ret) = 0;
  virtual void RenderExprStmtDoc(const ExprStmtDocNode& stmt) = 0;
  virtual void RenderIfDoc(const IfDocNode& if_doc) = 0;
  virtual void RenderWhileDoc(const WhileDocNode& loop) = 0;
  virtual void RenderForDoc(const ForDocNode& loop) = 0;
  virtual void RenderScopeDoc(const ScopeDocNode& scope) = 0;
  virtual void RenderFunctionDoc(const FunctionDocNode& function) = 0;
  virtual void RenderClassDoc(const ClassDocNode& class_doc) = 0;
  virtual void RenderStmtBlockDoc(const StmtBlockDocNode& block) { RenderStmts(block.stmts); }
  // What starts a comment line (`// `, `# `), and the line that opens the metadata section.
  virtual std::string_view CommentMarker() const = 0;
  virtual std::string_view MetadataHeader() const = 0;
  virtual void RenderId(const IdDocNode& id) = 0;
  virtual void RenderLiteral(const LiteralDocNode& literal) = 0;
  virtual void RenderTuple(const TupleDocNode& tuple) = 0;
  // IfExpr, FunctionExpr, BlockExpr, FunctionType, TensorBytes and Lambda.
  virtual void RenderLanguageSpecificExpr(const ExprDoc& expr) = 0;
  virtual void RenderExprComment(const std::string& text) = 0;
  // `value.attr`; the script renderer writes numeric fields (tuple access) as an index.
  virtual void RenderAttrAccess(const AttrAccessDocNode& access);
  // Called once after the top-level doc (e.g. to flush pending comments).
  virtual void Finish() {}

  // An expression with its highlight and trailing comment.
  void RenderExpr(const ExprDoc& expr);
  // A statement with its highlight, as whole lines at the current indentation.
  void RenderStmt(const StmtDoc& stmt);
  void RenderStmts(const std::vector<StmtDoc>& stmts);
  void RenderCommaSeparated(const std::vector<ExprDoc>& exprs);
  // `operand` in a position binding as tightly as `parent_precedence` (atoms: kPrecedenceAtom).
  void RenderOperand(const ExprDoc& operand, int parent_precedence, bool parenthesize_equal);
  static constexpr int kPrecedenceAtom = 100;
  void WriteIndent() { out_.append(static_cast<size_t>(indent_), ' '); }
  // One indented line per line of `text`, each starting with `marker`
  // ("// " or "# ").
  void WriteCommentLines(std::string_view text, std::string_view marker);
  bool IsHighlighted(const DocNode& doc) const {
    return doc.source && !options_.highlight_sources.empty() &&
           options_.highlight_sources.count(doc.source.get()) != 0;
  }
  void Highlight(size_t begin, size_t end) { highlights_.push_back({begin, end}); }
  // The 1-based line of out_[position] (positions must not decrease between calls), and the
  // record in options_.source_lines of where `source`'s statement, begun at `begin`, prints.
  int LineAt(size_t position);
  void RecordSourceLine(const Object* source, size_t begin, int line_at_begin);

  std::string out_;
  int indent_ = 0;

 private:
  void RenderSharedExpr(const ExprDoc& expr);
  void RenderOperation(const OperationDocNode& operation);

  const RenderOptions& options_;
  std::vector<TextRange> highlights_;
  // Newlines in out_[0, lines_counted_to_): RecordSourceLine counts forward from there.
  size_t lines_counted_to_ = 0;
  int newlines_ = 0;
};

}  // namespace kiln::printer
