// Default traversals of the loop dialect.
#include "engine/loop/functor.h"

namespace kiln::loop {

void StmtExprVisitor::VisitStmt(const Stmt& stmt) {
  switch (stmt->kind()) {
    case ObjectKind::kFor: return VisitFor_(stmt.as<ForNode>());
    case ObjectKind::kBufferStore: return VisitBufferStore_(stmt.as<BufferStoreNode>());
    case ObjectKind::kAllocate: return VisitAllocate_(stmt.as<AllocateNode>());
    case ObjectKind::kIfThenElse: return VisitIfThenElse_(stmt.as<IfThenElseNode>());
    case ObjectKind::kLetStmt: return VisitLetStmt_(stmt.as<LetStmtNode>());
    case ObjectKind::kSeqStmt: return VisitSeqStmt_(stmt.as<SeqStmtNode>());
    case ObjectKind::kEvaluate: return VisitEvaluate_(stmt.as<EvaluateNode>());
    case ObjectKind::kCallKernel: return VisitCallKernel_(stmt.as<CallKernelNode>());
    case ObjectKind::kAssert: return VisitAssert_(stmt.as<AssertNode>());
    case ObjectKind::kWhile: return VisitWhile_(stmt.as<WhileNode>());
    default: KILN_UNREACHABLE() << "not a statement: " << ObjectKindName(stmt->kind());
  }
}

void StmtExprVisitor::VisitExpr(const PrimExpr& expr) {
  switch (expr->kind()) {
    case ObjectKind::kIntImm: return VisitIntImm_(expr.as<IntImmNode>());
    case ObjectKind::kFloatImm: return VisitFloatImm_(expr.as<FloatImmNode>());
    case ObjectKind::kStringImm: return VisitStringImm_(expr.as<StringImmNode>());
    case ObjectKind::kLoopVar: return VisitVar_(expr.as<VarNode>());
    case ObjectKind::kBinary: return VisitBinary_(expr.as<BinaryNode>());
    case ObjectKind::kNot: return VisitNot_(expr.as<NotNode>());
    case ObjectKind::kCast: return VisitCast_(expr.as<CastNode>());
    case ObjectKind::kSelect: return VisitSelect_(expr.as<SelectNode>());
    case ObjectKind::kIntrinsicCall: return VisitIntrinsicCall_(expr.as<IntrinsicCallNode>());
    case ObjectKind::kBufferLoad: return VisitBufferLoad_(expr.as<BufferLoadNode>());
    case ObjectKind::kRamp: return VisitRamp_(expr.as<RampNode>());
    case ObjectKind::kBroadcast: return VisitBroadcast_(expr.as<BroadcastNode>());
    default: KILN_UNREACHABLE() << "not a loop expression: " << ObjectKindName(expr->kind());
  }
}

void StmtExprVisitor::VisitFor_(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitBufferStore_(const BufferStoreNode* op) {
  VisitBuffer(op->buffer);
  VisitExpr(op->value);
  for (const PrimExpr& index : op->indices) VisitExpr(index);
}
void StmtExprVisitor::VisitAllocate_(const AllocateNode* op) {
  if (op->is_dynamic()) VisitExpr(op->dynamic_extent);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitIfThenElse_(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case.defined()) VisitStmt(op->else_case);
}
void StmtExprVisitor::VisitLetStmt_(const LetStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitSeqStmt_(const SeqStmtNode* op) {
  for (const Stmt& stmt : op->seq) VisitStmt(stmt);
}
void StmtExprVisitor::VisitEvaluate_(const EvaluateNode* op) { VisitExpr(op->value); }
void StmtExprVisitor::VisitCallKernel_(const CallKernelNode* op) {
  for (const Buffer& buffer : op->args) VisitBuffer(buffer);
}
void StmtExprVisitor::VisitAssert_(const AssertNode* op) { VisitExpr(op->condition); }
void StmtExprVisitor::VisitWhile_(const WhileNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitBinary_(const BinaryNode* op) {
  VisitExpr(op->a);
  VisitExpr(op->b);
}
void StmtExprVisitor::VisitNot_(const NotNode* op) { VisitExpr(op->a); }
void StmtExprVisitor::VisitCast_(const CastNode* op) { VisitExpr(op->value); }
void StmtExprVisitor::VisitSelect_(const SelectNode* op) {
  VisitExpr(op->cond);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void StmtExprVisitor::VisitIntrinsicCall_(const IntrinsicCallNode* op) {
  for (const PrimExpr& arg : op->args) VisitExpr(arg);
}
void StmtExprVisitor::VisitBufferLoad_(const BufferLoadNode* op) {
  VisitBuffer(op->buffer);
  for (const PrimExpr& index : op->indices) VisitExpr(index);
}
void StmtExprVisitor::VisitRamp_(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void StmtExprVisitor::VisitBroadcast_(const BroadcastNode* op) { VisitExpr(op->value); }

// ---------------------------------------------------------------------------

Stmt StmtExprMutator::VisitStmt(const Stmt& stmt) {
  switch (stmt->kind()) {
    case ObjectKind::kFor: return VisitFor_(stmt.as<ForNode>(), stmt);
    case ObjectKind::kBufferStore: return VisitBufferStore_(stmt.as<BufferStoreNode>(), stmt);
    case ObjectKind::kAllocate: return VisitAllocate_(stmt.as<AllocateNode>(), stmt);
    case ObjectKind::kIfThenElse: return VisitIfThenElse_(stmt.as<IfThenElseNode>(), stmt);
    case ObjectKind::kLetStmt: return VisitLetStmt_(stmt.as<LetStmtNode>(), stmt);
    case ObjectKind::kSeqStmt: return VisitSeqStmt_(stmt.as<SeqStmtNode>(), stmt);
    case ObjectKind::kEvaluate: return VisitEvaluate_(stmt.as<EvaluateNode>(), stmt);
    case ObjectKind::kCallKernel: return VisitCallKernel_(stmt.as<CallKernelNode>(), stmt);
    case ObjectKind::kAssert: return VisitAssert_(stmt.as<AssertNode>(), stmt);
    case ObjectKind::kWhile: return VisitWhile_(stmt.as<WhileNode>(), stmt);
    default: KILN_UNREACHABLE() << "not a statement: " << ObjectKindName(stmt->kind());
  }
  return stmt;
}

PrimExpr StmtExprMutator::VisitExpr(const PrimExpr& expr) {
  switch (expr->kind()) {
    case ObjectKind::kIntImm: return VisitIntImm_(expr.as<IntImmNode>(), expr);
    case ObjectKind::kFloatImm: return VisitFloatImm_(expr.as<FloatImmNode>(), expr);
    case ObjectKind::kStringImm: return VisitStringImm_(expr.as<StringImmNode>(), expr);
    case ObjectKind::kLoopVar: return VisitVar_(expr.as<VarNode>(), expr);
    case ObjectKind::kBinary: return VisitBinary_(expr.as<BinaryNode>(), expr);
    case ObjectKind::kNot: return VisitNot_(expr.as<NotNode>(), expr);
    case ObjectKind::kCast: return VisitCast_(expr.as<CastNode>(), expr);
    case ObjectKind::kSelect: return VisitSelect_(expr.as<SelectNode>(), expr);
    case ObjectKind::kIntrinsicCall:
      return VisitIntrinsicCall_(expr.as<IntrinsicCallNode>(), expr);
    case ObjectKind::kBufferLoad: return VisitBufferLoad_(expr.as<BufferLoadNode>(), expr);
    case ObjectKind::kRamp: return VisitRamp_(expr.as<RampNode>(), expr);
    case ObjectKind::kBroadcast: return VisitBroadcast_(expr.as<BroadcastNode>(), expr);
    default: KILN_UNREACHABLE() << "not a loop expression: " << ObjectKindName(expr->kind());
  }
  return expr;
}

namespace {
// Visits every element; true when any came back as a different node.
template <typename T, typename F>
bool MutateAll(const std::vector<T>& in, std::vector<T>* out, F&& visit) {
  bool changed = false;
  out->reserve(in.size());
  for (const T& item : in) {
    out->push_back(visit(item));
    changed |= !out->back().same_as(item);
  }
  return changed;
}
}  // namespace

Stmt StmtExprMutator::VisitFor_(const ForNode* op, const Stmt& self) {
  PrimExpr min = VisitExpr(op->min);
  PrimExpr extent = VisitExpr(op->extent);
  Stmt body = VisitStmt(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
  return MakeFor(op->loop_var, min, extent, op->for_kind, body, op->span);
}
Stmt StmtExprMutator::VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) {
  PrimExpr value = VisitExpr(op->value);
  std::vector<PrimExpr> indices;
  bool changed = MutateAll(op->indices, &indices, [&](const PrimExpr& e) { return VisitExpr(e); });
  if (!changed && value.same_as(op->value)) return self;
  return MakeBufferStore(op->buffer, value, std::move(indices), op->span);
}
Stmt StmtExprMutator::VisitAllocate_(const AllocateNode* op, const Stmt& self) {
  if (op->is_dynamic()) {
    PrimExpr extent = VisitExpr(op->dynamic_extent);
    Stmt body = VisitStmt(op->body);
    if (extent.same_as(op->dynamic_extent) && body.same_as(op->body)) return self;
    return MakeAllocate(op->data, op->dtype, extent, op->scope, body, op->span);
  }
  Stmt body = VisitStmt(op->body);
  if (body.same_as(op->body)) return self;
  return WithAllocateBody(*op, body);
}
Stmt StmtExprMutator::VisitIfThenElse_(const IfThenElseNode* op, const Stmt& self) {
  PrimExpr condition = VisitExpr(op->condition);
  Stmt then_case = VisitStmt(op->then_case);
  Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
  if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
      else_case.same_as(op->else_case)) {
    return self;
  }
  return MakeIfThenElse(condition, then_case, else_case, op->span);
}
Stmt StmtExprMutator::VisitLetStmt_(const LetStmtNode* op, const Stmt& self) {
  PrimExpr value = VisitExpr(op->value);
  Stmt body = VisitStmt(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return self;
  return MakeLetStmt(op->var, value, body, op->span);
}
Stmt StmtExprMutator::VisitSeqStmt_(const SeqStmtNode* op, const Stmt& self) {
  std::vector<Stmt> seq;
  bool changed = MutateAll(op->seq, &seq, [&](const Stmt& s) { return VisitStmt(s); });
  if (!changed) return self;
  return MakeSeqStmt(std::move(seq), op->span);
}
Stmt StmtExprMutator::VisitEvaluate_(const EvaluateNode* op, const Stmt& self) {
  PrimExpr value = VisitExpr(op->value);
  if (value.same_as(op->value)) return self;
  return MakeEvaluate(value, op->span);
}
Stmt StmtExprMutator::VisitCallKernel_(const CallKernelNode*, const Stmt& self) { return self; }
Stmt StmtExprMutator::VisitAssert_(const AssertNode* op, const Stmt& self) {
  PrimExpr condition = VisitExpr(op->condition);
  if (condition.same_as(op->condition)) return self;
  return MakeAssert(condition, op->message, op->span);
}
Stmt StmtExprMutator::VisitWhile_(const WhileNode* op, const Stmt& self) {
  PrimExpr condition = VisitExpr(op->condition);
  Stmt body = VisitStmt(op->body);
  if (condition.same_as(op->condition) && body.same_as(op->body)) return self;
  return MakeWhile(condition, body, op->span);
}

PrimExpr StmtExprMutator::VisitIntImm_(const IntImmNode*, const PrimExpr& self) { return self; }
PrimExpr StmtExprMutator::VisitFloatImm_(const FloatImmNode*, const PrimExpr& self) {
  return self;
}
PrimExpr StmtExprMutator::VisitVar_(const VarNode*, const PrimExpr& self) { return self; }
PrimExpr StmtExprMutator::VisitBinary_(const BinaryNode* op, const PrimExpr& self) {
  PrimExpr a = VisitExpr(op->a);
  PrimExpr b = VisitExpr(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return MakeBinary(op->op, a, b, op->span);
}
PrimExpr StmtExprMutator::VisitNot_(const NotNode* op, const PrimExpr& self) {
  PrimExpr a = VisitExpr(op->a);
  if (a.same_as(op->a)) return self;
  return MakeNot(a, op->span);
}
PrimExpr StmtExprMutator::VisitCast_(const CastNode* op, const PrimExpr& self) {
  PrimExpr value = VisitExpr(op->value);
  if (value.same_as(op->value)) return self;
  return MakeCast(op->type.with_lanes(value->type.lanes), value, op->span);
}
PrimExpr StmtExprMutator::VisitSelect_(const SelectNode* op, const PrimExpr& self) {
  PrimExpr cond = VisitExpr(op->cond);
  PrimExpr t = VisitExpr(op->true_value);
  PrimExpr f = VisitExpr(op->false_value);
  if (cond.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return self;
  }
  return MakeSelect(cond, t, f, op->span);
}
PrimExpr StmtExprMutator::VisitIntrinsicCall_(const IntrinsicCallNode* op, const PrimExpr& self) {
  std::vector<PrimExpr> args;
  bool changed = MutateAll(op->args, &args, [&](const PrimExpr& e) { return VisitExpr(e); });
  if (!changed) return self;
  return MakeIntrinsic(op->intrinsic, std::move(args), op->span);
}
PrimExpr StmtExprMutator::VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self) {
  std::vector<PrimExpr> indices;
  bool changed = MutateAll(op->indices, &indices, [&](const PrimExpr& e) { return VisitExpr(e); });
  if (!changed) return self;
  return MakeBufferLoad(op->buffer, std::move(indices), op->span);
}
PrimExpr StmtExprMutator::VisitRamp_(const RampNode* op, const PrimExpr& self) {
  PrimExpr base = VisitExpr(op->base);
  PrimExpr stride = VisitExpr(op->stride);
  if (base.same_as(op->base) && stride.same_as(op->stride)) return self;
  return MakeRamp(base, stride, op->lanes, op->span);
}
PrimExpr StmtExprMutator::VisitBroadcast_(const BroadcastNode* op, const PrimExpr& self) {
  PrimExpr value = VisitExpr(op->value);
  if (value.same_as(op->value)) return self;
  return MakeBroadcast(value, op->lanes, op->span);
}

namespace {
class VarSubstituter final : public StmtExprMutator {
 public:
  explicit VarSubstituter(const std::function<PrimExpr(const VarNode*)>& lookup)
      : lookup_(lookup) {}

 protected:
  PrimExpr VisitVar_(const VarNode* op, const PrimExpr& self) override {
    PrimExpr replacement = lookup_(op);
    return replacement.defined() ? replacement : self;
  }

 private:
  const std::function<PrimExpr(const VarNode*)>& lookup_;
};

class PreOrder final : public StmtExprVisitor {
 public:
  explicit PreOrder(const std::function<void(const Object*)>& fn) : fn_(fn) {}
  void VisitStmt(const Stmt& stmt) override {
    fn_(stmt.get());
    StmtExprVisitor::VisitStmt(stmt);
  }
  void VisitExpr(const PrimExpr& expr) override {
    fn_(expr.get());
    StmtExprVisitor::VisitExpr(expr);
  }

 private:
  const std::function<void(const Object*)>& fn_;
};
}  // namespace

PrimExpr Substitute(const PrimExpr& expr, const std::function<PrimExpr(const VarNode*)>& lookup) {
  VarSubstituter substituter(lookup);
  return substituter.VisitExpr(expr);
}

Stmt Substitute(const Stmt& stmt, const std::function<PrimExpr(const VarNode*)>& lookup) {
  VarSubstituter substituter(lookup);
  return substituter.VisitStmt(stmt);
}

void PreOrderVisit(const Stmt& stmt, const std::function<void(const Object*)>& fn) {
  PreOrder visitor(fn);
  visitor.VisitStmt(stmt);
}

}  // namespace kiln::loop
