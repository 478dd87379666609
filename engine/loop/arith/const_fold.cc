// Folding of immediates. Integers fold in 64 bits and wrap to the operand
// type; unsigned types compare and divide as unsigned; floats fold in double.
#include "engine/loop/arith/const_fold.h"

#include <cmath>
#include <optional>

#include "engine/ir/dtype_dispatch.h"
#include "engine/loop/arith/interval.h"

namespace kiln::loop::arith {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  // C++ truncates: step down when the exact quotient was negative and inexact.
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t WrapToType(DataType dtype, int64_t value) {
  return DispatchDataType(dtype, [&]<DataType D>() -> int64_t {
    if constexpr (D == DataType::kBool) {
      return value != 0 ? 1 : 0;
    } else if constexpr (IsSignedInt(D) || IsUnsignedInt(D)) {
      // Narrowing the bits is modular; int64 and uint64 keep them.
      return static_cast<DataTypeStorage<D>>(static_cast<uint64_t>(value));
    } else {
      return value;
    }
  });
}

double RoundToType(DataType dtype, double value) {
  return DispatchDataType(dtype, [&]<DataType D>() -> double {
    // A round trip through the stored form (float64's is exact).
    if constexpr (IsFloat(D)) return ElementToDouble<D>(ElementFromDouble<D>(value));
    return value;
  });
}

namespace {

// The scalar immediate of a constant, looking through a Broadcast.
const PrimExprNode* ScalarConstant(const PrimExpr& expr, int* lanes) {
  const PrimExprNode* node = expr.get();
  *lanes = 1;
  if (const auto* broadcast = expr.as<BroadcastNode>()) {
    node = broadcast->value.get();
    *lanes = broadcast->lanes;
  }
  if (node == nullptr) return nullptr;
  if (node->kind() == ObjectKind::kIntImm || node->kind() == ObjectKind::kFloatImm) return node;
  return nullptr;
}

PrimExpr Widen(PrimExpr scalar, int lanes, const Span& span) {
  return lanes == 1 ? scalar : MakeBroadcast(std::move(scalar), lanes, span);
}

std::optional<int64_t> FoldSigned(BinaryOp op, DataType dtype, int64_t a, int64_t b) {
  // Fold in unsigned arithmetic so wrapping is defined; the caller narrows.
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryOp::kAdd: return static_cast<int64_t>(ua + ub);
    case BinaryOp::kSub: return static_cast<int64_t>(ua - ub);
    case BinaryOp::kMul: return static_cast<int64_t>(ua * ub);
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod:
      if (b == 0 || (b == -1 && a == INT64_MIN)) return std::nullopt;
      if (op == BinaryOp::kDiv) return a / b;
      return op == BinaryOp::kFloorDiv ? FloorDivInt(a, b) : FloorModInt(a, b);
    case BinaryOp::kMin: return a < b ? a : b;
    case BinaryOp::kMax: return a > b ? a : b;
    case BinaryOp::kEQ: return a == b;
    case BinaryOp::kNE: return a != b;
    case BinaryOp::kLT: return a < b;
    case BinaryOp::kLE: return a <= b;
    case BinaryOp::kGT: return a > b;
    case BinaryOp::kGE: return a >= b;
    case BinaryOp::kAnd: return (a != 0) && (b != 0);
    case BinaryOp::kOr: return (a != 0) || (b != 0);
    case BinaryOp::kBitAnd: return a & b;
    case BinaryOp::kBitOr: return a | b;
    case BinaryOp::kBitXor: return a ^ b;
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRight: {
      // Shifting by the width or more is undefined: leave it to run time.
      int bits = DataTypeBytes(dtype) * 8;
      if (b < 0 || b >= bits) return std::nullopt;
      if (op == BinaryOp::kShiftLeft) return static_cast<int64_t>(ua << b);
      // Signed values are stored sign-extended (arithmetic shift), unsigned
      // ones zero-extended (logical shift); uint64 shifts its bit pattern.
      if (dtype == DataType::kUInt64) return static_cast<int64_t>(ua >> b);
      return a >> b;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> FoldUnsigned(BinaryOp op, DataType dtype, uint64_t a, uint64_t b) {
  switch (op) {
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
      if (b == 0) return std::nullopt;
      return static_cast<int64_t>(a / b);
    case BinaryOp::kFloorMod:
      if (b == 0) return std::nullopt;
      return static_cast<int64_t>(a % b);
    case BinaryOp::kMin: return static_cast<int64_t>(a < b ? a : b);
    case BinaryOp::kMax: return static_cast<int64_t>(a > b ? a : b);
    case BinaryOp::kLT: return a < b;
    case BinaryOp::kLE: return a <= b;
    case BinaryOp::kGT: return a > b;
    case BinaryOp::kGE: return a >= b;
    default: return FoldSigned(op, dtype, static_cast<int64_t>(a), static_cast<int64_t>(b));
  }
}

std::optional<double> FoldFloat(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMin:
    case BinaryOp::kMax:
      // NaN handling of min/max is the code generator's choice: leave it.
      if (std::isnan(a) || std::isnan(b)) return std::nullopt;
      return op == BinaryOp::kMin ? std::fmin(a, b) : std::fmax(a, b);
    case BinaryOp::kEQ: return a == b;
    case BinaryOp::kNE: return a != b;
    case BinaryOp::kLT: return a < b;
    case BinaryOp::kLE: return a <= b;
    case BinaryOp::kGT: return a > b;
    case BinaryOp::kGE: return a >= b;
    default: return std::nullopt;  // floordiv, floormod, logic, bitwise: integers only
  }
}

}  // namespace

BinaryOp InvertComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kLT: return BinaryOp::kGE;
    case BinaryOp::kLE: return BinaryOp::kGT;
    case BinaryOp::kGT: return BinaryOp::kLE;
    case BinaryOp::kGE: return BinaryOp::kLT;
    case BinaryOp::kEQ: return BinaryOp::kNE;
    case BinaryOp::kNE: return BinaryOp::kEQ;
    default: KILN_UNREACHABLE() << BinaryOpName(op) << " is not a comparison";
  }
  return op;
}

