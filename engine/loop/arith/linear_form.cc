// Building, combining and rebuilding linear forms.
#include "engine/loop/arith/linear_form.h"

#include "engine/loop/arith/expr_deep_equal.h"

namespace kiln::loop::arith {
namespace {

int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

void Collect(const PrimExpr& expr, int64_t scale, LinearForm* form) {
  if (const auto* imm = expr.as<IntImmNode>()) {
    form->AddConstant(WrapMul(imm->value, scale));
    return;
  }
  if (const auto* binary = expr.as<BinaryNode>()) {
    int64_t c;
    switch (binary->op) {
      case BinaryOp::kAdd:
        Collect(binary->a, scale, form);
        Collect(binary->b, scale, form);
        return;
      case BinaryOp::kSub:
        Collect(binary->a, scale, form);
        Collect(binary->b, WrapMul(scale, -1), form);
        return;
      case BinaryOp::kMul:
        if (AsConstInt(binary->b, &c)) return Collect(binary->a, WrapMul(scale, c), form);
        if (AsConstInt(binary->a, &c)) return Collect(binary->b, WrapMul(scale, c), form);
        break;
      default: break;
    }
  }
  form->AddTerm(expr, scale);
}

// (x // c) or (x % c) with a positive constant c: x and c.
bool MatchDivOrMod(const PrimExpr& atom, BinaryOp op, PrimExpr* x, int64_t* c) {
  const auto* binary = atom.as<BinaryNode>();
  if (binary == nullptr || binary->op != op) return false;
  if (!AsConstInt(binary->b, c) || *c <= 0) return false;
  *x = binary->a;
  return true;
}

PrimExpr Term(const PrimExpr& atom, int64_t coeff, const Span& span) {
  if (coeff == 1) return atom;
  return MakeBinary(BinaryOp::kMul, atom, IntImm(coeff, kIndexType, span), span);
}

}  // namespace

void LinearForm::AddTerm(const PrimExpr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (!ExprDeepEqual(terms_[i].atom, atom)) continue;
    terms_[i].coeff = WrapAdd(terms_[i].coeff, coeff);
    if (terms_[i].coeff == 0) terms_.erase(terms_.begin() + static_cast<ptrdiff_t>(i));
    return;
  }
  terms_.push_back(LinearTerm{atom, coeff});
}

void LinearForm::AddConstant(int64_t value) { constant_ = WrapAdd(constant_, value); }

void LinearForm::Add(const LinearForm& other, int64_t scale) {
  for (const LinearTerm& term : other.terms_) AddTerm(term.atom, WrapMul(term.coeff, scale));
  AddConstant(WrapMul(other.constant_, scale));
}

void LinearForm::MergeDivModPairs() {
  bool merged = true;
  while (merged) {
    merged = false;
    // ((x // a) % b) * (k * a) + (x % a) * k == (x % (a * b)) * k for a, b > 0:
    // the inner levels of a fuse of several axes, merged one level at a time.
    for (size_t outer = 0; outer < terms_.size() && !merged; ++outer) {
      PrimExpr quotient, x;
      int64_t a, b;
      if (!MatchDivOrMod(terms_[outer].atom, BinaryOp::kFloorMod, &quotient, &b)) continue;
      if (!MatchDivOrMod(quotient, BinaryOp::kFloorDiv, &x, &a)) continue;
      for (size_t inner = 0; inner < terms_.size(); ++inner) {
        PrimExpr y;
        int64_t a2;
        if (!MatchDivOrMod(terms_[inner].atom, BinaryOp::kFloorMod, &y, &a2)) continue;
        if (a2 != a || !ExprDeepEqual(x, y)) continue;
        int64_t k = terms_[inner].coeff, product, modulus;
        if (__builtin_mul_overflow(k, a, &product) || product != terms_[outer].coeff) continue;
        if (__builtin_mul_overflow(a, b, &modulus)) continue;
        LinearTerm high = terms_[outer], low = terms_[inner];
        AddTerm(high.atom, -high.coeff);
        AddTerm(low.atom, -low.coeff);
        AddTerm(MakeBinary(BinaryOp::kFloorMod, x, IntImm(modulus, kIndexType, high.atom->span),
                           high.atom->span),
                k);
        merged = true;
        break;
      }
    }
    if (merged) continue;
    for (size_t d = 0; d < terms_.size() && !merged; ++d) {
      PrimExpr x;
      int64_t c;
      if (!MatchDivOrMod(terms_[d].atom, BinaryOp::kFloorDiv, &x, &c)) continue;
      for (size_t m = 0; m < terms_.size(); ++m) {
        PrimExpr y;
        int64_t c2;
        if (!MatchDivOrMod(terms_[m].atom, BinaryOp::kFloorMod, &y, &c2)) continue;
        if (c2 != c || !ExprDeepEqual(x, y)) continue;
        int64_t k = terms_[m].coeff;
        int64_t product;
        if (__builtin_mul_overflow(k, c, &product) || product != terms_[d].coeff) continue;
        // x == (x // c) * c + x % c for floor division: the pair is k * x.
        LinearTerm div = terms_[d], mod = terms_[m];
        AddTerm(div.atom, -div.coeff);
        AddTerm(mod.atom, -mod.coeff);
        Add(ToLinearForm(x), k);
        merged = true;
        break;
      }
    }
  }
}

LinearForm ToLinearForm(const PrimExpr& expr) {
  LinearForm form;
  Collect(expr, 1, &form);
  return form;
}

PrimExpr FromLinearForm(const LinearForm& form, const Span& span) {
  PrimExpr result;
  for (const LinearTerm& term : form.terms()) {
    if (term.coeff <= 0) continue;
    PrimExpr t = Term(term.atom, term.coeff, span);
    result = result.defined() ? MakeBinary(BinaryOp::kAdd, result, t, span) : t;
  }
  int64_t constant = form.constant();
  for (const LinearTerm& term : form.terms()) {
    if (term.coeff >= 0) continue;
    if (!result.defined()) {
      // All terms negative: start from the constant when there is one
      // (`8 - i`), else from the first term scaled (`i * -1`).
      if (constant != 0) {
        result = IntImm(constant, kIndexType, span);
        constant = 0;
      } else {
        result = Term(term.atom, term.coeff, span);
        continue;
      }
    }
    // -coeff overflows only for INT64_MIN, whose negation wraps to itself.
    int64_t magnitude = WrapMul(term.coeff, -1);
    result = MakeBinary(BinaryOp::kSub, result, Term(term.atom, magnitude, span), span);
  }
  if (!result.defined()) return IntImm(constant, kIndexType, span);
  if (constant > 0) {
    result = MakeBinary(BinaryOp::kAdd, result, IntImm(constant, kIndexType, span), span);
  } else if (constant < 0 && constant != INT64_MIN) {
    result = MakeBinary(BinaryOp::kSub, result, IntImm(-constant, kIndexType, span), span);
  } else if (constant == INT64_MIN) {
    result = MakeBinary(BinaryOp::kAdd, result, IntImm(constant, kIndexType, span), span);
  }
  return result;
}

}  // namespace kiln::loop::arith
