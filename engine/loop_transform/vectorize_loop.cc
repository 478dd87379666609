// The VectorizeLoop loop pass: a statement mutator that rewrites vectorized
// loops bottom-up with an expression vectorizer.
#include "engine/loop_transform/vectorize_loop.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

PrimExpr Widen(const PrimExpr& expr, int lanes) {
  if (expr->type.lanes == lanes) return expr;
  return MakeBroadcast(expr, lanes, expr->span);
}

// Rewrites one loop body with the loop variable as a vector. `failed()`
// reports a construct it cannot vectorize; the result is then discarded.
class BodyVectorizer final : public StmtExprMutator {
 public:
  BodyVectorizer(const VarNode* loop_var, PrimExpr ramp, int lanes)
      : lanes_(lanes) {
    replacements_.emplace(loop_var, std::move(ramp));
  }
  bool failed() const { return failed_; }

 protected:
  PrimExpr VisitVar_(const VarNode* op, const PrimExpr& self) override {
    auto it = replacements_.find(op);
    return it != replacements_.end() ? it->second : self;
  }

  PrimExpr VisitBinary_(const BinaryNode* op, const PrimExpr& self) override {
    if (op->type.lanes > 1) return Fail(self);
    return StmtExprMutator::VisitBinary_(op, self);
  }

  PrimExpr VisitCast_(const CastNode* op, const PrimExpr& self) override {
    PrimExpr value = VisitExpr(op->value);
    if (value.same_as(op->value)) return self;
    return MakeCast(op->type.with_lanes(value->type.lanes), value, op->span);
  }

  PrimExpr VisitSelect_(const SelectNode* op, const PrimExpr& self) override {
    PrimExpr cond = VisitExpr(op->cond);
    PrimExpr t = VisitExpr(op->true_value);
    PrimExpr f = VisitExpr(op->false_value);
    if (cond.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return self;
    }
    int lanes = std::max({cond->type.lanes, t->type.lanes, f->type.lanes});
    return MakeSelect(Widen(cond, lanes), Widen(t, lanes), Widen(f, lanes), op->span);
  }

  PrimExpr VisitIntrinsicCall_(const IntrinsicCallNode* op, const PrimExpr& self) override {
    std::vector<PrimExpr> args;
    bool changed = false;
    int lanes = 1;
    for (const PrimExpr& arg : op->args) {
      args.push_back(VisitExpr(arg));
      changed |= !args.back().same_as(arg);
      lanes = std::max(lanes, args.back()->type.lanes);
    }
    if (!changed) return self;
    for (PrimExpr& arg : args) arg = Widen(arg, lanes);
    return MakeIntrinsic(op->intrinsic, std::move(args), op->span);
  }

