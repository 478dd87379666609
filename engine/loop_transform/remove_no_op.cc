// The RemoveNoOp loop pass: a post-order statement mutator.
#include "engine/loop_transform/remove_no_op.h"

#include <vector>

#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

Stmt NoOp(const Span& span) { return MakeSeqStmt({}, span); }

class NoOpRemover final : public StmtExprMutator {
 public:
  // Expressions have no side effects and hold no statements: skip them.
  PrimExpr VisitExpr(const PrimExpr& expr) override { return expr; }

 protected:
  Stmt VisitFor_(const ForNode* op, const Stmt& self) override {
    Stmt body = VisitStmt(op->body);
    int64_t extent;
    if (IsNoOp(body) || (AsConstInt(op->extent, &extent) && extent <= 0)) return NoOp(op->span);
    if (body.same_as(op->body)) return self;
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->span);
  }

  Stmt VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) override {
    // buf[idx] = buf[idx]
    if (const auto* load = op->value.as<BufferLoadNode>()) {
      if (load->buffer.same_as(op->buffer) && load->indices.size() == op->indices.size()) {
        bool same = true;
        for (size_t i = 0; i < op->indices.size() && same; ++i) {
          same = arith::ExprDeepEqual(load->indices[i], op->indices[i]);
        }
        if (same) return NoOp(op->span);
      }
    }
    return self;
  }

  Stmt VisitAllocate_(const AllocateNode* op, const Stmt& self) override {
    Stmt body = VisitStmt(op->body);
    if (IsNoOp(body)) return NoOp(op->span);
    if (body.same_as(op->body)) return self;
    return WithAllocateBody(*op, body);
  }

  Stmt VisitIfThenElse_(const IfThenElseNode* op, const Stmt& self) override {
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    bool then_empty = IsNoOp(then_case);
    bool else_empty = !else_case.defined() || IsNoOp(else_case);
    if (then_empty && else_empty) return NoOp(op->span);
    if (then_empty) {
      // Only the else branch does something: run it when the condition fails.
      return MakeIfThenElse(MakeNot(op->condition, op->condition->span), else_case, nullptr,
                            op->span);
    }
    if (else_case.defined() && else_empty) else_case = Stmt();
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return self;
    return MakeIfThenElse(op->condition, then_case, else_case, op->span);
  }

  Stmt VisitLetStmt_(const LetStmtNode* op, const Stmt& self) override {
    Stmt body = VisitStmt(op->body);
    if (IsNoOp(body)) return NoOp(op->span);
    if (body.same_as(op->body)) return self;
    return MakeLetStmt(op->var, op->value, body, op->span);
  }

  Stmt VisitSeqStmt_(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const Stmt& stmt : op->seq) {
      Stmt visited = VisitStmt(stmt);
      changed |= !visited.same_as(stmt);
      if (IsNoOp(visited)) {
        changed = true;
        continue;
      }
      kept.push_back(visited);
    }
    if (!changed) return self;
    if (kept.empty()) return NoOp(op->span);
    return MakeSeqStmt(std::move(kept), op->span);
  }

  Stmt VisitEvaluate_(const EvaluateNode* op, const Stmt& self) override {
    if (IsNoOp(self)) return NoOp(op->span);
    return self;
  }
};

}  // namespace

Pass RemoveNoOp() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        NoOpRemover remover;
        return remover.VisitStmt(func->body);
      },
      PassInfo{"RemoveNoOp", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
