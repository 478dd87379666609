// Analyzer::Bound: the interval of an integer expression, from the ranges of
// the bound variables and the types of everything else.
#include "engine/loop/arith/analyzer.h"

#include "engine/loop/arith/const_fold.h"

namespace kiln::loop::arith {

Interval Analyzer::Bound(const PrimExpr& expr) const {
  DataType dtype = expr->type.dtype;
  if (IsFloat(dtype)) return Interval::Everything();
  switch (expr->kind()) {
    case ObjectKind::kIntImm: {
      int64_t value = expr.as<IntImmNode>()->value;
      // A uint64 above INT64_MAX is stored as a negative bit pattern.
      if (dtype == DataType::kUInt64 && value < 0) return TypeRange(dtype);
      return Interval::Single(value);
    }
    case ObjectKind::kLoopVar: {
      auto it = var_ranges_.find(expr.as<VarNode>());
      return it != var_ranges_.end() ? it->second.second : TypeRange(dtype);
    }
    case ObjectKind::kBinary: {
      const auto* op = expr.as<BinaryNode>();
      if (IsComparison(op->op) || op->op == BinaryOp::kAnd || op->op == BinaryOp::kOr) {
        return Interval{0, 1};
      }
      if (IsFloat(op->a->type.dtype)) return TypeRange(dtype);
      Interval a = Bound(op->a);
      Interval b = Bound(op->b);
      Interval result;
      switch (op->op) {
        case BinaryOp::kAdd: result = IntervalAdd(a, b); break;
        case BinaryOp::kSub: result = IntervalSub(a, b); break;
        case BinaryOp::kMul: result = IntervalMul(a, b); break;
        case BinaryOp::kDiv: result = IntervalTruncDiv(a, b); break;
        case BinaryOp::kFloorDiv: result = IntervalFloorDiv(a, b); break;
        case BinaryOp::kFloorMod: result = IntervalFloorMod(a, b); break;
        case BinaryOp::kMin: result = IntervalMin(a, b); break;
        case BinaryOp::kMax: result = IntervalMax(a, b); break;
        case BinaryOp::kBitAnd:
          // Masking with a non-negative value keeps the result within it.
          if (b.min >= 0) result = Interval{0, b.max};
          else if (a.min >= 0) result = Interval{0, a.max};
          else result = Interval::Everything();
          break;
        default: result = Interval::Everything(); break;
      }
      // Outside the type's range the value wraps: only the type range is sure.
      return FitToType(result, dtype);
    }
    case ObjectKind::kNot: return Interval{0, 1};
    case ObjectKind::kCast: {
      const auto* op = expr.as<CastNode>();
      DataType from = op->value->type.dtype;
      if (dtype == DataType::kBool) return Interval{0, 1};
      if (IsFloat(from)) return TypeRange(dtype);
      Interval value = Bound(op->value);
      // An unbounded uint64 may exceed INT64_MAX and turn negative.
      if (from == DataType::kUInt64 && !value.bounded_above()) return TypeRange(dtype);
      return FitToType(value, dtype);
    }
    case ObjectKind::kSelect: {
      const auto* op = expr.as<SelectNode>();
      return Union(Bound(op->true_value), Bound(op->false_value));
    }
    case ObjectKind::kRamp: {
      const auto* op = expr.as<RampNode>();
      Interval steps{0, op->lanes - 1};
      return FitToType(IntervalAdd(Bound(op->base), IntervalMul(Bound(op->stride), steps)), dtype);
    }
    case ObjectKind::kBroadcast: return Bound(expr.as<BroadcastNode>()->value);
    default: return TypeRange(dtype);  // loads, intrinsic calls
  }
}

std::optional<Interval> Analyzer::ConstIntBound(const PrimExpr& expr) const {
  if (IsFloat(expr->type.dtype)) return std::nullopt;
  return Bound(expr);
}

}  // namespace kiln::loop::arith
