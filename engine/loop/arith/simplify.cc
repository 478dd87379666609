// Analyzer::Simplify: a bottom-up rewriter. Children are simplified first;
// each node then tries, in order, constant folding, algebraic identities,
// and the rules of its operator (linear forms for int64 sums, div/mod by
// bounds, comparisons and min/max by bounds, Ramp/Broadcast arithmetic).
#include "engine/loop/arith/analyzer.h"

#include <cmath>
#include <optional>

#include "engine/loop/arith/const_fold.h"
#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/loop/arith/linear_form.h"
#include "engine/loop/functor.h"

namespace kiln::loop::arith {
namespace {

// The immediate of a constant (looking through a Broadcast), as a double.
std::optional<double> ConstValue(const PrimExpr& expr) {
  PrimExpr scalar = expr;
  if (const auto* broadcast = expr.as<BroadcastNode>()) scalar = broadcast->value;
  if (const auto* imm = scalar.as<IntImmNode>()) return static_cast<double>(imm->value);
  if (const auto* imm = scalar.as<FloatImmNode>()) return imm->value;
  return std::nullopt;
}

bool IsConstValue(const PrimExpr& expr, double value) {
  std::optional<double> v = ConstValue(expr);
  return v.has_value() && *v == value;
}

// Float zero of one sign: x + (-0.0) == x and x - (+0.0) == x for every x,
// but not with the other sign (-0.0 + +0.0 is +0.0).
bool IsSignedZero(const PrimExpr& expr, bool negative) {
  std::optional<double> v = ConstValue(expr);
  return v.has_value() && *v == 0.0 && std::signbit(*v) == negative;
}

bool IsIndex(const PrimExpr& expr) { return expr->type == kIndexType; }

PrimExpr Zero(const PrimType& type, const Span& span) { return MakeConst(type, 0.0, span); }

}  // namespace

class Simplifier final : public StmtExprMutator {
 public:
  explicit Simplifier(Analyzer* analyzer) : analyzer_(analyzer) {}

 protected:
  PrimExpr VisitVar_(const VarNode* op, const PrimExpr& self) override {
    if (IsFloat(op->type.dtype)) return self;
    // A variable bound to a single value (a loop of extent 1, `if i == 3`).
    Interval range = analyzer_->Bound(self);
    if (range.is_single()) return IntImm(range.min, op->type, op->span);
    return self;
  }

  PrimExpr VisitBinary_(const BinaryNode* op, const PrimExpr& self) override {
    PrimExpr a = VisitExpr(op->a);
    PrimExpr b = VisitExpr(op->b);
    PrimExpr result = RewriteBinary(op->op, a, b, op->span);
    if (!result.defined()) {
      if (a.same_as(op->a) && b.same_as(op->b)) return self;
      return MakeBinary(op->op, a, b, op->span);
    }
    return PreferExisting(result, self);
  }

  PrimExpr VisitNot_(const NotNode* op, const PrimExpr& self) override {
    PrimExpr a = VisitExpr(op->a);
    if (PrimExpr folded = FoldNot(a, op->span)) return folded;
    if (const auto* inner = a.as<NotNode>()) return inner->a;
    if (const auto* cmp = a.as<BinaryNode>()) {
      if (IsComparison(cmp->op) && !IsFloat(cmp->a->type.dtype)) {
        return MakeBinary(InvertComparison(cmp->op), cmp->a, cmp->b, op->span);
      }
    }
    if (a.same_as(op->a)) return self;
    return MakeNot(a, op->span);
  }

  PrimExpr VisitCast_(const CastNode* op, const PrimExpr& self) override {
    PrimExpr value = VisitExpr(op->value);
    if (PrimExpr folded = FoldCast(op->type, value, op->span)) return folded;
    if (value.same_as(op->value)) return self;
    return MakeCast(op->type, value, op->span);
  }

  PrimExpr VisitSelect_(const SelectNode* op, const PrimExpr& self) override {
    PrimExpr cond = VisitExpr(op->cond);
    PrimExpr t = VisitExpr(op->true_value);
    PrimExpr f = VisitExpr(op->false_value);
    if (std::optional<double> c = ConstValue(cond)) return *c != 0 ? t : f;
    if (cond->type.lanes == 1) {
      if (std::optional<bool> known = analyzer_->LookupFact(cond)) return *known ? t : f;
    }
    if (ExprDeepEqual(t, f)) return t;
    if (cond.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return self;
    }
    return MakeSelect(cond, t, f, op->span);
  }

