// The UnrollLoop loop pass.
#include "engine/loop_transform/unroll_loop.h"

#include <algorithm>
#include <vector>

#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

class LoopUnroller final : public StmtExprMutator {
 public:
  explicit LoopUnroller(int64_t max_extent) : max_extent_(max_extent) {}
  PrimExpr VisitExpr(const PrimExpr& expr) override { return expr; }

 protected:
  Stmt VisitFor_(const ForNode* op, const Stmt& self) override {
    Stmt body = VisitStmt(op->body);
    int64_t min, extent;
    if (op->for_kind == ForKind::kUnrolled && AsConstInt(op->min, &min) &&
        AsConstInt(op->extent, &extent) && extent <= max_extent_) {
      std::vector<Stmt> copies;
      copies.reserve(static_cast<size_t>(std::max<int64_t>(extent, 0)));
      for (int64_t k = 0; k < extent; ++k) {
        PrimExpr value = IntImm(min + k, op->loop_var->type, op->loop_var->span);
        copies.push_back(Substitute(body, [&](const VarNode* var) -> PrimExpr {
          return var == op->loop_var.get() ? value : PrimExpr();
        }));
      }
      // MakeSeqStmt gives one copy back as is; none gives an empty sequence.
      if (copies.size() == 1) return copies[0];
      return MakeSeqStmt(std::move(copies), op->span);
    }
    if (body.same_as(op->body)) return self;
    return MakeFor(op->loop_var, op->min, op->extent, op->for_kind, body, op->span);
  }

 private:
  int64_t max_extent_;
};

}  // namespace

Pass UnrollLoop(int64_t max_extent) {
  return CreatePrimFuncBodyPass(
      [max_extent](const PrimFunc& func, PassContext&) {
        LoopUnroller unroller(max_extent);
        return unroller.VisitStmt(func->body);
      },
      PassInfo{"UnrollLoop", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
