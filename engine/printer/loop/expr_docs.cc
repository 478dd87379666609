// Expressions: Python operators where Python's meaning is the node's (`+`, `//` and `%` for
// floor division and modulo, comparisons, `and`, `or`, `not`, bitwise `&` `|` `^` `<<` `>>`),
// `T.` calls for everything else.
#include <cmath>
#include <string>
#include <vector>

#include "engine/printer/literal_text.h"
#include "engine/printer/loop/loop_builders.h"

namespace kiln::printer::loop_printer {

namespace {

template <typename D>
D WithSource(D doc, const ObjectRef& node) {
  doc->source = node;
  return doc;
}

std::vector<ExprDoc> ExprDocs(IRDocsifier& d, const std::vector<loop::PrimExpr>& exprs) {
  std::vector<ExprDoc> docs;
  docs.reserve(exprs.size());
  for (const loop::PrimExpr& expr : exprs) docs.push_back(d.AsExprDoc(expr));
  return docs;
}

// The operator spelling of `op`, when Python's operator means the same.
bool OperationKindOf(loop::BinaryOp op, OperationKind* kind) {
  switch (op) {
    case loop::BinaryOp::kAdd:
      *kind = OperationKind::kAdd;
      return true;
    case loop::BinaryOp::kSub:
      *kind = OperationKind::kSub;
      return true;
    case loop::BinaryOp::kMul:
      *kind = OperationKind::kMul;
      return true;
    case loop::BinaryOp::kFloorDiv:
      *kind = OperationKind::kFloorDiv;
      return true;
    case loop::BinaryOp::kFloorMod:
      *kind = OperationKind::kMod;
      return true;
    case loop::BinaryOp::kEQ:
      *kind = OperationKind::kEq;
      return true;
    case loop::BinaryOp::kNE:
      *kind = OperationKind::kNotEq;
      return true;
    case loop::BinaryOp::kLT:
      *kind = OperationKind::kLt;
      return true;
    case loop::BinaryOp::kLE:
      *kind = OperationKind::kLtE;
      return true;
    case loop::BinaryOp::kGT:
      *kind = OperationKind::kGt;
      return true;
    case loop::BinaryOp::kGE:
      *kind = OperationKind::kGtE;
      return true;
    case loop::BinaryOp::kAnd:
      *kind = OperationKind::kAnd;
      return true;
    case loop::BinaryOp::kOr:
      *kind = OperationKind::kOr;
      return true;
    case loop::BinaryOp::kBitAnd:
      *kind = OperationKind::kBitAnd;
      return true;
    case loop::BinaryOp::kBitOr:
      *kind = OperationKind::kBitOr;
      return true;
    case loop::BinaryOp::kBitXor:
      *kind = OperationKind::kBitXor;
      return true;
    case loop::BinaryOp::kShiftLeft:
      *kind = OperationKind::kLShift;
      return true;
    case loop::BinaryOp::kShiftRight:
      *kind = OperationKind::kRShift;
      return true;
    case loop::BinaryOp::kDiv:  // Python's `/` is true division; integers truncate here
    case loop::BinaryOp::kMin:
    case loop::BinaryOp::kMax:
      return false;
  }
  return false;
}

// The text of a float immediate: the shortest that reads back to the value in its own type.
ExprDoc FloatText(const loop::FloatImmNode& imm) {
  if (std::isnan(imm.value)) return StringLiteral("nan");
  if (std::isinf(imm.value)) return StringLiteral(imm.value > 0 ? "inf" : "-inf");
  std::string text = imm.type.dtype == DataType::kFloat32
                         ? ShortestFloatText(static_cast<float>(imm.value))
                         : ShortestDoubleText(imm.value);
  if (!LooksLikeFloat(text)) text.append(".0");
  return Id(std::move(text));
}

}  // namespace

Doc BuildIntImm(const ObjectRef& node, IRDocsifier&) {
  const auto* imm = node.as<loop::IntImmNode>();
  if (imm->type.dtype == DataType::kBool) return WithSource(BoolLiteral(imm->value != 0), node);
  // Index arithmetic is int64: its constants are plain numbers.
  if (imm->type.dtype == DataType::kInt64) return WithSource(IntLiteral(imm->value), node);
  return WithSource(TCall(DataTypeName(imm->type.dtype), {IntLiteral(imm->value)}), node);
}

Doc BuildFloatImm(const ObjectRef& node, IRDocsifier&) {
  const auto* imm = node.as<loop::FloatImmNode>();
  return WithSource(TCall(DataTypeName(imm->type.dtype), {FloatText(*imm)}), node);
}

Doc BuildStringImm(const ObjectRef& node, IRDocsifier&) {
  return WithSource(StringLiteral(node.as<loop::StringImmNode>()->value), node);
}

Doc BuildVar(const ObjectRef& node, IRDocsifier& d) { return VarDoc(d, node.as<loop::VarNode>()); }

Doc BuildBinary(const ObjectRef& node, IRDocsifier& d) {
  const auto* binary = node.as<loop::BinaryNode>();
  ExprDoc a = d.AsExprDoc(binary->a);
  ExprDoc b = d.AsExprDoc(binary->b);
  OperationKind kind;
  if (OperationKindOf(binary->op, &kind)) {
    return WithSource(std::make_shared<OperationDocNode>(kind, std::vector<ExprDoc>{a, b}), node);
  }
  const char* callee = "?";
  switch (binary->op) {
    case loop::BinaryOp::kDiv:
      if (IsFloat(binary->type.dtype)) {
        return WithSource(
            std::make_shared<OperationDocNode>(OperationKind::kDiv, std::vector<ExprDoc>{a, b}),
            node);
      }
      callee = "truncdiv";
      break;
    case loop::BinaryOp::kMin:
      callee = "min";
      break;
    case loop::BinaryOp::kMax:
      callee = "max";
      break;
    default:
      break;
  }
  return WithSource(TCall(callee, {a, b}), node);
}

Doc BuildNot(const ObjectRef& node, IRDocsifier& d) {
  ExprDoc a = d.AsExprDoc(node.as<loop::NotNode>()->a);
  return WithSource(
      std::make_shared<OperationDocNode>(OperationKind::kNot, std::vector<ExprDoc>{a}), node);
}

Doc BuildCast(const ObjectRef& node, IRDocsifier& d) {
  const auto* cast = node.as<loop::CastNode>();
  return WithSource(
      TCall("Cast", {StringLiteral(loop::PrimTypeName(cast->type)), d.AsExprDoc(cast->value)}),
      node);
}

Doc BuildSelect(const ObjectRef& node, IRDocsifier& d) {
  const auto* select = node.as<loop::SelectNode>();
  return WithSource(TCall("Select", {d.AsExprDoc(select->cond), d.AsExprDoc(select->true_value),
                                     d.AsExprDoc(select->false_value)}),
                    node);
}

Doc BuildIntrinsicCall(const ObjectRef& node, IRDocsifier& d) {
  const auto* call = node.as<loop::IntrinsicCallNode>();
  return WithSource(TCall(loop::IntrinsicName(call->intrinsic), ExprDocs(d, call->args)), node);
}

Doc BuildBufferLoad(const ObjectRef& node, IRDocsifier& d) {
  const auto* load = node.as<loop::BufferLoadNode>();
  ExprDoc buffer = BufferDoc(d, load->buffer);
  std::vector<ExprDoc> indices = ExprDocs(d, load->indices);
  // A rank-0 buffer: `A[()]`, as Python indexes a 0-d array.
  if (indices.empty()) indices.push_back(std::make_shared<TupleDocNode>(std::vector<ExprDoc>{}));
  return WithSource(std::make_shared<IndexDocNode>(std::move(buffer), std::move(indices)), node);
}

Doc BuildRamp(const ObjectRef& node, IRDocsifier& d) {
  const auto* ramp = node.as<loop::RampNode>();
  return WithSource(
      TCall("Ramp", {d.AsExprDoc(ramp->base), d.AsExprDoc(ramp->stride), IntLiteral(ramp->lanes)}),
      node);
}

Doc BuildBroadcast(const ObjectRef& node, IRDocsifier& d) {
  const auto* broadcast = node.as<loop::BroadcastNode>();
  return WithSource(
      TCall("Broadcast", {d.AsExprDoc(broadcast->value), IntLiteral(broadcast->lanes)}), node);
}

}  // namespace kiln::printer::loop_printer
