// Buffer-load rewriting over loop IR.
#include "engine/te/load_rewriter.h"

#include "engine/loop/functor.h"

namespace kiln::te {

namespace {

class LoadRewriter final : public loop::StmtExprMutator {
 public:
  explicit LoadRewriter(const LoadRewrite& rewrite) : rewrite_(rewrite) {}

 protected:
  loop::PrimExpr VisitBufferLoad_(const loop::BufferLoadNode* op,
                                  const loop::PrimExpr& self) override {
    std::vector<loop::PrimExpr> indices;
    indices.reserve(op->indices.size());
    bool changed = false;
    for (const loop::PrimExpr& index : op->indices) {
      indices.push_back(VisitExpr(index));
      changed |= !indices.back().same_as(index);
    }
    loop::PrimExpr replacement = rewrite_(op, indices);
    if (replacement.defined()) return replacement;
    if (!changed) return self;
    return loop::MakeBufferLoad(op->buffer, std::move(indices), op->span);
  }

 private:
  const LoadRewrite& rewrite_;
};

class LoadCollector final : public loop::StmtExprVisitor {
 public:
  explicit LoadCollector(const loop::Buffer& buffer) : buffer_(buffer) {}
  std::vector<const loop::BufferLoadNode*> loads;

 protected:
  void VisitBufferLoad_(const loop::BufferLoadNode* op) override {
    if (op->buffer.same_as(buffer_)) loads.push_back(op);
    StmtExprVisitor::VisitBufferLoad_(op);
  }

 private:
  const loop::Buffer& buffer_;
};

class BufferCollector final : public loop::StmtExprVisitor {
 public:
  std::vector<loop::Buffer> buffers;

 protected:
  void VisitBufferLoad_(const loop::BufferLoadNode* op) override {
    bool seen = false;
    for (const loop::Buffer& buffer : buffers) seen |= buffer.same_as(op->buffer);
    if (!seen) buffers.push_back(op->buffer);
    StmtExprVisitor::VisitBufferLoad_(op);
  }
};

}  // namespace

loop::PrimExpr RewriteLoads(const loop::PrimExpr& expr, const LoadRewrite& rewrite) {
  if (!expr.defined()) return expr;
  LoadRewriter rewriter(rewrite);
  return rewriter.VisitExpr(expr);
}

loop::Stmt RewriteLoads(const loop::Stmt& stmt, const LoadRewrite& rewrite) {
  LoadRewriter rewriter(rewrite);
  return rewriter.VisitStmt(stmt);
}

std::vector<const loop::BufferLoadNode*> CollectLoads(const loop::PrimExpr& expr,
                                                      const loop::Buffer& buffer) {
  LoadCollector collector(buffer);
  if (expr.defined()) collector.VisitExpr(expr);
  return std::move(collector.loads);
}

std::vector<loop::Buffer> LoadedBuffers(const loop::PrimExpr& expr) {
  BufferCollector collector;
  if (expr.defined()) collector.VisitExpr(expr);
  return std::move(collector.buffers);
}

}  // namespace kiln::te
