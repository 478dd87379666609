// Storage variables renamed in a statement: every use of a storage variable (through buffers
// viewing it, kernel call arguments, or directly) rewritten to another one. StorageRewrite uses
// it to merge allocations; LoopPartition to give each copy of a loop body its own allocations.
#pragma once

#include <unordered_map>
#include <utility>

#include "engine/loop/functor.h"

namespace kiln::loop::transform {

// Rewrites every use of a storage variable in `remap` to its replacement. The Allocates of the
// old variables are left as they are (the caller drops or rebuilds them).
class StorageRemapper : public StmtExprMutator {
 public:
  explicit StorageRemapper(const std::unordered_map<const VarNode*, Var>& remap) : remap_(remap) {}

 protected:
  PrimExpr VisitVar_(const VarNode* op, const PrimExpr& self) override;
  PrimExpr VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self) override;
  Stmt VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) override;
  Stmt VisitCallKernel_(const CallKernelNode* op, const Stmt& self) override;

 private:
  Buffer Remap(const Buffer& buffer);

  const std::unordered_map<const VarNode*, Var>& remap_;
  std::unordered_map<const BufferNode*, std::pair<Buffer, Buffer>> views_;  // lookup only
};

// `stmt` with every Allocate inside it given a new storage variable (same name and type) and
// every use rewritten: a copy of a body that can sit beside the original.
Stmt WithFreshStorage(const Stmt& stmt);

}  // namespace kiln::loop::transform
