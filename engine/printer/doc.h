// The Doc tree: the language-neutral middle of two-stage printing (unified printer RFC).
// Dialect docsifiers turn IR into Docs; renderers turn Docs into Relay text or Python-like
// script. A Doc may point back at the IR node it renders, which is how diagnostics underline.
//
// Docs are not IR: they are short-lived, built by one print call and dropped after rendering,
// so they use std::shared_ptr<const ...> rather than the IR's intrusive Ref<T>. A builder
// fills a node through its shared_ptr<T> and hands it out as a const handle.
//
// Forms beyond the RFC's spec, each because the graph dialect's text needs it:
//   ReturnDoc        the value of a scope (Relay: the bare last expression; Python: `return`).
//   IfExprDoc        an if whose branches are scopes with a value (`%4 = if (%c) {...}`).
//   FunctionExprDoc  a nested function used as a value (`%3 = fn (%y) {...}`).
//   BlockExprDoc     a scope used as a value (a Let that is not in tail position).
//   FunctionTypeDoc  `fn (A, B) -> R`, which has no Python expression form.
//   TensorBytesDoc   a metadata table entry's value: a tensor type and its raw bytes.
//   StmtBlockDoc     statements without an enclosing construct (a fragment, a module + table).
//   MetadataDoc      the table of large constants printed after the functions.
//   CommentDoc       a comment line.
// AssignDoc also carries what Relay writes around a bound name: `let`, `{virtual_device=...}`
// between the name and its type, and the bound variable's own span after the type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/dtype.h"
#include "engine/ir/object.h"

namespace kiln::printer {

enum class DocKind : uint8_t {
  // Expressions (kLiteral..kTensorBytes must stay contiguous: ExprDocNode::IsKind).
  kLiteral,
  kId,
  kAttrAccess,
  kIndex,
  kCall,
  kOperation,
  kLambda,
  kTuple,
  kList,
  kDict,
  kSlice,
  kIfExpr,
  kFunctionExpr,
  kBlockExpr,
  kFunctionType,
  kTensorBytes,
  // Statements (kAssign..kMetadata must stay contiguous: StmtDocNode::IsKind).
  kAssign,
  kIf,
  kWhile,
  kFor,
  kScope,
  kExprStmt,
  kReturn,
  kComment,
  kFunction,
  kClass,
  kStmtBlock,
  kMetadata,
};

const char* DocKindName(DocKind kind);

class DocNode {
 public:
  DocNode(const DocNode&) = delete;
  DocNode& operator=(const DocNode&) = delete;
  virtual ~DocNode() = default;

  DocKind kind() const { return kind_; }
  static constexpr bool IsKind(DocKind) { return true; }

  // The IR node this doc renders (null for punctuation-like docs such as a temporary's
  // reference); diagnostics underline the docs whose source is a given node.
  ObjectRef source;
  // Trailing comment text without comment syntax ("si=conv1"); each renderer wraps it
  // (`/* si=conv1 */` or `# si=conv1`). Empty: none.
  std::string comment;

 protected:
  explicit DocNode(DocKind kind) : kind_(kind) {}

 private:
  const DocKind kind_;
};
using Doc = std::shared_ptr<const DocNode>;

class ExprDocNode : public DocNode {
 public:
  static constexpr bool IsKind(DocKind k) {
    return k >= DocKind::kLiteral && k <= DocKind::kTensorBytes;
  }

 protected:
  using DocNode::DocNode;
};
using ExprDoc = std::shared_ptr<const ExprDocNode>;

class StmtDocNode : public DocNode {
 public:
  static constexpr bool IsKind(DocKind k) {
    return k >= DocKind::kAssign && k <= DocKind::kMetadata;
  }

