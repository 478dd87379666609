// The LoopPartition loop pass (loop_partition.h).
#include "engine/loop_transform/loop_partition.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/arith/linear_form.h"
#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"
#include "engine/loop_transform/storage_remap.h"

namespace kiln::loop::transform {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The values of a loop variable for which every bound test found so far holds: [lo, hi).
struct Interior {
  int64_t lo, hi;
  bool narrowed = false;
};

// Walks a loop body, binding the ranges of the loops inside it, and narrows `interior` by each
// comparison `a cmp b` in a Select's or an if's condition where a - b is linear in `var`.
class BoundTestCollector final : public StmtExprVisitor {
 public:
  BoundTestCollector(const Var& var, arith::Analyzer* analyzer, Interior* interior)
      : var_(var), analyzer_(analyzer), interior_(interior) {}

  int64_t nodes() const { return nodes_; }

  void VisitStmt(const Stmt& stmt) override {
    ++nodes_;
    StmtExprVisitor::VisitStmt(stmt);
  }
  void VisitExpr(const PrimExpr& expr) override {
    ++nodes_;
    StmtExprVisitor::VisitExpr(expr);
  }

 protected:
  void VisitFor_(const ForNode* op) override {
    int64_t min, extent;
    bool bound = AsConstInt(op->min, &min) && AsConstInt(op->extent, &extent) && extent > 0;
    if (bound) analyzer_->Bind(op->loop_var, min, extent);
    StmtExprVisitor::VisitFor_(op);
    if (bound) analyzer_->Unbind(op->loop_var);
  }
  void VisitIfThenElse_(const IfThenElseNode* op) override {
    Narrow(op->condition);
    StmtExprVisitor::VisitIfThenElse_(op);
  }
  void VisitSelect_(const SelectNode* op) override {
    Narrow(op->cond);
    StmtExprVisitor::VisitSelect_(op);
  }

 private:
  void Narrow(const PrimExpr& cond) {
    if (const auto* broadcast = cond.as<BroadcastNode>()) return Narrow(broadcast->value);
    const auto* binary = cond.as<BinaryNode>();
    if (binary == nullptr) return;
    if (binary->op == BinaryOp::kAnd) {
      Narrow(binary->a);
      Narrow(binary->b);
      return;
    }
    bool less = binary->op == BinaryOp::kLT || binary->op == BinaryOp::kLE;
    bool greater = binary->op == BinaryOp::kGT || binary->op == BinaryOp::kGE;
    if ((!less && !greater) || binary->a->type != kIndexType || binary->b->type != kIndexType) {
      return;
    }
    // e = a - b = coeff * var + rest.
    arith::LinearForm e = arith::ToLinearForm(binary->a);
    e.Add(arith::ToLinearForm(binary->b), -1);
    int64_t coeff = 0;
    arith::LinearForm rest(e.constant());
    for (const arith::LinearTerm& term : e.terms()) {
      if (term.atom.same_as(var_)) {
        coeff = term.coeff;
      } else {
        rest.AddTerm(term.atom, term.coeff);
      }
    }
    // Far beyond any loop (and no overflow in the arithmetic below).
    constexpr int64_t kLimit = int64_t{1} << 48;
    if (coeff == 0 || coeff > kLimit || coeff < -kLimit) return;
    std::optional<arith::Interval> range =
        analyzer_->ConstIntBound(arith::FromLinearForm(rest, nullptr));
    if (!range.has_value() || (range->bounded_below() && range->min < -kLimit) ||
        (range->bounded_above() && range->max > kLimit)) {
      return;
    }
    // Every comparison as c * var >= t for all values of the rest.
    int64_t c, t;
    switch (binary->op) {
      case BinaryOp::kGE:  // coeff var + rest >= 0
        if (!range->bounded_below()) return;
        c = coeff, t = -range->min;
        break;
      case BinaryOp::kGT:  // coeff var + rest >= 1
        if (!range->bounded_below()) return;
        c = coeff, t = 1 - range->min;
        break;
      case BinaryOp::kLE:  // -coeff var - rest >= 0
        if (!range->bounded_above()) return;
        c = -coeff, t = range->max;
        break;
      default:  // kLT: -coeff var - rest >= 1
        if (!range->bounded_above()) return;
        c = -coeff, t = range->max + 1;
        break;
    }
    if (c > 0) {
      interior_->lo = std::max(interior_->lo, CeilDiv(t, c));
    } else {
      interior_->hi = std::min(interior_->hi, FloorDiv(t, c) + 1);
    }
    interior_->narrowed = true;
  }

