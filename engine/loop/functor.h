// Visitor and mutator over loop-dialect statements and expressions. Loop IR
// nests shallowly (a loop nest per tensor dimension, expressions as deep as a
// fused chain of elementwise ops), so these recurse; SeqStmt is walked in a
// loop. The mutator returns the input node when no child changed, so
// "changed" stays a pointer test as in the graph dialect.
#pragma once

#include <functional>

#include "engine/loop/prim_func.h"
#include "engine/loop/stmt.h"

namespace kiln::loop {

class StmtExprVisitor {
 public:
  virtual ~StmtExprVisitor() = default;
  virtual void VisitStmt(const Stmt& stmt);
  virtual void VisitExpr(const PrimExpr& expr);
  // Called for every buffer a load, store or kernel call mentions.
  virtual void VisitBuffer(const Buffer&) {}

 protected:
  virtual void VisitFor_(const ForNode* op);
  virtual void VisitBufferStore_(const BufferStoreNode* op);
  virtual void VisitAllocate_(const AllocateNode* op);
  virtual void VisitIfThenElse_(const IfThenElseNode* op);
  virtual void VisitLetStmt_(const LetStmtNode* op);
  virtual void VisitSeqStmt_(const SeqStmtNode* op);
  virtual void VisitEvaluate_(const EvaluateNode* op);
  virtual void VisitCallKernel_(const CallKernelNode* op);
  virtual void VisitAssert_(const AssertNode* op);
  virtual void VisitWhile_(const WhileNode* op);

  virtual void VisitIntImm_(const IntImmNode*) {}
  virtual void VisitFloatImm_(const FloatImmNode*) {}
  virtual void VisitStringImm_(const StringImmNode*) {}
  virtual void VisitVar_(const VarNode*) {}
  virtual void VisitBinary_(const BinaryNode* op);
  virtual void VisitNot_(const NotNode* op);
  virtual void VisitCast_(const CastNode* op);
  virtual void VisitSelect_(const SelectNode* op);
  virtual void VisitIntrinsicCall_(const IntrinsicCallNode* op);
  virtual void VisitBufferLoad_(const BufferLoadNode* op);
  virtual void VisitRamp_(const RampNode* op);
  virtual void VisitBroadcast_(const BroadcastNode* op);
};

class StmtExprMutator {
 public:
  virtual ~StmtExprMutator() = default;
  virtual Stmt VisitStmt(const Stmt& stmt);
  virtual PrimExpr VisitExpr(const PrimExpr& expr);

 protected:
  // `self` is the handle of `op` (returned when nothing changed).
  virtual Stmt VisitFor_(const ForNode* op, const Stmt& self);
  virtual Stmt VisitBufferStore_(const BufferStoreNode* op, const Stmt& self);
  virtual Stmt VisitAllocate_(const AllocateNode* op, const Stmt& self);
  virtual Stmt VisitIfThenElse_(const IfThenElseNode* op, const Stmt& self);
  virtual Stmt VisitLetStmt_(const LetStmtNode* op, const Stmt& self);
  virtual Stmt VisitSeqStmt_(const SeqStmtNode* op, const Stmt& self);
  virtual Stmt VisitEvaluate_(const EvaluateNode* op, const Stmt& self);
  virtual Stmt VisitCallKernel_(const CallKernelNode* op, const Stmt& self);
  virtual Stmt VisitAssert_(const AssertNode* op, const Stmt& self);
  virtual Stmt VisitWhile_(const WhileNode* op, const Stmt& self);

  virtual PrimExpr VisitIntImm_(const IntImmNode* op, const PrimExpr& self);
  virtual PrimExpr VisitFloatImm_(const FloatImmNode* op, const PrimExpr& self);
  virtual PrimExpr VisitStringImm_(const StringImmNode*, const PrimExpr& self) { return self; }
  virtual PrimExpr VisitVar_(const VarNode* op, const PrimExpr& self);
  virtual PrimExpr VisitBinary_(const BinaryNode* op, const PrimExpr& self);
  virtual PrimExpr VisitNot_(const NotNode* op, const PrimExpr& self);
  virtual PrimExpr VisitCast_(const CastNode* op, const PrimExpr& self);
  virtual PrimExpr VisitSelect_(const SelectNode* op, const PrimExpr& self);
  virtual PrimExpr VisitIntrinsicCall_(const IntrinsicCallNode* op, const PrimExpr& self);
  virtual PrimExpr VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self);
  virtual PrimExpr VisitRamp_(const RampNode* op, const PrimExpr& self);
  virtual PrimExpr VisitBroadcast_(const BroadcastNode* op, const PrimExpr& self);
};

// Replaces variables by expressions (e.g. a loop variable by `outer * f +
// inner` after split). Spans of the rewritten nodes are kept.
PrimExpr Substitute(const PrimExpr& expr,
                    const std::function<PrimExpr(const VarNode*)>& lookup);
Stmt Substitute(const Stmt& stmt, const std::function<PrimExpr(const VarNode*)>& lookup);

// Calls `fn` on every statement and expression node, pre-order.
void PreOrderVisit(const Stmt& stmt, const std::function<void(const Object*)>& fn);

}  // namespace kiln::loop
