// Analyzer state: variable ranges, assumed conditions, and proofs.
#include "engine/loop/arith/analyzer.h"

#include "engine/loop/arith/const_fold.h"
#include "engine/loop/arith/expr_deep_equal.h"

namespace kiln::loop::arith {
namespace {

// `!cond` in the form the simplifier would give it.
PrimExpr Negate(const PrimExpr& cond) {
  if (const auto* not_node = cond.as<NotNode>()) return not_node->a;
  if (const auto* binary = cond.as<BinaryNode>()) {
    // Flipping a comparison is exact for integers only (NaN compares false).
    if (IsComparison(binary->op) && !IsFloat(binary->a->type.dtype)) {
      return MakeBinary(InvertComparison(binary->op), binary->a, binary->b, cond->span);
    }
  }
  return MakeNot(cond, cond->span);
}

// For `var OP constant` (either side): the range the condition allows.
bool RangeFromComparison(const BinaryNode* cmp, Var* var, Interval* range) {
  BinaryOp op = cmp->op;
  PrimExpr var_side = cmp->a, const_side = cmp->b;
  if (cmp->a.as<IntImmNode>() != nullptr) {
    std::swap(var_side, const_side);
    // c < v is v > c, and so on.
    switch (op) {
      case BinaryOp::kLT: op = BinaryOp::kGT; break;
      case BinaryOp::kLE: op = BinaryOp::kGE; break;
      case BinaryOp::kGT: op = BinaryOp::kLT; break;
      case BinaryOp::kGE: op = BinaryOp::kLE; break;
      default: break;
    }
  }
  int64_t c;
  if (var_side.as<VarNode>() == nullptr || !AsConstInt(const_side, &c)) return false;
  if (IsFloat(var_side->type.dtype) || IsUnsignedInt(var_side->type.dtype)) return false;
  *var = Downcast<VarNode>(var_side);
  // Extremes read as infinite; the adjusted ends stay finite.
  if (c == Interval::kNegInf || c == Interval::kPosInf) return false;
  switch (op) {
    case BinaryOp::kLT: *range = Interval{Interval::kNegInf, c - 1}; return c - 1 != Interval::kNegInf;
    case BinaryOp::kLE: *range = Interval{Interval::kNegInf, c}; return true;
    case BinaryOp::kGT: *range = Interval{c + 1, Interval::kPosInf}; return c + 1 != Interval::kPosInf;
    case BinaryOp::kGE: *range = Interval{c, Interval::kPosInf}; return true;
    case BinaryOp::kEQ: *range = Interval{c, c}; return true;
    default: return false;
  }
}

}  // namespace

void Analyzer::Bind(const Var& var, int64_t min, int64_t extent) {
  // Code under an empty loop never runs, so whatever is concluded there is
  // vacuously true: any range is sound, and a single value is the simplest.
  if (extent <= 0) return Bind(var, Interval::Single(min));
  Bind(var, Interval::FromMinExtent(min, extent));
}

void Analyzer::Bind(const Var& var, const Interval& range) {
  var_ranges_[var.get()] = {var, range};
}

void Analyzer::Unbind(const Var& var) { var_ranges_.erase(var.get()); }

std::optional<Interval> Analyzer::VarRange(const Var& var) const {
  auto it = var_ranges_.find(var.get());
  if (it == var_ranges_.end()) return std::nullopt;
  return it->second.second;
}

bool Analyzer::CanProve(const PrimExpr& cond) {
  PrimExpr simplified = Simplify(cond);
  if (const auto* broadcast = simplified.as<BroadcastNode>()) simplified = broadcast->value;
  int64_t value;
  return AsConstInt(simplified, &value) && value != 0;
}

std::optional<bool> Analyzer::LookupFact(const PrimExpr& cond) const {
  if (facts_.empty()) return std::nullopt;
  PrimExpr negated = Negate(cond);
  for (const PrimExpr& fact : facts_) {
    if (ExprDeepEqual(fact, cond)) return true;
    if (ExprDeepEqual(fact, negated)) return false;
  }
  return std::nullopt;
}

void Analyzer::AddFact(const PrimExpr& cond, ConstraintScope* scope) {
  if (const auto* binary = cond.as<BinaryNode>()) {
    if (binary->op == BinaryOp::kAnd) {
      AddFact(binary->a, scope);
      AddFact(binary->b, scope);
      return;
    }
    Var var;
    Interval allowed;
    if (RangeFromComparison(binary, &var, &allowed)) {
      Interval narrowed = Intersect(Bound(var), allowed);
      // An empty range means the code under the condition never runs:
      // leave the range alone rather than reason from a contradiction.
      if (narrowed.min <= narrowed.max) {
        scope->saved_ranges_.emplace_back(var, VarRange(var));
        Bind(var, narrowed);
      }
    }
  }
  facts_.push_back(cond);
}

Analyzer::ConstraintScope::ConstraintScope(Analyzer* analyzer, const PrimExpr& cond)
    : analyzer_(analyzer), num_facts_(analyzer->facts_.size()) {
  analyzer_->AddFact(analyzer_->Simplify(cond), this);
}

Analyzer::ConstraintScope::~ConstraintScope() {
  analyzer_->facts_.resize(num_facts_);
  for (auto it = saved_ranges_.rbegin(); it != saved_ranges_.rend(); ++it) {
    if (it->second.has_value()) {
      analyzer_->Bind(it->first, *it->second);
    } else {
      analyzer_->Unbind(it->first);
    }
  }
}

PrimExpr Simplify(const PrimExpr& expr) {
  Analyzer analyzer;
  return analyzer.Simplify(expr);
}

}  // namespace kiln::loop::arith