 protected:
  using DocNode::DocNode;
};
using StmtDoc = std::shared_ptr<const StmtDocNode>;

// Checked downcast of a doc handle: null when `doc` is null or of another kind.
template <typename T, typename U>
std::shared_ptr<const T> DocAs(const std::shared_ptr<const U>& doc) {
  if (doc == nullptr || !T::IsKind(doc->kind())) return nullptr;
  return std::static_pointer_cast<const T>(doc);
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

// A number, bool, string or None. Numbers of typed scalar constants keep their dtype so the
// Relay renderer can spell them (`3i64`, `1f`, `1f64`); attribute values carry none.
class LiteralDocNode final : public ExprDocNode {
 public:
  enum class ValueKind : uint8_t { kNone, kBool, kInt, kFloat, kString };
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kLiteral; }
  LiteralDocNode() : ExprDocNode(DocKind::kLiteral) {}

  ValueKind value_kind = ValueKind::kNone;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;  // a float32 constant is stored exactly as a double
  std::string string_value;
  std::optional<DataType> dtype;
};
using LiteralDoc = std::shared_ptr<const LiteralDocNode>;

// What an identifier names; renderers add the sigils of their language.
enum class IdKind : uint8_t {
  kPlain,   // keywords, type names, attribute keys: as written
  kLocal,   // a variable: Relay `%x`
  kGlobal,  // a module function: Relay `@f`
  kTemp,    // a numbered temporary, name = the number: Relay `%0`
  kOp,      // an operator name: Relay `nn.conv2d`
};

class IdDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kId; }
  IdDocNode(std::string name, IdKind id_kind)
      : ExprDocNode(DocKind::kId), name(std::move(name)), id_kind(id_kind) {}
  std::string name;
  IdKind id_kind;
};
using IdDoc = std::shared_ptr<const IdDocNode>;

class AttrAccessDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kAttrAccess; }
  AttrAccessDocNode(ExprDoc value, std::string attr)
      : ExprDocNode(DocKind::kAttrAccess), value(std::move(value)), attr(std::move(attr)) {}
  ExprDoc value;
  std::string attr;
};

// `value[i, j]`; an index may be a SliceDoc.
class IndexDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kIndex; }
  IndexDocNode(ExprDoc value, std::vector<ExprDoc> indices)
      : ExprDocNode(DocKind::kIndex), value(std::move(value)), indices(std::move(indices)) {}
  ExprDoc value;
  std::vector<ExprDoc> indices;
};

class CallDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kCall; }
  CallDocNode(ExprDoc callee, std::vector<ExprDoc> args)
      : ExprDocNode(DocKind::kCall), callee(std::move(callee)), args(std::move(args)) {}
  ExprDoc callee;
  std::vector<ExprDoc> args;
  std::vector<std::string> kwargs_keys;  // parallel to kwargs_values
  std::vector<ExprDoc> kwargs_values;
};
using CallDoc = std::shared_ptr<const CallDocNode>;

enum class OperationKind : uint8_t {
  // Unary.
  kNegative,
  kInvert,
  kNot,
  // Binary.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kLShift,
  kRShift,
  kBitAnd,
  kBitOr,
  kBitXor,
  kLt,
  kLtE,
  kEq,
  kNotEq,
  kGt,
  kGtE,
  kAnd,
  kOr,
  // `operands[1] if operands[0] else operands[2]`.
  kIfThenElse,
};

class OperationDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kOperation; }
  OperationDocNode(OperationKind op, std::vector<ExprDoc> operands)
      : ExprDocNode(DocKind::kOperation), op(op), operands(std::move(operands)) {}
  OperationKind op;
  std::vector<ExprDoc> operands;
};

class LambdaDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kLambda; }
  LambdaDocNode(std::vector<IdDoc> args, ExprDoc body)
      : ExprDocNode(DocKind::kLambda), args(std::move(args)), body(std::move(body)) {}
  std::vector<IdDoc> args;
  ExprDoc body;
};

class TupleDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kTuple; }
  explicit TupleDocNode(std::vector<ExprDoc> elements)
      : ExprDocNode(DocKind::kTuple), elements(std::move(elements)) {}
  std::vector<ExprDoc> elements;
  // The dims of a Relay tensor type are written `(5)`, without the one-element comma that
  // every other tuple has; Python needs the comma, so the script renderer ignores this.
  bool bare_singleton = false;
};

class ListDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kList; }
  explicit ListDocNode(std::vector<ExprDoc> elements)
      : ExprDocNode(DocKind::kList), elements(std::move(elements)) {}
  std::vector<ExprDoc> elements;
};

class DictDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kDict; }
  DictDocNode(std::vector<ExprDoc> keys, std::vector<ExprDoc> values)
      : ExprDocNode(DocKind::kDict), keys(std::move(keys)), values(std::move(values)) {}
  std::vector<ExprDoc> keys;
  std::vector<ExprDoc> values;
};