  PrimExpr VisitRamp_(const RampNode* op, const PrimExpr& self) override {
    PrimExpr base = VisitExpr(op->base);
    PrimExpr stride = VisitExpr(op->stride);
    if (IsConstValue(stride, 0)) return MakeBroadcast(base, op->lanes, op->span);
    if (base.same_as(op->base) && stride.same_as(op->stride)) return self;
    return MakeRamp(base, stride, op->lanes, op->span);
  }

 private:
  // `result` rebuilt a node equal to `self`: keep the original, so an
  // unchanged expression stays the same node.
  static PrimExpr PreferExisting(const PrimExpr& result, const PrimExpr& self) {
    if (!result.same_as(self) && ExprDeepEqual(result, self)) return self;
    return result;
  }

  // `a op b` for operands already simplified (never revisits them, so the
  // rules stay linear in the size of the expression).
  PrimExpr Combine(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    PrimExpr result = RewriteBinary(op, a, b, span);
    return result.defined() ? result : MakeBinary(op, a, b, span);
  }

  // Null when no rule applies to `a op b` (both already simplified).
  PrimExpr RewriteBinary(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    if (PrimExpr folded = FoldBinary(op, a, b, span)) return folded;
    if (PrimExpr identity = RewriteIdentity(op, a, b, span)) return identity;
    if (a->type.lanes > 1 || b->type.lanes > 1) return RewriteVector(op, a, b, span);
    bool is_int = !IsFloat(a->type.dtype);
    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
      case BinaryOp::kMul:
        if (!IsIndex(a)) return nullptr;
        return RewriteLinear(op, a, b, span);
      case BinaryOp::kDiv:
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod:
        if (!IsIndex(a)) return nullptr;
        return RewriteDivMod(op, a, b, span);
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        return RewriteMinMax(op, a, b, span);
      case BinaryOp::kAnd:
      case BinaryOp::kOr:
        return nullptr;  // see RewriteIdentity
      default:  // comparisons
        if (is_int) {
          if (std::optional<bool> known = CompareInt(op, a, b)) return BoolImm(*known, span);
        }
        if (std::optional<bool> known = analyzer_->LookupFact(MakeBinary(op, a, b, span))) {
          return BoolImm(*known, span);
        }
        return nullptr;
    }
  }

  // Rules for any lanes: x + 0, x * 1, x - x, ...
  PrimExpr RewriteIdentity(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    bool is_int = !IsFloat(a->type.dtype);
    switch (op) {
      case BinaryOp::kAdd:
        if (is_int ? IsConstValue(b, 0) : IsSignedZero(b, true)) return a;
        if (is_int ? IsConstValue(a, 0) : IsSignedZero(a, true)) return b;
        return nullptr;
      case BinaryOp::kSub:
        if (is_int ? IsConstValue(b, 0) : IsSignedZero(b, false)) return a;
        if (is_int && ExprDeepEqual(a, b)) return Zero(a->type, span);
        return nullptr;
      case BinaryOp::kMul:
        if (IsConstValue(b, 1)) return a;
        if (IsConstValue(a, 1)) return b;
        if (is_int && (IsConstValue(a, 0) || IsConstValue(b, 0))) return Zero(a->type, span);
        return nullptr;
      case BinaryOp::kDiv:
      case BinaryOp::kFloorDiv:
        if (IsConstValue(b, 1)) return a;
        return nullptr;
      case BinaryOp::kFloorMod:
        if (is_int && IsConstValue(b, 1)) return Zero(a->type, span);
        return nullptr;
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        if (ExprDeepEqual(a, b)) return a;
        return nullptr;
      case BinaryOp::kAnd:
      case BinaryOp::kOr: {
        // `true && x` is x, `false && x` is false; dually for ||.
        bool absorbing = op == BinaryOp::kOr;
        if (std::optional<double> c = ConstValue(a)) return (*c != 0) == absorbing ? a : b;
        if (std::optional<double> c = ConstValue(b)) return (*c != 0) == absorbing ? b : a;
        if (ExprDeepEqual(a, b)) return a;
        return nullptr;
      }
      default: return nullptr;
    }
  }

