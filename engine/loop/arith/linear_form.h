// Canonical linear form of an int64 index expression: a sum of
// coefficient * atom terms plus a constant, where an atom is any expression
// that is not itself an addition, subtraction or multiplication by a
// constant (a variable, `i // 8`, a load, a product of two variables).
// Terms keep the order in which their atoms first appear, so the rebuilt
// expression never depends on pointer values.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/loop/expr.h"

namespace kiln::loop::arith {

struct LinearTerm {
  PrimExpr atom;
  int64_t coeff;
};

class LinearForm {
 public:
  LinearForm() = default;
  explicit LinearForm(int64_t constant) : constant_(constant) {}

  // Sums wrap like int64 arithmetic itself (it is a ring), so rewriting
  // with them never changes a value.
  void AddTerm(const PrimExpr& atom, int64_t coeff);
  void AddConstant(int64_t value);
  void Add(const LinearForm& other, int64_t scale = 1);

  const std::vector<LinearTerm>& terms() const { return terms_; }
  int64_t constant() const { return constant_; }
  bool is_constant() const { return terms_.empty(); }

  // Merges `(x // c) * (k * c) + (x % c) * k` into `x * k` (the index math a
  // fuse produces) until no such pair is left.
  void MergeDivModPairs();

 private:
  std::vector<LinearTerm> terms_;  // nonzero coefficients, distinct atoms
  int64_t constant_ = 0;
};

// `expr` must be an int64 scalar.
LinearForm ToLinearForm(const PrimExpr& expr);

// The expression of `form`: terms with positive coefficients in order, then
// those with negative ones subtracted, then the constant. Every node built
// carries `span`.
PrimExpr FromLinearForm(const LinearForm& form, const Span& span);

}  // namespace kiln::loop::arith
