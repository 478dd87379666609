// Loop-dialect expression constructors and their typing rules.
#include "engine/loop/expr.h"

#include "absl/strings/str_cat.h"
#include "engine/loop/buffer.h"

namespace kiln::loop {

std::string PrimTypeName(const PrimType& type) {
  if (type.lanes == 1) return DataTypeName(type.dtype);
  return absl::StrCat(DataTypeName(type.dtype), "x", type.lanes);
}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kFloorDiv: return "floordiv";
    case BinaryOp::kFloorMod: return "floormod";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kEQ: return "eq";
    case BinaryOp::kNE: return "ne";
    case BinaryOp::kLT: return "lt";
    case BinaryOp::kLE: return "le";
    case BinaryOp::kGT: return "gt";
    case BinaryOp::kGE: return "ge";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
    case BinaryOp::kBitAnd: return "bitwise_and";
    case BinaryOp::kBitOr: return "bitwise_or";
    case BinaryOp::kBitXor: return "bitwise_xor";
    case BinaryOp::kShiftLeft: return "shift_left";
    case BinaryOp::kShiftRight: return "shift_right";
  }
  return "?";
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEQ || op == BinaryOp::kNE || op == BinaryOp::kLT ||
         op == BinaryOp::kLE || op == BinaryOp::kGT || op == BinaryOp::kGE;
}

const char* IntrinsicName(Intrinsic intrinsic) {
  switch (intrinsic) {
    case Intrinsic::kExp: return "exp";
    case Intrinsic::kLog: return "log";
    case Intrinsic::kSqrt: return "sqrt";
    case Intrinsic::kRsqrt: return "rsqrt";
    case Intrinsic::kTanh: return "tanh";
    case Intrinsic::kSigmoid: return "sigmoid";
    case Intrinsic::kErf: return "erf";
    case Intrinsic::kPow: return "pow";
    case Intrinsic::kFma: return "fma";
    case Intrinsic::kAbs: return "abs";
    case Intrinsic::kFloor: return "floor";
    case Intrinsic::kCeil: return "ceil";
    case Intrinsic::kRound: return "round";
    case Intrinsic::kTrunc: return "trunc";
    case Intrinsic::kSin: return "sin";
    case Intrinsic::kCos: return "cos";
    case Intrinsic::kTan: return "tan";
    case Intrinsic::kAsin: return "asin";
    case Intrinsic::kAcos: return "acos";
    case Intrinsic::kAtan: return "atan";
    case Intrinsic::kSinh: return "sinh";
    case Intrinsic::kCosh: return "cosh";
    case Intrinsic::kAsinh: return "asinh";
    case Intrinsic::kAcosh: return "acosh";
    case Intrinsic::kAtanh: return "atanh";
    case Intrinsic::kIsNan: return "isnan";
    case Intrinsic::kIsInf: return "isinf";
    case Intrinsic::kFmod: return "fmod";
    case Intrinsic::kStringUpper: return "string_upper";
    case Intrinsic::kStringLower: return "string_lower";
    case Intrinsic::kStringEqual: return "string_equal";
  }
  return "?";
}

int IntrinsicArity(Intrinsic intrinsic) {
  switch (intrinsic) {
    case Intrinsic::kPow:
    case Intrinsic::kFmod:
    case Intrinsic::kStringEqual: return 2;
    case Intrinsic::kFma: return 3;
    default: return 1;
  }
}

BufferLoadNode::BufferLoadNode(Buffer buffer, std::vector<PrimExpr> indices, PrimType type,
                               Span span)
    : PrimExprNode(ObjectKind::kBufferLoad, type, std::move(span)),
      buffer(std::move(buffer)),
      indices(std::move(indices)) {}

PrimExpr IntImm(int64_t value, PrimType type, Span span) {
  return PrimExpr(new IntImmNode(type, value, std::move(span)));
}
PrimExpr FloatImm(double value, PrimType type, Span span) {
  return PrimExpr(new FloatImmNode(type, value, std::move(span)));
}
PrimExpr StringImm(std::string value, Span span) {
  return PrimExpr(new StringImmNode(std::move(value), std::move(span)));
}
PrimExpr BoolImm(bool value, Span span) { return IntImm(value ? 1 : 0, kBoolType, span); }

PrimExpr MakeConst(PrimType type, double value, Span span) {
  PrimExpr scalar = IsFloat(type.dtype)
                        ? FloatImm(value, type.element(), span)
                        : IntImm(static_cast<int64_t>(value), type.element(), span);
  return type.lanes == 1 ? scalar : MakeBroadcast(scalar, type.lanes, span);
}

Var MakeVar(std::string name, PrimType type, Span span) {
  return Var(new VarNode(std::move(name), type, std::move(span)));
}

namespace {
// A scalar operand meeting a vector is broadcast to its width.
void MatchLanes(PrimExpr* a, PrimExpr* b) {
  if ((*a)->type.lanes == (*b)->type.lanes) return;
  if ((*a)->type.lanes == 1) *a = MakeBroadcast(*a, (*b)->type.lanes);
  else if ((*b)->type.lanes == 1) *b = MakeBroadcast(*b, (*a)->type.lanes);
}
}  // namespace

