// Constant folding of loop-dialect operators on immediates, with Kiln's
// integer semantics (kDiv truncates, kFloorDiv/kFloorMod round toward
// negative infinity, narrow integers wrap) and float results computed in
// double, then rounded to the expression's dtype.
#pragma once

#include <cstdint>

#include "engine/loop/expr.h"

namespace kiln::loop::arith {

// Floor division and modulo of int64 (b != 0; the modulo has b's sign).
int64_t FloorDivInt(int64_t a, int64_t b);
int64_t FloorModInt(int64_t a, int64_t b);

// `value` wrapped to `dtype`'s width (two's complement), as IntImm stores it:
// sign-extended for signed types, zero-extended for unsigned ones except
// uint64 (its bit pattern), 0 or 1 for bool.
int64_t WrapToType(DataType dtype, int64_t value);
// `value` rounded to the float dtype's precision (float32 -> float, ...).
double RoundToType(DataType dtype, double value);

// The comparison true exactly when `op` is false, for integer operands
// (kLT -> kGE, kEQ -> kNE, ...; floats differ because NaN compares false).
BinaryOp InvertComparison(BinaryOp op);

// True for an IntImm or FloatImm, or a Broadcast of one.
bool IsConstant(const PrimExpr& expr);

// The folded result (carrying `span`), or null when an operand is not a
// constant or folding is not defined (integer division by zero, a float
// floordiv, an out-of-range float-to-int cast, a float min/max with NaN).
PrimExpr FoldBinary(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span);
PrimExpr FoldNot(const PrimExpr& a, const Span& span);
PrimExpr FoldCast(PrimType type, const PrimExpr& value, const Span& span);

}  // namespace kiln::loop::arith