  PrimExpr VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self) override {
    ++loads_visited_;
    if (op->type.lanes > 1) return Fail(self);
    std::vector<PrimExpr> indices;
    bool changed = VectorizeIndices(op->indices, &indices);
    if (!changed) return self;
    return MakeBufferLoad(op->buffer, std::move(indices), op->span);
  }

  PrimExpr VisitRamp_(const RampNode*, const PrimExpr& self) override { return Fail(self); }
  PrimExpr VisitBroadcast_(const BroadcastNode*, const PrimExpr& self) override {
    return Fail(self);
  }

  Stmt VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) override {
    PrimExpr value = VisitExpr(op->value);
    std::vector<PrimExpr> indices;
    bool indices_changed = VectorizeIndices(op->indices, &indices);
    // Every lane would write the same element (a reduction, or a store
    // repeated once per iteration): one vector step cannot express it.
    if (!indices_changed) return Fail(self);
    return MakeBufferStore(op->buffer, Widen(value, lanes_), std::move(indices), op->span);
  }

  Stmt VisitLetStmt_(const LetStmtNode* op, const Stmt& self) override {
    PrimExpr value = VisitExpr(op->value);
    if (value->type.lanes == 1) {
      Stmt body = VisitStmt(op->body);
      if (value.same_as(op->value) && body.same_as(op->body)) return self;
      return MakeLetStmt(op->var, value, body, op->span);
    }
    // The variable now holds a vector: a new variable of the vector type.
    Var vector_var = MakeVar(op->var->name, value->type, op->var->span);
    replacements_.emplace(op->var.get(), vector_var);
    Stmt body = VisitStmt(op->body);
    return MakeLetStmt(vector_var, value, body, op->span);
  }

  Stmt VisitFor_(const ForNode*, const Stmt& self) override { return Fail(self); }
  // A condition every lane shares and that reads no memory (a pooling window's bounds test on
  // the loops outside the lanes) stays a branch around the vectorized branches: the lanes of one
  // iteration all take the same side, and no lane's store can change the condition.
  Stmt VisitIfThenElse_(const IfThenElseNode* op, const Stmt& self) override {
    const int64_t loads_before = loads_visited_;
    PrimExpr condition = VisitExpr(op->condition);
    if (condition->type.lanes != 1 || loads_visited_ != loads_before) return Fail(self);
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case ? VisitStmt(op->else_case) : op->else_case;
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return self;
    return MakeIfThenElse(condition, then_case, else_case, op->span);
  }
  Stmt VisitAllocate_(const AllocateNode*, const Stmt& self) override { return Fail(self); }
  Stmt VisitCallKernel_(const CallKernelNode*, const Stmt& self) override { return Fail(self); }

 private:
  template <typename T>
  T Fail(const T& self) {
    failed_ = true;
    return self;
  }

  // True when some index changed; then all are vectors of `lanes_` lanes,
  // simplified so `ramp(0, 1, n) * 4 + j` reads `ramp(j, 4, n)`.
  bool VectorizeIndices(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out) {
    bool changed = false;
    for (const PrimExpr& index : in) {
      out->push_back(VisitExpr(index));
      changed |= !out->back().same_as(index);
    }
    if (changed) {
      for (PrimExpr& index : *out) index = arith::Simplify(Widen(index, lanes_));
    }
    return changed;
  }

  int lanes_;
  bool failed_ = false;
  int64_t loads_visited_ = 0;
  std::unordered_map<const VarNode*, PrimExpr> replacements_;  // lookup only
};

class LoopVectorizer final : public StmtExprMutator {
 public:
  PrimExpr VisitExpr(const PrimExpr& expr) override { return expr; }

 protected:
  Stmt VisitFor_(const ForNode* op, const Stmt& self) override {
    Stmt body = VisitStmt(op->body);
    if (op->for_kind != ForKind::kVectorized) {
      if (body.same_as(op->body)) return self;
      return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->span);
    }
    int64_t lanes;
    if (AsConstInt(op->extent, &lanes) && lanes > 1 && lanes <= kMaxLanes) {
      PrimExpr ramp = MakeRamp(op->min, IntImm(1, kIndexType, op->span), static_cast<int>(lanes),
                               op->span);
      BodyVectorizer vectorizer(op->loop_var.get(), ramp, static_cast<int>(lanes));
      Stmt vectorized = vectorizer.VisitStmt(body);
      if (!vectorizer.failed()) return vectorized;
    }
    if (AsConstInt(op->extent, &lanes) && lanes == 1) {
      // One lane: the body at the loop's min.
      return Substitute(body, [&](const VarNode* var) -> PrimExpr {
        return var == op->loop_var.get() ? op->min : PrimExpr();
      });
    }
    return MakeFor(op->loop_var, op->min, op->extent, ForKind::kSerial, body, op->span);
  }

 private:
  // LLVM accepts any width, but wider vectors only bloat the code: such
  // loops stay serial.
  static constexpr int64_t kMaxLanes = 1024;
};

}  // namespace

Pass VectorizeLoop() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        LoopVectorizer vectorizer;
        return vectorizer.VisitStmt(func->body);
      },
      PassInfo{"VectorizeLoop", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
