// Storage renaming (storage_remap.h).
#include "engine/loop_transform/storage_remap.h"

#include <vector>

namespace kiln::loop::transform {

PrimExpr StorageRemapper::VisitVar_(const VarNode* op, const PrimExpr& self) {
  auto it = remap_.find(op);
  return it != remap_.end() ? PrimExpr(it->second) : self;
}

PrimExpr StorageRemapper::VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self) {
  PrimExpr visited = StmtExprMutator::VisitBufferLoad_(op, self);
  const auto* load = visited.as<BufferLoadNode>();
  Buffer buffer = Remap(load->buffer);
  if (buffer.same_as(load->buffer)) return visited;
  return MakeBufferLoad(buffer, load->indices, load->span);
}

Stmt StorageRemapper::VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) {
  Stmt visited = StmtExprMutator::VisitBufferStore_(op, self);
  const auto* store = visited.as<BufferStoreNode>();
  Buffer buffer = Remap(store->buffer);
  if (buffer.same_as(store->buffer)) return visited;
  return MakeBufferStore(buffer, store->value, store->indices, store->span);
}

Stmt StorageRemapper::VisitCallKernel_(const CallKernelNode* op, const Stmt& self) {
  std::vector<Buffer> args;
  bool changed = false;
  for (const Buffer& arg : op->args) {
    args.push_back(Remap(arg));
    changed |= !args.back().same_as(arg);
  }
  if (!changed) return self;
  return MakeCallKernel(op->callee, std::move(args), op->span);
}

Buffer StorageRemapper::Remap(const Buffer& buffer) {
  auto var = remap_.find(buffer->data.get());
  if (var == remap_.end()) return buffer;
  auto it = views_.find(buffer.get());
  if (it != views_.end()) return it->second.second;
  Buffer view = MakeBufferView(buffer->name, var->second, buffer->dtype, buffer->shape,
                               buffer->elem_offset, buffer->strides, buffer->scope);
  views_.emplace(buffer.get(), std::make_pair(buffer, view));
  return view;
}

namespace {

// Collects the storage variables of the Allocates in a statement, each with a fresh one.
class AllocatedStorage final : public StmtExprVisitor {
 public:
  std::unordered_map<const VarNode*, Var> fresh;

 protected:
  void VisitAllocate_(const AllocateNode* op) override {
    fresh.emplace(op->data.get(), MakeVar(op->data->name, op->data->type, op->data->span));
    StmtExprVisitor::VisitAllocate_(op);
  }
};

// A StorageRemapper that renames the Allocates too.
class FreshStorage final : public StorageRemapper {
 public:
  explicit FreshStorage(const std::unordered_map<const VarNode*, Var>& remap)
      : StorageRemapper(remap), remap_(remap) {}

 protected:
  Stmt VisitAllocate_(const AllocateNode* op, const Stmt&) override {
    Stmt body = VisitStmt(op->body);
    return WithAllocateStorage(*op, remap_.at(op->data.get()), body);
  }

 private:
  const std::unordered_map<const VarNode*, Var>& remap_;
};

}  // namespace

Stmt WithFreshStorage(const Stmt& stmt) {
  AllocatedStorage storage;
  storage.VisitStmt(stmt);
  if (storage.fresh.empty()) return stmt;
  FreshStorage renamer(storage.fresh);
  return renamer.VisitStmt(stmt);
}

}  // namespace kiln::loop::transform
