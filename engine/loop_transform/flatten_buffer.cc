// The FlattenBuffer loop pass.
#include "engine/loop_transform/flatten_buffer.h"

#include <unordered_map>
#include <vector>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

bool IsFlat(const Buffer& buffer) {
  if (buffer->shape.size() != 1 || buffer->elem_offset != 0) return false;
  return buffer->strides.empty() || buffer->strides[0] == 1;
}

class BufferFlattener final : public StmtExprMutator {
 protected:
  PrimExpr VisitBufferLoad_(const BufferLoadNode* op, const PrimExpr& self) override {
    std::vector<PrimExpr> indices;
    bool changed = false;
    for (const PrimExpr& index : op->indices) {
      indices.push_back(VisitExpr(index));
      changed |= !indices.back().same_as(index);
    }
    if (IsFlat(op->buffer)) {
      if (!changed) return self;
      return MakeBufferLoad(op->buffer, std::move(indices), op->span);
    }
    return MakeBufferLoad(FlatView(op->buffer), {FlatIndex(op->buffer, indices, op->span)},
                          op->span);
  }

  Stmt VisitBufferStore_(const BufferStoreNode* op, const Stmt& self) override {
    PrimExpr value = VisitExpr(op->value);
    std::vector<PrimExpr> indices;
    bool changed = !value.same_as(op->value);
    for (const PrimExpr& index : op->indices) {
      indices.push_back(VisitExpr(index));
      changed |= !indices.back().same_as(index);
    }
    if (IsFlat(op->buffer)) {
      if (!changed) return self;
      return MakeBufferStore(op->buffer, value, std::move(indices), op->span);
    }
    return MakeBufferStore(FlatView(op->buffer), value,
                           {FlatIndex(op->buffer, indices, op->span)}, op->span);
  }

 private:
  // One view per buffer, so every access of a buffer goes through the same node.
  Buffer FlatView(const Buffer& buffer) {
    auto it = views_.find(buffer.get());
    if (it != views_.end()) return it->second.second;
    if (buffer->is_symbolic()) {  // dense row-major (symbolic buffers have no strides)
      PrimExpr extent = arith::Simplify(IntImm(buffer->elem_offset) + buffer->NumElementsExpr());
      Buffer view = MakeSymbolicBufferView(buffer->name, buffer->data, buffer->dtype, {extent},
                                           buffer->scope);
      views_.emplace(buffer.get(), std::make_pair(buffer, view));
      return view;
    }
    // The last element the strides reach, plus one.
    int64_t extent = 1;
    std::vector<int64_t> strides = buffer->EffectiveStrides();
    for (size_t k = 0; k < buffer->shape.size(); ++k) {
      if (buffer->shape[k] == 0) {
        extent = 0;
        break;
      }
      extent += (buffer->shape[k] - 1) * strides[k];
    }
    Buffer view = MakeBufferView(buffer->name, buffer->data, buffer->dtype,
                                 {buffer->elem_offset + extent}, 0, {}, buffer->scope);
    views_.emplace(buffer.get(), std::make_pair(buffer, view));
    return view;
  }

  static PrimExpr FlatIndex(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                            const Span& span) {
    std::vector<PrimExpr> strides = buffer->StrideExprs();
    PrimExpr flat = IntImm(buffer->elem_offset, kIndexType, span);
    for (size_t k = 0; k < indices.size(); ++k) {
      PrimExpr term = MakeBinary(BinaryOp::kMul, indices[k], strides[k], span);
      flat = MakeBinary(BinaryOp::kAdd, flat, term, span);
    }
    return arith::Simplify(flat);
  }

  // Keyed by node for lookup only (never iterated); the Buffer keeps the key alive.
  std::unordered_map<const BufferNode*, std::pair<Buffer, Buffer>> views_;
};

}  // namespace

Pass FlattenBuffer() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        BufferFlattener flattener;
        return flattener.VisitStmt(func->body);
      },
      PassInfo{"FlattenBuffer", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
