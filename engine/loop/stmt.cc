// Statement and PrimFunc constructors.
#include "engine/loop/stmt.h"

#include "engine/loop/prim_func.h"

namespace kiln::loop {

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unroll";
  }
  return "?";
}

Stmt MakeFor(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body, Span span) {
  return Stmt(new ForNode(std::move(loop_var), std::move(min), std::move(extent), kind,
                          std::move(body), std::move(span)));
}

Stmt MakeBufferStore(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices, Span span) {
  return Stmt(
      new BufferStoreNode(std::move(buffer), std::move(value), std::move(indices), std::move(span)));
}

Stmt MakeAllocate(Var data, DataType dtype, int64_t extent, std::string scope, Stmt body,
                  Span span) {
  return Stmt(new AllocateNode(std::move(data), dtype, extent, std::move(scope), std::move(body),
                               std::move(span)));
}

Stmt MakeAllocate(Var data, DataType dtype, PrimExpr extent, std::string scope, Stmt body,
                  Span span) {
  int64_t value;
  if (AsConstInt(extent, &value)) {
    return MakeAllocate(std::move(data), dtype, value, std::move(scope), std::move(body),
                        std::move(span));
  }
  return Stmt(new AllocateNode(std::move(data), dtype, -1, std::move(scope), std::move(body),
                               std::move(span), std::move(extent)));
}

PrimExpr AllocateNode::ExtentExpr() const { return is_dynamic() ? dynamic_extent : IntImm(extent); }

Stmt WithAllocateBody(const AllocateNode& op, Stmt body) {
  return WithAllocateStorage(op, op.data, std::move(body));
}

Stmt WithAllocateStorage(const AllocateNode& op, Var data, Stmt body) {
  return Stmt(new AllocateNode(std::move(data), op.dtype, op.extent, op.scope, std::move(body),
                               op.span, op.dynamic_extent));
}

Stmt MakeIfThenElse(PrimExpr condition, Stmt then_case, Stmt else_case, Span span) {
  return Stmt(new IfThenElseNode(std::move(condition), std::move(then_case), std::move(else_case),
                                 std::move(span)));
}

Stmt MakeLetStmt(Var var, PrimExpr value, Stmt body, Span span) {
  return Stmt(new LetStmtNode(std::move(var), std::move(value), std::move(body), std::move(span)));
}

Stmt MakeSeqStmt(std::vector<Stmt> seq, Span span) {
  std::vector<Stmt> flat;
  flat.reserve(seq.size());
  for (Stmt& stmt : seq) {
    if (!stmt.defined()) continue;
    if (const auto* inner = stmt.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(stmt));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(new SeqStmtNode(std::move(flat), std::move(span)));
}

Stmt MakeEvaluate(PrimExpr value, Span span) {
  return Stmt(new EvaluateNode(std::move(value), std::move(span)));
}

Stmt MakeAssert(PrimExpr condition, std::string message, Span span) {
  return Stmt(new AssertNode(std::move(condition), std::move(message), std::move(span)));
}

Stmt MakeWhile(PrimExpr condition, Stmt body, Span span) {
  return Stmt(new WhileNode(std::move(condition), std::move(body), std::move(span)));
}

Stmt MakeCallKernel(GlobalVar callee, std::vector<Buffer> args, Span span) {
  return Stmt(new CallKernelNode(std::move(callee), std::move(args), std::move(span)));
}

bool IsNoOp(const Stmt& stmt) {
  if (const auto* seq = stmt.as<SeqStmtNode>()) return seq->seq.empty();
  if (const auto* eval = stmt.as<EvaluateNode>()) {
    return eval->value.as<IntImmNode>() != nullptr || eval->value.as<FloatImmNode>() != nullptr;
  }
  return false;
}

PrimFunc MakePrimFunc(std::vector<Buffer> param_buffers, Stmt body, Attrs attrs, Span span) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (Buffer& buffer : param_buffers) {
    params.push_back(buffer->data);
    buffer_map.emplace_back(buffer->data, std::move(buffer));
  }
  return PrimFunc(new PrimFuncNode(std::move(params), std::move(buffer_map), std::move(body),
                                   std::move(attrs), std::move(span)));
}

PrimFunc WithBody(const PrimFunc& func, Stmt body) {
  if (body.same_as(func->body)) return func;
  return PrimFunc(new PrimFuncNode(func->params, func->buffer_map, std::move(body), func->attrs,
                                   func->span));
}

}  // namespace kiln::loop