  const Var& var_;
  arith::Analyzer* analyzer_;
  Interior* interior_;
  int64_t nodes_ = 0;
};

class LoopPartitioner final : public StmtExprMutator {
 public:
  PrimExpr VisitExpr(const PrimExpr& expr) override { return expr; }

 protected:
  Stmt VisitFor_(const ForNode* op, const Stmt& self) override {
    int64_t min, extent;
    if (!AsConstInt(op->min, &min) || !AsConstInt(op->extent, &extent) || extent <= 0) {
      return StmtExprMutator::VisitFor_(op, self);
    }
    if (op->for_kind != ForKind::kSerial || depth_ >= kMaxPartitionDepth) {
      return Visit(op->loop_var, min, extent, op, self);
    }
    Interior interior{min, min + extent};
    analyzer_.Bind(op->loop_var, min, extent);
    BoundTestCollector collector(op->loop_var, &analyzer_, &interior);
    collector.VisitStmt(op->body);
    analyzer_.Unbind(op->loop_var);
    bool splits = interior.narrowed && interior.lo < interior.hi &&
                  (interior.lo > min || interior.hi < min + extent) &&
                  collector.nodes() <= kMaxPartitionBodyNodes;
    if (!splits) return Visit(op->loop_var, min, extent, op, self);

    std::vector<Stmt> pieces;
    auto piece = [&](int64_t begin, int64_t end, bool original_var) {
      if (begin >= end) return;
      if (original_var) {
        ++depth_;
        pieces.push_back(Visit(op->loop_var, begin, end - begin, op, Stmt()));
        --depth_;
        return;
      }
      // A border copy gets a variable of its own: each loop variable is bound by one loop.
      Var var = MakeVar(op->loop_var->name, op->loop_var->type, op->loop_var->span);
      // And allocations of its own: each storage variable is allocated by one Allocate.
      Stmt body = WithFreshStorage(Substitute(op->body, [&](const VarNode* v) -> PrimExpr {
        return v == op->loop_var.get() ? PrimExpr(var) : PrimExpr();
      }));
      // The border keeps its tests: only the middle, where the time goes, is split further.
      Stmt loop = MakeFor(var, IntImm(begin), IntImm(end - begin), op->for_kind, body, op->span);
      int depth = depth_;
      depth_ = kMaxPartitionDepth;
      pieces.push_back(Visit(var, begin, end - begin, loop.as<ForNode>(), loop));
      depth_ = depth;
    };
    piece(min, interior.lo, false);
    piece(interior.lo, interior.hi, true);
    piece(interior.hi, min + extent, false);
    return MakeSeqStmt(std::move(pieces), op->span);
  }

 private:
  // The loop `op` over [begin, begin + extent) with its body partitioned (`self` when nothing
  // changed and the range is op's own).
  Stmt Visit(const Var& var, int64_t begin, int64_t extent, const ForNode* op, const Stmt& self) {
    analyzer_.Bind(var, begin, extent);
    Stmt body = VisitStmt(op->body);
    analyzer_.Unbind(var);
    int64_t min, old_extent;
    if (self.defined() && body.same_as(op->body) && AsConstInt(op->min, &min) && min == begin &&
        AsConstInt(op->extent, &old_extent) && old_extent == extent) {
      return self;
    }
    return MakeFor(var, IntImm(begin), IntImm(extent), op->for_kind, body, op->span);
  }

  arith::Analyzer analyzer_;
  int depth_ = 0;
};

}  // namespace

Pass LoopPartition() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        LoopPartitioner partitioner;
        return partitioner.VisitStmt(func->body);
      },
      PassInfo{"LoopPartition", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