bool IsConstant(const PrimExpr& expr) {
  int lanes;
  return ScalarConstant(expr, &lanes) != nullptr;
}

PrimExpr FoldBinary(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
  int lanes_a, lanes_b;
  const PrimExprNode* ca = ScalarConstant(a, &lanes_a);
  const PrimExprNode* cb = ScalarConstant(b, &lanes_b);
  if (ca == nullptr || cb == nullptr || lanes_a != lanes_b || ca->type != cb->type) {
    return nullptr;
  }
  DataType dtype = ca->type.dtype;
  PrimType result_type = IsComparison(op) ? kBoolType : ca->type;
  if (ca->kind() == ObjectKind::kFloatImm) {
    const auto* fa = static_cast<const FloatImmNode*>(ca);
    const auto* fb = static_cast<const FloatImmNode*>(cb);
    std::optional<double> value = FoldFloat(op, fa->value, fb->value);
    if (!value.has_value()) return nullptr;
    PrimExpr scalar = IsComparison(op)
                          ? IntImm(*value != 0 ? 1 : 0, kBoolType, span)
                          : FloatImm(RoundToType(dtype, *value), result_type, span);
    return Widen(std::move(scalar), lanes_a, span);
  }
  int64_t va = static_cast<const IntImmNode*>(ca)->value;
  int64_t vb = static_cast<const IntImmNode*>(cb)->value;
  std::optional<int64_t> value =
      IsUnsignedInt(dtype)
          ? FoldUnsigned(op, dtype, static_cast<uint64_t>(va), static_cast<uint64_t>(vb))
          : FoldSigned(op, dtype, va, vb);
  if (!value.has_value()) return nullptr;
  return Widen(IntImm(WrapToType(result_type.dtype, *value), result_type, span), lanes_a, span);
}

PrimExpr FoldNot(const PrimExpr& a, const Span& span) {
  int lanes;
  const PrimExprNode* c = ScalarConstant(a, &lanes);
  if (c == nullptr || c->kind() != ObjectKind::kIntImm) return nullptr;
  const auto* imm = static_cast<const IntImmNode*>(c);
  return Widen(IntImm(imm->value == 0 ? 1 : 0, imm->type, span), lanes, span);
}

PrimExpr FoldCast(PrimType type, const PrimExpr& value, const Span& span) {
  int lanes;
  const PrimExprNode* c = ScalarConstant(value, &lanes);
  if (c == nullptr || lanes != type.lanes) return nullptr;
  DataType from = c->type.dtype;
  DataType to = type.dtype;
  // A string's text is made at run time (libkiln_rt), never folded.
  if (from == DataType::kString || to == DataType::kString) return nullptr;
  PrimType scalar_type = type.element();
  PrimExpr scalar;
  if (c->kind() == ObjectKind::kFloatImm) {
    const auto* f = static_cast<const FloatImmNode*>(c);
    if (IsFloat(to)) {
      scalar = FloatImm(RoundToType(to, f->value), scalar_type, span);
    } else if (to == DataType::kBool) {
      scalar = IntImm(f->value != 0 ? 1 : 0, scalar_type, span);
    } else {
      // Out-of-range and NaN conversions are undefined: leave them to run time.
      double truncated = std::trunc(f->value);
      double lo, hi;  // the half-open range of values `to` holds
      if (to == DataType::kInt64) {
        lo = -9223372036854775808.0, hi = 9223372036854775808.0;
      } else if (to == DataType::kUInt64) {
        lo = 0.0, hi = 18446744073709551616.0;
      } else {
        Interval range = TypeRange(to);
        lo = static_cast<double>(range.min), hi = static_cast<double>(range.max) + 1.0;
      }
      if (std::isnan(truncated) || truncated < lo || truncated >= hi) return nullptr;
      int64_t bits = truncated >= 9223372036854775808.0
                         ? static_cast<int64_t>(static_cast<uint64_t>(truncated))
                         : static_cast<int64_t>(truncated);
      scalar = IntImm(WrapToType(to, bits), scalar_type, span);
    }
  } else {
    int64_t v = static_cast<const IntImmNode*>(c)->value;
    if (IsFloat(to)) {
      double as_double = IsUnsignedInt(from) ? static_cast<double>(static_cast<uint64_t>(v))
                                             : static_cast<double>(v);
      scalar = FloatImm(RoundToType(to, as_double), scalar_type, span);
    } else {
      scalar = IntImm(WrapToType(to, v), scalar_type, span);
    }
  }
  return Widen(std::move(scalar), lanes, span);
}

}  // namespace kiln::loop::arith
