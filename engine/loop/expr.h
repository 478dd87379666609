// Loop-dialect expressions (the TIR analogue): scalar and vector arithmetic
// over loop variables and buffer elements. Immutable like graph nodes; every
// expression has a PrimType and a span (the graph node it was lowered from).
//
// One Binary node with an operator enum stands for TIR's dozen arithmetic,
// comparison and logic classes: every consumer (printer, simplifier,
// interpreter, code generator) switches on the operator in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/object.h"
#include "engine/ir/span.h"
#include "engine/loop/prim_type.h"

namespace kiln::loop {

class BufferNode;
using Buffer = Ref<BufferNode>;

class PrimExprNode : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k >= ObjectKind::kIntImm && k <= ObjectKind::kBroadcast;
  }
  const PrimType type;
  const Span span;

 protected:
  PrimExprNode(ObjectKind kind, PrimType type, Span span)
      : Object(kind), type(type), span(std::move(span)) {}
};
using PrimExpr = Ref<PrimExprNode>;

// An integer or bool immediate (bools are 0 or 1).
class IntImmNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kIntImm; }
  IntImmNode(PrimType type, int64_t value, Span span)
      : PrimExprNode(ObjectKind::kIntImm, type, std::move(span)), value(value) {}
  const int64_t value;
};

class FloatImmNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kFloatImm; }
  FloatImmNode(PrimType type, double value, Span span)
      : PrimExprNode(ObjectKind::kFloatImm, type, std::move(span)), value(value) {}
  const double value;
};

// A constant string element (type string): the words of a StringNormalizer's stopword list.
// Native code points at a private global holding the bytes, the interpreter at `value`'s.
class StringImmNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kStringImm; }
  StringImmNode(std::string value, Span span)
      : PrimExprNode(ObjectKind::kStringImm, PrimType{DataType::kString, 1}, std::move(span)),
        value(std::move(value)) {}
  const std::string value;
};

// A scalar variable: a loop index, a let-bound value, or the data handle of
// a buffer (type kHandle below). Identity is the node, not the name.
class VarNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kLoopVar; }
  VarNode(std::string name, PrimType type, Span span)
      : PrimExprNode(ObjectKind::kLoopVar, type, std::move(span)), name(std::move(name)) {}
  const std::string name;
};
using Var = Ref<VarNode>;

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul,
  kDiv,       // floats: true division; integers: truncating (C semantics)
  kFloorDiv,  // integers, rounding toward negative infinity
  kFloorMod,  // integers, result has the divisor's sign
  kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE,  // result bool
  kAnd, kOr,                     // bool operands
  // Integers only (two's complement). Shifts by an amount outside
  // [0, bits) are undefined; kShiftRight is logical for unsigned types and
  // arithmetic for signed ones.
  kBitAnd, kBitOr, kBitXor, kShiftLeft, kShiftRight,
};
const char* BinaryOpName(BinaryOp op);  // "add", "floordiv", "lt", ...
bool IsComparison(BinaryOp op);

class BinaryNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kBinary; }
  BinaryNode(BinaryOp op, PrimExpr a, PrimExpr b, PrimType type, Span span)
      : PrimExprNode(ObjectKind::kBinary, type, std::move(span)),
        op(op),
        a(std::move(a)),
        b(std::move(b)) {}
  const BinaryOp op;
  const PrimExpr a;
  const PrimExpr b;
};

class NotNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kNot; }
  NotNode(PrimExpr a, Span span)
      : PrimExprNode(ObjectKind::kNot, a->type, std::move(span)), a(std::move(a)) {}
  const PrimExpr a;
};

class CastNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kCast; }
  CastNode(PrimType type, PrimExpr value, Span span)
      : PrimExprNode(ObjectKind::kCast, type, std::move(span)), value(std::move(value)) {}
  const PrimExpr value;
};

// cond ? true_value : false_value, both sides evaluated (no side effects in
// loop expressions, so this is safe and vectorizes).
class SelectNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kSelect; }
  SelectNode(PrimExpr cond, PrimExpr true_value, PrimExpr false_value, Span span)
      : PrimExprNode(ObjectKind::kSelect, true_value->type, std::move(span)),
        cond(std::move(cond)),
        true_value(std::move(true_value)),
        false_value(std::move(false_value)) {}
  const PrimExpr cond;
  const PrimExpr true_value;
  const PrimExpr false_value;
};

// Pure math intrinsics. LowerIntrin rewrites the ones without a direct
// machine or libm form (sigmoid, erf for f16, ...) into others.
enum class Intrinsic : uint8_t {
  kExp, kLog, kSqrt, kRsqrt, kTanh, kSigmoid, kErf, kPow, kFma,
  kAbs, kFloor, kCeil, kRound, kTrunc, kSin, kCos, kTan, kAsin, kAcos, kAtan,
  kSinh, kCosh, kAsinh, kAcosh, kAtanh, kIsNan, kIsInf, kFmod,
  // On string elements (scalars only; libkiln_rt's kiln_rt_string_* in both backends):
  // upper/lower give a string, string_equal a bool.
  kStringUpper, kStringLower, kStringEqual,
};
// True for the intrinsics on string elements, which take and give no vectors.
constexpr bool IsStringIntrinsic(Intrinsic intrinsic) {
  return intrinsic == Intrinsic::kStringUpper || intrinsic == Intrinsic::kStringLower ||
         intrinsic == Intrinsic::kStringEqual;
}
const char* IntrinsicName(Intrinsic intrinsic);  // "exp", "fma", ...
int IntrinsicArity(Intrinsic intrinsic);

class IntrinsicCallNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kIntrinsicCall; }
  IntrinsicCallNode(Intrinsic intrinsic, std::vector<PrimExpr> args, PrimType type, Span span)
      : PrimExprNode(ObjectKind::kIntrinsicCall, type, std::move(span)),
        intrinsic(intrinsic),
        args(std::move(args)) {}
  const Intrinsic intrinsic;
  const std::vector<PrimExpr> args;
};

// buffer[indices...]; one index per buffer dimension (one after
// FlattenBuffer). A Ramp index loads a vector.
class BufferLoadNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kBufferLoad; }
  BufferLoadNode(Buffer buffer, std::vector<PrimExpr> indices, PrimType type, Span span);
  const Buffer buffer;
  const std::vector<PrimExpr> indices;
};

// The vector (base, base + stride, ..., base + (lanes-1) * stride).
class RampNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kRamp; }
  RampNode(PrimExpr base, PrimExpr stride, int lanes, Span span)
      : PrimExprNode(ObjectKind::kRamp, base->type.with_lanes(lanes), std::move(span)),
        base(std::move(base)),
        stride(std::move(stride)),
        lanes(lanes) {}
  const PrimExpr base;
  const PrimExpr stride;
  const int lanes;
};

// A scalar repeated in every lane.
class BroadcastNode final : public PrimExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kBroadcast; }
  BroadcastNode(PrimExpr value, int lanes, Span span)
      : PrimExprNode(ObjectKind::kBroadcast, value->type.with_lanes(lanes), std::move(span)),
        value(std::move(value)),
        lanes(lanes) {}
  const PrimExpr value;
  const int lanes;
};

// Constructors. Binary operands of different scalar types are an internal
// error (lowering inserts casts); a scalar meeting a vector is broadcast.
PrimExpr IntImm(int64_t value, PrimType type = kIndexType, Span span = nullptr);
PrimExpr FloatImm(double value, PrimType type = kFloat32Type, Span span = nullptr);
PrimExpr BoolImm(bool value, Span span = nullptr);
PrimExpr StringImm(std::string value, Span span = nullptr);
// The constant `value` in `type` (IntImm or FloatImm by the dtype).
PrimExpr MakeConst(PrimType type, double value, Span span = nullptr);
Var MakeVar(std::string name, PrimType type = kIndexType, Span span = nullptr);
PrimExpr MakeBinary(BinaryOp op, PrimExpr a, PrimExpr b, Span span = nullptr);
PrimExpr MakeNot(PrimExpr a, Span span = nullptr);
PrimExpr MakeCast(PrimType type, PrimExpr value, Span span = nullptr);
PrimExpr MakeSelect(PrimExpr cond, PrimExpr true_value, PrimExpr false_value,
                    Span span = nullptr);
PrimExpr MakeIntrinsic(Intrinsic intrinsic, std::vector<PrimExpr> args, Span span = nullptr);
PrimExpr MakeBufferLoad(Buffer buffer, std::vector<PrimExpr> indices, Span span = nullptr);
PrimExpr MakeRamp(PrimExpr base, PrimExpr stride, int lanes, Span span = nullptr);
PrimExpr MakeBroadcast(PrimExpr value, int lanes, Span span = nullptr);

// Operator sugar for compute definitions: `a * b + c`. No folding here (the
// simplifier does that); the span of the result is null.
PrimExpr operator+(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator-(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator*(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator/(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator+(const PrimExpr& a, int64_t b);
PrimExpr operator-(const PrimExpr& a, int64_t b);
PrimExpr operator*(const PrimExpr& a, int64_t b);
PrimExpr FloorDiv(const PrimExpr& a, const PrimExpr& b);
PrimExpr FloorMod(const PrimExpr& a, const PrimExpr& b);
PrimExpr FloorDiv(const PrimExpr& a, int64_t b);
PrimExpr FloorMod(const PrimExpr& a, int64_t b);
PrimExpr Min(const PrimExpr& a, const PrimExpr& b);
PrimExpr Max(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator<(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator<=(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator>(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator>=(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator&&(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator||(const PrimExpr& a, const PrimExpr& b);
PrimExpr Equal(const PrimExpr& a, const PrimExpr& b);
PrimExpr NotEqual(const PrimExpr& a, const PrimExpr& b);

// The value of an IntImm, or nullopt-like false when `expr` is not one.
bool AsConstInt(const PrimExpr& expr, int64_t* value);

}  // namespace kiln::loop