PrimExpr MakeBinary(BinaryOp op, PrimExpr a, PrimExpr b, Span span) {
  KILN_CHECK(a.defined() && b.defined()) << "binary " << BinaryOpName(op) << " of null";
  MatchLanes(&a, &b);
  KILN_CHECK(a->type == b->type) << "binary " << BinaryOpName(op) << " of "
                                 << PrimTypeName(a->type) << " and " << PrimTypeName(b->type);
  PrimType type = IsComparison(op) ? PrimType{DataType::kBool, a->type.lanes} : a->type;
  return PrimExpr(new BinaryNode(op, std::move(a), std::move(b), type, std::move(span)));
}

PrimExpr MakeNot(PrimExpr a, Span span) { return PrimExpr(new NotNode(std::move(a), std::move(span))); }

PrimExpr MakeCast(PrimType type, PrimExpr value, Span span) {
  if (value->type == type) return value;
  return PrimExpr(new CastNode(type, std::move(value), std::move(span)));
}

PrimExpr MakeSelect(PrimExpr cond, PrimExpr true_value, PrimExpr false_value, Span span) {
  MatchLanes(&true_value, &false_value);
  KILN_CHECK(true_value->type == false_value->type)
      << "select of " << PrimTypeName(true_value->type) << " and "
      << PrimTypeName(false_value->type);
  if (cond->type.lanes == 1 && true_value->type.lanes > 1) {
    cond = MakeBroadcast(cond, true_value->type.lanes);
  }
  return PrimExpr(new SelectNode(std::move(cond), std::move(true_value), std::move(false_value),
                                 std::move(span)));
}

PrimExpr MakeIntrinsic(Intrinsic intrinsic, std::vector<PrimExpr> args, Span span) {
  KILN_CHECK(static_cast<int>(args.size()) == IntrinsicArity(intrinsic))
      << IntrinsicName(intrinsic) << " takes " << IntrinsicArity(intrinsic) << " arguments";
  PrimType type = args[0]->type;
  if (intrinsic == Intrinsic::kIsNan || intrinsic == Intrinsic::kIsInf ||
      intrinsic == Intrinsic::kStringEqual) {
    type = PrimType{DataType::kBool, type.lanes};
  }
  return PrimExpr(new IntrinsicCallNode(intrinsic, std::move(args), type, std::move(span)));
}

PrimExpr MakeBufferLoad(Buffer buffer, std::vector<PrimExpr> indices, Span span) {
  int lanes = 1;
  for (const PrimExpr& index : indices) lanes = std::max(lanes, index->type.lanes);
  PrimType type{buffer->dtype, lanes};
  return PrimExpr(new BufferLoadNode(std::move(buffer), std::move(indices), type, std::move(span)));
}

PrimExpr MakeRamp(PrimExpr base, PrimExpr stride, int lanes, Span span) {
  return PrimExpr(new RampNode(std::move(base), std::move(stride), lanes, std::move(span)));
}

PrimExpr MakeBroadcast(PrimExpr value, int lanes, Span span) {
  return PrimExpr(new BroadcastNode(std::move(value), lanes, std::move(span)));
}

namespace {
// Integers stay integers: through a double, values beyond 2^53 would round.
PrimExpr IndexConst(const PrimExpr& like, int64_t value) {
  PrimType type = like->type.element();
  if (IsFloat(type.dtype)) return FloatImm(static_cast<double>(value), type);
  return IntImm(value, type);
}
}  // namespace

PrimExpr operator+(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kAdd, a, b); }
PrimExpr operator-(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kSub, a, b); }
PrimExpr operator*(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kMul, a, b); }
PrimExpr operator/(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kDiv, a, b); }
PrimExpr operator+(const PrimExpr& a, int64_t b) { return a + IndexConst(a, b); }
PrimExpr operator-(const PrimExpr& a, int64_t b) { return a - IndexConst(a, b); }
PrimExpr operator*(const PrimExpr& a, int64_t b) { return a * IndexConst(a, b); }
PrimExpr FloorDiv(const PrimExpr& a, const PrimExpr& b) {
  return MakeBinary(BinaryOp::kFloorDiv, a, b);
}
PrimExpr FloorMod(const PrimExpr& a, const PrimExpr& b) {
  return MakeBinary(BinaryOp::kFloorMod, a, b);
}
PrimExpr FloorDiv(const PrimExpr& a, int64_t b) { return FloorDiv(a, IndexConst(a, b)); }
PrimExpr FloorMod(const PrimExpr& a, int64_t b) { return FloorMod(a, IndexConst(a, b)); }
PrimExpr Min(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kMin, a, b); }
PrimExpr Max(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kMax, a, b); }
PrimExpr operator<(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kLT, a, b); }
PrimExpr operator<=(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kLE, a, b); }
PrimExpr operator>(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kGT, a, b); }
PrimExpr operator>=(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kGE, a, b); }
PrimExpr operator&&(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kAnd, a, b); }
PrimExpr operator||(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kOr, a, b); }
PrimExpr Equal(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kEQ, a, b); }
PrimExpr NotEqual(const PrimExpr& a, const PrimExpr& b) { return MakeBinary(BinaryOp::kNE, a, b); }

bool AsConstInt(const PrimExpr& expr, int64_t* value) {
  const auto* imm = expr.as<IntImmNode>();
  if (imm == nullptr) return false;
  *value = imm->value;
  return true;
}

}  // namespace kiln::loop
