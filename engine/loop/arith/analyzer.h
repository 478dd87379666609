// The arithmetic analyzer of the loop dialect: it knows the ranges of loop
// variables (and conditions assumed true inside an `if`), and on that
// knowledge simplifies expressions, bounds integer expressions and proves
// conditions. TE lowering uses it for split/fuse index math, and the loop
// Simplify pass runs it over every expression while binding loop ranges.
//
// What Simplify does (see simplify.cc): folds constants (integer semantics
// of const_fold.h; floats in double rounded to the dtype), puts int64 sums
// into canonical linear form (`i*4 + j*4 - i*4` -> `j*4`), removes
// floordiv/floormod whose remainder part is known to lie in one period
// (`(i*8 + j) // 8` -> `i` when 0 <= j < 8), decides comparisons, min, max
// and selects from bounds, and folds Ramp/Broadcast arithmetic. Intrinsic
// calls are not evaluated.
//
// Spans: a node Simplify builds carries the span of the expression it
// replaces; when the result is an existing subexpression (`x * 1` -> `x`),
// that subexpression is returned as it is, with its own span. An expression
// that does not simplify is returned as the same node (same_as).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/loop/arith/interval.h"
#include "engine/loop/expr.h"

namespace kiln::loop::arith {

class Analyzer {
 public:
  // `var` takes values in [min, min + extent), replacing any range bound
  // before. An extent <= 0 (a loop that never runs) binds [min, min]: facts
  // about code that never runs hold vacuously.
  void Bind(const Var& var, int64_t min, int64_t extent);
  void Bind(const Var& var, const Interval& range);
  void Unbind(const Var& var);
  // The range bound to `var`, if any.
  std::optional<Interval> VarRange(const Var& var) const;

  PrimExpr Simplify(const PrimExpr& expr);

  // The values an integer or bool scalar (or every lane of a vector) can
  // take, computed on `expr` as written (simplify first for a tighter bound).
  // Unbounded ends are Interval::kNegInf / kPosInf. Nullopt for floats.
  std::optional<Interval> ConstIntBound(const PrimExpr& expr) const;

  // True when `cond` (a bool) holds for every value of the bound variables
  // under the assumed conditions; false when it does not or cannot be shown.
  bool CanProve(const PrimExpr& cond);

  // Assumes `cond` inside its lifetime: it becomes provable, its negation
  // refutable, and conjuncts of the form `var < c` (or <=, >, >=, ==, with
  // the constant on either side) narrow the variable's range.
  class ConstraintScope {
   public:
    ConstraintScope(Analyzer* analyzer, const PrimExpr& cond);
    ~ConstraintScope();
    ConstraintScope(const ConstraintScope&) = delete;
    ConstraintScope& operator=(const ConstraintScope&) = delete;

   private:
    friend class Analyzer;
    Analyzer* analyzer_;
    size_t num_facts_;
    std::vector<std::pair<Var, std::optional<Interval>>> saved_ranges_;
  };

 private:
  friend class Simplifier;
  friend class BoundEvaluator;

  // The bound of `expr`, Everything when nothing is known.
  Interval Bound(const PrimExpr& expr) const;
  // 1 when a known fact says `cond`, 0 when one says its negation.
  std::optional<bool> LookupFact(const PrimExpr& cond) const;
  void AddFact(const PrimExpr& cond, ConstraintScope* scope);

  // Looked up by node, never iterated: the order of output cannot depend on it.
  std::unordered_map<const VarNode*, std::pair<Var, Interval>> var_ranges_;
  std::vector<PrimExpr> facts_;  // simplified conditions assumed true
};

// Simplify without any knowledge of variable ranges.
PrimExpr Simplify(const PrimExpr& expr);

}  // namespace kiln::loop::arith
