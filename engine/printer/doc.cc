// Doc kind names and the builder shorthands.
#include "engine/printer/doc.h"

namespace kiln::printer {

const char* DocKindName(DocKind kind) {
  switch (kind) {
    case DocKind::kLiteral:
      return "Literal";
    case DocKind::kId:
      return "Id";
    case DocKind::kAttrAccess:
      return "AttrAccess";
    case DocKind::kIndex:
      return "Index";
    case DocKind::kCall:
      return "Call";
    case DocKind::kOperation:
      return "Operation";
    case DocKind::kLambda:
      return "Lambda";
    case DocKind::kTuple:
      return "Tuple";
    case DocKind::kList:
      return "List";
    case DocKind::kDict:
      return "Dict";
    case DocKind::kSlice:
      return "Slice";
    case DocKind::kIfExpr:
      return "IfExpr";
    case DocKind::kFunctionExpr:
      return "FunctionExpr";
    case DocKind::kBlockExpr:
      return "BlockExpr";
    case DocKind::kFunctionType:
      return "FunctionType";
    case DocKind::kTensorBytes:
      return "TensorBytes";
    case DocKind::kAssign:
      return "Assign";
    case DocKind::kIf:
      return "If";
    case DocKind::kWhile:
      return "While";
    case DocKind::kFor:
      return "For";
    case DocKind::kScope:
      return "Scope";
    case DocKind::kExprStmt:
      return "ExprStmt";
    case DocKind::kReturn:
      return "Return";
    case DocKind::kComment:
      return "Comment";
    case DocKind::kFunction:
      return "Function";
    case DocKind::kClass:
      return "Class";
    case DocKind::kStmtBlock:
      return "StmtBlock";
    case DocKind::kMetadata:
      return "Metadata";
  }
  return "<unknown doc>";
}

std::shared_ptr<IdDocNode> Id(std::string name, IdKind kind) {
  return std::make_shared<IdDocNode>(std::move(name), kind);
}

std::shared_ptr<LiteralDocNode> IntLiteral(int64_t value) {
  auto doc = std::make_shared<LiteralDocNode>();
  doc->value_kind = LiteralDocNode::ValueKind::kInt;
  doc->int_value = value;
  return doc;
}

std::shared_ptr<LiteralDocNode> FloatLiteral(double value) {
  auto doc = std::make_shared<LiteralDocNode>();
  doc->value_kind = LiteralDocNode::ValueKind::kFloat;
  doc->float_value = value;
  return doc;
}

std::shared_ptr<LiteralDocNode> BoolLiteral(bool value) {
  auto doc = std::make_shared<LiteralDocNode>();
  doc->value_kind = LiteralDocNode::ValueKind::kBool;
  doc->bool_value = value;
  return doc;
}

std::shared_ptr<LiteralDocNode> StringLiteral(std::string value) {
  auto doc = std::make_shared<LiteralDocNode>();
  doc->value_kind = LiteralDocNode::ValueKind::kString;
  doc->string_value = std::move(value);
  return doc;
}

std::shared_ptr<LiteralDocNode> NoneLiteral() { return std::make_shared<LiteralDocNode>(); }

}  // namespace kiln::printer