// `start:stop:step` inside an IndexDoc; each part may be null.
class SliceDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kSlice; }
  SliceDocNode(ExprDoc start, ExprDoc stop, ExprDoc step = nullptr)
      : ExprDocNode(DocKind::kSlice),
        start(std::move(start)),
        stop(std::move(stop)),
        step(std::move(step)) {}
  ExprDoc start;
  ExprDoc stop;
  ExprDoc step;
};

// An if with a value. Each branch is a scope whose last statement is a ReturnDoc.
class IfExprDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kIfExpr; }
  IfExprDocNode(ExprDoc predicate, std::vector<StmtDoc> then_branch,
                std::vector<StmtDoc> else_branch)
      : ExprDocNode(DocKind::kIfExpr),
        predicate(std::move(predicate)),
        then_branch(std::move(then_branch)),
        else_branch(std::move(else_branch)) {}
  ExprDoc predicate;
  std::vector<StmtDoc> then_branch;
  std::vector<StmtDoc> else_branch;
};

class AssignDocNode;
using AssignDoc = std::shared_ptr<const AssignDocNode>;

// A function used as a value. `args` are parameters (lhs + annotation) followed by
// attributes (lhs + rhs, like Python default arguments); the body ends with a ReturnDoc.
class FunctionExprDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kFunctionExpr; }
  FunctionExprDocNode(std::vector<AssignDoc> args, ExprDoc return_type, std::vector<StmtDoc> body)
      : ExprDocNode(DocKind::kFunctionExpr),
        args(std::move(args)),
        return_type(std::move(return_type)),
        body(std::move(body)) {}
  std::vector<AssignDoc> args;
  ExprDoc return_type;  // may be null
  std::vector<StmtDoc> body;
};

// A scope used as a value; the body ends with a ReturnDoc.
class BlockExprDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kBlockExpr; }
  explicit BlockExprDocNode(std::vector<StmtDoc> body)
      : ExprDocNode(DocKind::kBlockExpr), body(std::move(body)) {}
  std::vector<StmtDoc> body;
};

class FunctionTypeDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kFunctionType; }
  FunctionTypeDocNode(std::vector<ExprDoc> arg_types, ExprDoc return_type)
      : ExprDocNode(DocKind::kFunctionType),
        arg_types(std::move(arg_types)),
        return_type(std::move(return_type)) {}
  std::vector<ExprDoc> arg_types;
  ExprDoc return_type;
};

// A tensor's type and raw little-endian bytes (Relay: `TYPE 0x0000803f`).
class TensorBytesDocNode final : public ExprDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kTensorBytes; }
  TensorBytesDocNode(ExprDoc type, std::string bytes)
      : ExprDocNode(DocKind::kTensorBytes), type(std::move(type)), bytes(std::move(bytes)) {}
  ExprDoc type;
  std::string bytes;
};

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

// `lhs: annotation = rhs`, also a function parameter (no rhs) or attribute (no annotation).
class AssignDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kAssign; }
  AssignDocNode(ExprDoc lhs, ExprDoc rhs, ExprDoc annotation)
      : StmtDocNode(DocKind::kAssign),
        lhs(std::move(lhs)),
        rhs(std::move(rhs)),
        annotation(std::move(annotation)) {}
  ExprDoc lhs;
  ExprDoc rhs;         // may be null
  ExprDoc annotation;  // may be null
  // Attributes of the bound name itself (Relay `%x {virtual_device=...}: T`).
  std::vector<std::pair<std::string, ExprDoc>> lhs_attrs;
  // Comment about the bound name (its span), written after the annotation, before `=`.
  std::string lhs_comment;
  // A named binding with a scope of its own (Relay `let %x = ...;`) rather than a temporary.
  bool is_let = false;
};

class IfDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kIf; }
  IfDocNode(ExprDoc predicate, std::vector<StmtDoc> then_branch, std::vector<StmtDoc> else_branch)
      : StmtDocNode(DocKind::kIf),
        predicate(std::move(predicate)),
        then_branch(std::move(then_branch)),
        else_branch(std::move(else_branch)) {}
  ExprDoc predicate;
  std::vector<StmtDoc> then_branch;
  std::vector<StmtDoc> else_branch;  // empty: no else
};

class WhileDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kWhile; }
  WhileDocNode(ExprDoc predicate, std::vector<StmtDoc> body)
      : StmtDocNode(DocKind::kWhile), predicate(std::move(predicate)), body(std::move(body)) {}
  ExprDoc predicate;
  std::vector<StmtDoc> body;
};

class ForDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kFor; }
  ForDocNode(ExprDoc lhs, ExprDoc rhs, std::vector<StmtDoc> body)
      : StmtDocNode(DocKind::kFor),
        lhs(std::move(lhs)),
        rhs(std::move(rhs)),
        body(std::move(body)) {}
  ExprDoc lhs;
  ExprDoc rhs;
  std::vector<StmtDoc> body;
};

// `with rhs as lhs:` (lhs may be null).
class ScopeDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kScope; }
  ScopeDocNode(ExprDoc lhs, ExprDoc rhs, std::vector<StmtDoc> body)
      : StmtDocNode(DocKind::kScope),
        lhs(std::move(lhs)),
        rhs(std::move(rhs)),
        body(std::move(body)) {}
  ExprDoc lhs;
  ExprDoc rhs;
  std::vector<StmtDoc> body;
};

class ExprStmtDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kExprStmt; }
  explicit ExprStmtDocNode(ExprDoc expr) : StmtDocNode(DocKind::kExprStmt), expr(std::move(expr)) {}
  ExprDoc expr;
};

class ReturnDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kReturn; }
  explicit ReturnDocNode(ExprDoc value) : StmtDocNode(DocKind::kReturn), value(std::move(value)) {}
  ExprDoc value;
};

class CommentDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kComment; }
  explicit CommentDocNode(std::string text)
      : StmtDocNode(DocKind::kComment), text(std::move(text)) {}
  std::string text;
};

class FunctionDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kFunction; }
  FunctionDocNode(IdDoc name, std::vector<AssignDoc> args, std::vector<ExprDoc> decorators,
                  ExprDoc return_type, std::vector<StmtDoc> body)
      : StmtDocNode(DocKind::kFunction),
        name(std::move(name)),
        args(std::move(args)),
        decorators(std::move(decorators)),
        return_type(std::move(return_type)),
        body(std::move(body)) {}
  IdDoc name;
  std::vector<AssignDoc> args;  // as in FunctionExprDocNode
  std::vector<ExprDoc> decorators;
  ExprDoc return_type;  // may be null
  std::vector<StmtDoc> body;
};
using FunctionDoc = std::shared_ptr<const FunctionDocNode>;

// A module: its attributes as decorators, then its functions in order.
class ClassDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kClass; }
  ClassDocNode(IdDoc name, std::vector<ExprDoc> decorators, std::vector<StmtDoc> functions)
      : StmtDocNode(DocKind::kClass),
        name(std::move(name)),
        decorators(std::move(decorators)),
        functions(std::move(functions)) {}
  IdDoc name;
  std::vector<ExprDoc> decorators;
  std::vector<StmtDoc> functions;
};

class StmtBlockDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kStmtBlock; }
  explicit StmtBlockDocNode(std::vector<StmtDoc> stmts)
      : StmtDocNode(DocKind::kStmtBlock), stmts(std::move(stmts)) {}
  std::vector<StmtDoc> stmts;
};

// Entries `meta[Constant][K] = TensorBytesDoc`.
class MetadataDocNode final : public StmtDocNode {
 public:
  static constexpr bool IsKind(DocKind k) { return k == DocKind::kMetadata; }
  explicit MetadataDocNode(std::vector<AssignDoc> entries)
      : StmtDocNode(DocKind::kMetadata), entries(std::move(entries)) {}
  std::vector<AssignDoc> entries;
};

// ---------------------------------------------------------------------------------------------
// Shorthands for builders.
// ---------------------------------------------------------------------------------------------

std::shared_ptr<IdDocNode> Id(std::string name, IdKind kind = IdKind::kPlain);
std::shared_ptr<LiteralDocNode> IntLiteral(int64_t value);
std::shared_ptr<LiteralDocNode> FloatLiteral(double value);
std::shared_ptr<LiteralDocNode> BoolLiteral(bool value);
std::shared_ptr<LiteralDocNode> StringLiteral(std::string value);
std::shared_ptr<LiteralDocNode> NoneLiteral();

}  // namespace kiln::printer
