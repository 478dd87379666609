// Symbolic interval evaluation of index expressions.
#include "engine/te/bound.h"

#include <algorithm>

#include "engine/loop/functor.h"

namespace kiln::te {

namespace {

using loop::BinaryOp;
using loop::PrimExpr;
using loop::arith::Interval;

// [lo, lo + width] while evaluating; SymbolicRange has extent = width + 1.
struct Span1D {
  PrimExpr lo;
  int64_t width;
};

class RelaxedVarFinder final : public loop::StmtExprVisitor {
 public:
  explicit RelaxedVarFinder(const RelaxedVars& relaxed) : relaxed_(relaxed) {}
  bool found = false;

 protected:
  void VisitVar_(const loop::VarNode* op) override { found |= relaxed_.count(op) > 0; }

 private:
  const RelaxedVars& relaxed_;
};

bool MentionsRelaxed(const PrimExpr& expr, const RelaxedVars& relaxed) {
  RelaxedVarFinder finder(relaxed);
  finder.VisitExpr(expr);
  return finder.found;
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

PrimExpr Index(int64_t value) { return loop::IntImm(value); }

class RangeEvaluator {
 public:
  RangeEvaluator(const RelaxedVars& relaxed, loop::arith::Analyzer* analyzer)
      : relaxed_(relaxed), analyzer_(analyzer) {}

  std::optional<Span1D> Eval(const PrimExpr& expr) {
    if (const auto* var = expr.as<loop::VarNode>()) {
      auto it = relaxed_.find(var);
      if (it == relaxed_.end()) return Span1D{expr, 0};
      const Interval& range = it->second;
      if (!range.bounded_below() || !range.bounded_above()) return std::nullopt;
      return Span1D{Index(range.min), range.max - range.min};
    }
    if (const auto* binary = expr.as<loop::BinaryNode>()) return EvalBinary(expr, binary);
    if (const auto* select = expr.as<loop::SelectNode>()) {
      if (!MentionsRelaxed(expr, relaxed_)) return Span1D{expr, 0};
      auto t = Eval(select->true_value);
      auto f = Eval(select->false_value);
      if (!t || !f) return std::nullopt;
      return Union(*t, *f);
    }
    if (!MentionsRelaxed(expr, relaxed_)) return Span1D{expr, 0};
    return std::nullopt;
  }

  std::optional<Span1D> Union(const Span1D& a, const Span1D& b) {
    PrimExpr difference = analyzer_->Simplify(a.lo - b.lo);
    int64_t d;
    if (loop::AsConstInt(difference, &d)) {
      // With b.lo as the origin: a covers [d, d + wa], b covers [0, wb].
      auto a_hi = CheckedAdd(d, a.width);
      if (!a_hi) return std::nullopt;
      int64_t lo = std::min<int64_t>(d, 0);
      auto width = CheckedAdd(std::max(*a_hi, b.width), -lo);
      if (!width) return std::nullopt;
      return Span1D{d < 0 ? a.lo : b.lo, *width};
    }
    std::optional<Interval> bound = analyzer_->ConstIntBound(difference);
    if (!bound || !bound->bounded_below() || !bound->bounded_above()) return std::nullopt;
    // From m = min(a.lo, b.lo): a.lo - m = max(0, d) and b.lo - m = max(0, -d).
    auto a_reach = CheckedAdd(std::max<int64_t>(0, bound->max), a.width);
    auto b_reach = CheckedAdd(std::max<int64_t>(0, -bound->min), b.width);
    if (!a_reach || !b_reach) return std::nullopt;
    return Span1D{loop::Min(a.lo, b.lo), std::max(*a_reach, *b_reach)};
  }

 private:
  std::optional<Span1D> EvalBinary(const PrimExpr& expr, const loop::BinaryNode* op) {
    if (op->type != loop::kIndexType) {
      if (!MentionsRelaxed(expr, relaxed_)) return Span1D{expr, 0};
      return std::nullopt;
    }
    auto a = Eval(op->a);
    if (!a) return std::nullopt;
    auto b = Eval(op->b);
    if (!b) return std::nullopt;
    if (a->width == 0 && b->width == 0) {
      if (a->lo.same_as(op->a) && b->lo.same_as(op->b)) return Span1D{expr, 0};
      return Span1D{loop::MakeBinary(op->op, a->lo, b->lo), 0};
    }
    int64_t c;
    switch (op->op) {
      case BinaryOp::kAdd: {
        auto width = CheckedAdd(a->width, b->width);
        if (!width) return std::nullopt;
        return Span1D{a->lo + b->lo, *width};
      }
      case BinaryOp::kSub: {
        auto width = CheckedAdd(a->width, b->width);
        if (!width) return std::nullopt;
        return Span1D{a->lo - (b->lo + b->width), *width};
      }
      case BinaryOp::kMul: {
        // One side must be a constant for the extent to stay constant.
        const Span1D* ranged;
        if (b->width == 0 && loop::AsConstInt(b->lo, &c)) {
          ranged = &*a;
        } else if (a->width == 0 && loop::AsConstInt(a->lo, &c)) {
          ranged = &*b;
        } else {
          return std::nullopt;
        }
        auto width = CheckedMul(ranged->width, c < 0 ? -c : c);
        if (!width) return std::nullopt;
        PrimExpr lo = c >= 0 ? ranged->lo * c : (ranged->lo + ranged->width) * c;
        return Span1D{lo, *width};
      }
      case BinaryOp::kFloorDiv:
        if (b->width != 0 || !loop::AsConstInt(b->lo, &c) || c <= 0) return std::nullopt;
        {
          // floor((lo + w) / c) - floor(lo / c) = floor((lo % c + w) / c): exact
          // when lo % c is known (tiled indices such as o*8 + i), else at most
          // floor((c - 1 + w) / c).
          int64_t remainder = c - 1;
          int64_t known;
          if (loop::AsConstInt(analyzer_->Simplify(loop::FloorMod(a->lo, c)), &known)) {
            remainder = known;
          }
          return Span1D{loop::FloorDiv(a->lo, c), (a->width + remainder) / c};
        }
      case BinaryOp::kFloorMod:
        if (b->width != 0 || !loop::AsConstInt(b->lo, &c) || c <= 0) return std::nullopt;
        return Span1D{Index(0), c - 1};
      case BinaryOp::kMin:
      case BinaryOp::kMax:
        // The result is one of the operands.
        return Union(*a, *b);
      default:
        return std::nullopt;
    }
  }

  const RelaxedVars& relaxed_;
  loop::arith::Analyzer* analyzer_;
};

}  // namespace

std::optional<SymbolicRange> EvalSymbolicRange(const PrimExpr& index, const RelaxedVars& relaxed,
                                               loop::arith::Analyzer* analyzer) {
  RangeEvaluator evaluator(relaxed, analyzer);
  std::optional<Span1D> range = evaluator.Eval(index);
  if (!range || range->width == Interval::kPosInf) return std::nullopt;
  return SymbolicRange{analyzer->Simplify(range->lo), range->width + 1};
}

std::optional<SymbolicRange> UnionRange(const SymbolicRange& a, const SymbolicRange& b,
                                        loop::arith::Analyzer* analyzer) {
  RelaxedVars none;
  RangeEvaluator evaluator(none, analyzer);
  std::optional<Span1D> range =
      evaluator.Union(Span1D{a.min, a.extent - 1}, Span1D{b.min, b.extent - 1});
  if (!range || range->width == Interval::kPosInf) return std::nullopt;
  return SymbolicRange{analyzer->Simplify(range->lo), range->width + 1};
}

}  // namespace kiln::te