  // Broadcast op Broadcast, and Ramp arithmetic for integers.
  PrimExpr RewriteVector(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    const auto* ba = a.as<BroadcastNode>();
    const auto* bb = b.as<BroadcastNode>();
    if (ba != nullptr && bb != nullptr) {
      return MakeBroadcast(Combine(op, ba->value, bb->value, span), ba->lanes, span);
    }
    if (IsFloat(a->type.dtype)) return nullptr;
    const auto* ra = a.as<RampNode>();
    const auto* rb = b.as<RampNode>();
    int lanes = a->type.lanes;
    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
        if (ra != nullptr && rb != nullptr) {
          return RampOf(Combine(op, ra->base, rb->base, span),
                          Combine(op, ra->stride, rb->stride, span), lanes, span);
        }
        if (ra != nullptr && bb != nullptr) {
          return RampOf(Combine(op, ra->base, bb->value, span), ra->stride, lanes, span);
        }
        if (ba != nullptr && rb != nullptr) {
          PrimExpr stride = op == BinaryOp::kAdd
                                ? rb->stride
                                : Combine(BinaryOp::kSub, Zero(rb->stride->type, span),
                                             rb->stride, span);
          return RampOf(Combine(op, ba->value, rb->base, span), stride, lanes, span);
        }
        return nullptr;
      case BinaryOp::kMul: {
        const RampNode* ramp = ra != nullptr ? ra : rb;
        const BroadcastNode* scale = ra != nullptr ? bb : ba;
        if (ramp == nullptr || scale == nullptr) return nullptr;
        return RampOf(Combine(op, ramp->base, scale->value, span),
                        Combine(op, ramp->stride, scale->value, span), lanes, span);
      }
      case BinaryOp::kFloorDiv:
      case BinaryOp::kFloorMod: {
        // A unit ramp starting at a multiple of its lanes, divided by a multiple of its lanes,
        // stays within one period of the divisor: the quotient is one value and the remainder a
        // unit ramp (a vector's lanes indexing a row: a load, not a gather).
        if (ra == nullptr || bb == nullptr || !IsConstValue(ra->stride, 1)) return nullptr;
        const auto* divisor = bb->value.as<IntImmNode>();
        if (divisor == nullptr || divisor->value <= 0 || divisor->value % lanes != 0) return nullptr;
        PrimExpr misalignment = Combine(
            BinaryOp::kFloorMod, ra->base, IntImm(lanes, ra->base->type, span), span);
        if (!IsConstValue(misalignment, 0)) return nullptr;
        PrimExpr scalar = Combine(op, ra->base, bb->value, span);
        if (op == BinaryOp::kFloorDiv) return MakeBroadcast(scalar, lanes, span);
        return MakeRamp(scalar, ra->stride, lanes, span);
      }
      default: return nullptr;
    }
  }

  PrimExpr RewriteLinear(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    LinearForm form = ToLinearForm(a);
    LinearForm rhs = ToLinearForm(b);
    if (op == BinaryOp::kMul) {
      if (rhs.is_constant()) {
        LinearForm scaled;
        scaled.Add(form, rhs.constant());
        form = scaled;
      } else if (form.is_constant()) {
        LinearForm scaled;
        scaled.Add(rhs, form.constant());
        form = scaled;
      } else {
        return nullptr;  // a product of two non-constants is an atom
      }
    } else {
      form.Add(rhs, op == BinaryOp::kAdd ? 1 : -1);
    }
    form.MergeDivModPairs();
    PrimExpr result = FromLinearForm(form, span);
    // `x + 0`-like results come back as an operand: return that node.
    if (ExprDeepEqual(result, a)) return a;
    if (ExprDeepEqual(result, b)) return b;
    return result;
  }

  // x / c, x // c, x % c for int64 and a positive constant c (x / c only when
  // x >= 0, where truncation is floor). With x = c*q + r (q the terms whose
  // coefficients c divides): x // c = q + r // c and x % c = r % c, and when
  // r lies in one period [k*c, k*c + c) these are q + k and r - k*c.
  PrimExpr RewriteDivMod(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    int64_t c;
    if (!AsConstInt(b, &c) || c <= 0) return RewriteDivModByBounds(op, a, b, span);
    bool is_mod = op == BinaryOp::kFloorMod;
    if (op == BinaryOp::kDiv && analyzer_->Bound(a).min < 0) return nullptr;
    LinearForm form = ToLinearForm(a);
    LinearForm quotient, remainder;
    for (const LinearTerm& term : form.terms()) {
      if (term.coeff % c == 0) {
        quotient.AddTerm(term.atom, term.coeff / c);
      } else {
        remainder.AddTerm(term.atom, term.coeff);
      }
    }
    quotient.AddConstant(FloorDivInt(form.constant(), c));
    remainder.AddConstant(FloorModInt(form.constant(), c));
    PrimExpr remainder_expr = FromLinearForm(remainder, span);
    Interval r = analyzer_->Bound(remainder_expr);
    if (r.bounded_below() && r.bounded_above() &&
        FloorDivInt(r.min, c) == FloorDivInt(r.max, c)) {
      int64_t period = FloorDivInt(r.min, c);
      if (is_mod) {
        remainder.AddConstant(-period * c);
        return FromLinearForm(remainder, span);
      }
      quotient.AddConstant(period);
      return FromLinearForm(quotient, span);
    }
    bool quotient_nonzero = !quotient.is_constant() || quotient.constant() != 0;
    if (quotient_nonzero) {
      BinaryOp floor_op = is_mod ? BinaryOp::kFloorMod : BinaryOp::kFloorDiv;
      PrimExpr rest = Combine(floor_op, remainder_expr, b, span);
      if (is_mod) return rest;
      quotient.AddTerm(rest, 1);
      return FromLinearForm(quotient, span);
    }
    // (x // c1) // c2 == x // (c1 * c2) and (x % (k * c)) % c == x % c, for
    // positive divisors.
    if (const auto* inner = a.as<BinaryNode>()) {
      int64_t c1, product;
      if (AsConstInt(inner->b, &c1) && c1 > 0) {
        if (op == BinaryOp::kFloorDiv && inner->op == BinaryOp::kFloorDiv &&
            !__builtin_mul_overflow(c1, c, &product)) {
          return Combine(BinaryOp::kFloorDiv, inner->a, IntImm(product, kIndexType, span), span);
        }
        if (is_mod && inner->op == BinaryOp::kFloorMod && c1 % c == 0) {
          return Combine(BinaryOp::kFloorMod, inner->a, b, span);
        }
      }
    }
    return nullptr;
  }

  // x // y == 0 and x % y == x when 0 <= x < y.
  PrimExpr RewriteDivModByBounds(BinaryOp op, const PrimExpr& a, const PrimExpr& b,
                                 const Span& span) {
    Interval x = analyzer_->Bound(a);
    Interval y = analyzer_->Bound(b);
    if (x.min < 0 || y.min <= 0 || x.max >= y.min) return nullptr;
    if (op == BinaryOp::kFloorMod) return a;
    return Zero(a->type, span);
  }

  PrimExpr RewriteMinMax(BinaryOp op, const PrimExpr& a, const PrimExpr& b, const Span& span) {
    if (IsFloat(a->type.dtype)) return nullptr;
    bool is_min = op == BinaryOp::kMin;
    if (CompareInt(BinaryOp::kLE, a, b) == true) return is_min ? a : b;
    if (CompareInt(BinaryOp::kGE, a, b) == true) return is_min ? b : a;
    // min(min(x, c1), c2) == min(x, min(c1, c2)), likewise max.
    if (const auto* inner = a.as<BinaryNode>()) {
      if (inner->op == op && IsConstant(inner->b) && IsConstant(b)) {
        return MakeBinary(op, inner->a, FoldBinary(op, inner->b, b, span), span);
      }
    }
    return nullptr;
  }

  // The truth of `a op b` for integer scalars when the bounds decide it. For
  // int64 the difference is simplified first, so `i + 3 < i + 5` is decided
  // whatever i is; other types compare the operands' bounds.
  std::optional<bool> CompareInt(BinaryOp op, const PrimExpr& a, const PrimExpr& b) {
    if (a->type.lanes != 1 || IsFloat(a->type.dtype)) return std::nullopt;
    Interval d = IsIndex(a) ? analyzer_->Bound(Combine(BinaryOp::kSub, a, b, nullptr))
                            : IntervalSub(analyzer_->Bound(a), analyzer_->Bound(b));
    switch (op) {
      case BinaryOp::kLT:
        if (d.max < 0) return true;
        if (d.min >= 0) return false;
        break;
      case BinaryOp::kLE:
        if (d.max <= 0) return true;
        if (d.min > 0) return false;
        break;
      case BinaryOp::kGT:
        if (d.min > 0) return true;
        if (d.max <= 0) return false;
        break;
      case BinaryOp::kGE:
        if (d.min >= 0) return true;
        if (d.max < 0) return false;
        break;
      case BinaryOp::kEQ:
      case BinaryOp::kNE: {
        bool equal_known = d.is_single() && d.min == 0;
        bool differ_known = !d.contains(0);
        if (!equal_known && !differ_known) break;
        return equal_known == (op == BinaryOp::kEQ);
      }
      default: break;
    }
    return std::nullopt;
  }

  static PrimExpr RampOf(PrimExpr base, PrimExpr stride, int lanes, const Span& span) {
    if (IsConstValue(stride, 0)) return MakeBroadcast(std::move(base), lanes, span);
    return MakeRamp(std::move(base), std::move(stride), lanes, span);
  }

  Analyzer* analyzer_;
};

PrimExpr Analyzer::Simplify(const PrimExpr& expr) {
  Simplifier simplifier(this);
  return simplifier.VisitExpr(expr);
}

}  // namespace kiln::loop::arith
