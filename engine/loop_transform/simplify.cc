// The Simplify loop pass: a statement mutator feeding the analyzer.
#include "engine/loop_transform/simplify.h"

#include <optional>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

class StmtSimplifier final : public StmtExprMutator {
 public:
  PrimExpr VisitExpr(const PrimExpr& expr) override { return analyzer_.Simplify(expr); }

 protected:
  Stmt VisitFor_(const ForNode* op, const Stmt& self) override {
    PrimExpr min = VisitExpr(op->min);
    PrimExpr extent = VisitExpr(op->extent);
    int64_t extent_value;
    bool constant_extent = AsConstInt(extent, &extent_value);
    if (constant_extent && extent_value <= 0) return MakeSeqStmt({}, op->span);
    if (constant_extent && extent_value == 1) {
      // The body runs once, with the variable at `min`.
      Stmt body = Substitute(op->body, [&](const VarNode* var) -> PrimExpr {
        return var == op->loop_var.get() ? min : PrimExpr();
      });
      return VisitStmt(body);
    }
    arith::Interval extent_range = *analyzer_.ConstIntBound(extent);
    if (extent_range.max <= 0) return MakeSeqStmt({}, op->span);
    // var in [min, min + extent - 1] over every value min and extent take.
    int64_t last_step = extent_range.bounded_above() ? extent_range.max - 1 : arith::Interval::kPosInf;
    arith::Interval range =
        arith::IntervalAdd(*analyzer_.ConstIntBound(min), arith::Interval{0, last_step});
    std::optional<arith::Interval> saved = analyzer_.VarRange(op->loop_var);
    analyzer_.Bind(op->loop_var, range);
    Stmt body = VisitStmt(op->body);
    if (saved.has_value()) {
      analyzer_.Bind(op->loop_var, *saved);
    } else {
      analyzer_.Unbind(op->loop_var);
    }
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
    return MakeFor(op->loop_var, min, extent, op->for_kind, body, op->span);
  }

  Stmt VisitIfThenElse_(const IfThenElseNode* op, const Stmt& self) override {
    PrimExpr condition = VisitExpr(op->condition);
    int64_t value;
    if (AsConstInt(condition, &value)) {
      if (value != 0) return VisitStmt(op->then_case);
      if (op->else_case.defined()) return VisitStmt(op->else_case);
      return MakeSeqStmt({}, op->span);
    }
    Stmt then_case;
    {
      arith::Analyzer::ConstraintScope scope(&analyzer_, condition);
      then_case = VisitStmt(op->then_case);
    }
    Stmt else_case;
    if (op->else_case.defined()) {
      arith::Analyzer::ConstraintScope scope(&analyzer_, MakeNot(condition));
      else_case = VisitStmt(op->else_case);
    }
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case)) {
      return self;
    }
    return MakeIfThenElse(condition, then_case, else_case, op->span);
  }

  Stmt VisitLetStmt_(const LetStmtNode* op, const Stmt& self) override {
    PrimExpr value = VisitExpr(op->value);
    // The variable takes the value's range inside the body.
    std::optional<arith::Interval> saved = analyzer_.VarRange(op->var);
    std::optional<arith::Interval> range = analyzer_.ConstIntBound(value);
    if (range.has_value() && value->type.lanes == 1) analyzer_.Bind(op->var, *range);
    Stmt body = VisitStmt(op->body);
    if (saved.has_value()) {
      analyzer_.Bind(op->var, *saved);
    } else {
      analyzer_.Unbind(op->var);
    }
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return MakeLetStmt(op->var, value, body, op->span);
  }

 private:
  arith::Analyzer analyzer_;
};

}  // namespace

Pass Simplify() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        StmtSimplifier simplifier;
        return simplifier.VisitStmt(func->body);
      },
      PassInfo{"Simplify", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
