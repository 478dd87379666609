// Loop-dialect statements. Every statement carries the span of the graph
// node(s) it was lowered from, and loop passes keep it.
#pragma once

#include <string>
#include <vector>

#include "engine/ir/expr.h"
#include "engine/loop/buffer.h"
#include "engine/loop/expr.h"

namespace kiln::loop {

class StmtNode : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k >= ObjectKind::kFor && k <= ObjectKind::kWhile;
  }
  const Span span;

 protected:
  StmtNode(ObjectKind kind, Span span) : Object(kind), span(std::move(span)) {}
};
using Stmt = Ref<StmtNode>;

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled };
const char* ForKindName(ForKind kind);  // "serial", "parallel", "vectorized", "unroll"

// for loop_var in [min, min + extent): body
class ForNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kFor; }
  ForNode(Var loop_var, PrimExpr min, PrimExpr extent, ForKind for_kind, Stmt body, Span span)
      : StmtNode(ObjectKind::kFor, std::move(span)),
        loop_var(std::move(loop_var)),
        min(std::move(min)),
        extent(std::move(extent)),
        for_kind(for_kind),
        body(std::move(body)) {}
  const Var loop_var;
  const PrimExpr min;
  const PrimExpr extent;
  const ForKind for_kind;
  const Stmt body;
};

// buffer[indices...] = value
class BufferStoreNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kBufferStore; }
  BufferStoreNode(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices, Span span)
      : StmtNode(ObjectKind::kBufferStore, std::move(span)),
        buffer(std::move(buffer)),
        value(std::move(value)),
        indices(std::move(indices)) {}
  const Buffer buffer;
  const PrimExpr value;
  const std::vector<PrimExpr> indices;
};

// Allocates `extent` elements of `dtype` as storage `data` for the duration
// of `body`. Buffers in the body view it. An allocation whose size only a run
// knows (a buffer of a symbolic dimension) has extent -1 and `dynamic_extent`,
// an index expression evaluated when the statement runs.
class AllocateNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kAllocate; }
  AllocateNode(Var data, DataType dtype, int64_t extent, std::string scope, Stmt body, Span span,
               PrimExpr dynamic_extent = nullptr)
      : StmtNode(ObjectKind::kAllocate, std::move(span)),
        data(std::move(data)),
        dtype(dtype),
        extent(extent),
        scope(std::move(scope)),
        body(std::move(body)),
        dynamic_extent(std::move(dynamic_extent)) {}
  bool is_dynamic() const { return dynamic_extent.defined(); }
  // The extent as an expression, for either kind.
  PrimExpr ExtentExpr() const;

  const Var data;
  const DataType dtype;
  const int64_t extent;
  const std::string scope;
  const Stmt body;
  const PrimExpr dynamic_extent;  // null: `extent` elements
};

class IfThenElseNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kIfThenElse; }
  IfThenElseNode(PrimExpr condition, Stmt then_case, Stmt else_case, Span span)
      : StmtNode(ObjectKind::kIfThenElse, std::move(span)),
        condition(std::move(condition)),
        then_case(std::move(then_case)),
        else_case(std::move(else_case)) {}
  const PrimExpr condition;
  const Stmt then_case;
  const Stmt else_case;  // may be null
};

class LetStmtNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kLetStmt; }
  LetStmtNode(Var var, PrimExpr value, Stmt body, Span span)
      : StmtNode(ObjectKind::kLetStmt, std::move(span)),
        var(std::move(var)),
        value(std::move(value)),
        body(std::move(body)) {}
  const Var var;
  const PrimExpr value;
  const Stmt body;
};

class SeqStmtNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kSeqStmt; }
  SeqStmtNode(std::vector<Stmt> seq, Span span)
      : StmtNode(ObjectKind::kSeqStmt, std::move(span)), seq(std::move(seq)) {}
  const std::vector<Stmt> seq;
};

class EvaluateNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kEvaluate; }
  EvaluateNode(PrimExpr value, Span span)
      : StmtNode(ObjectKind::kEvaluate, std::move(span)), value(std::move(value)) {}
  const PrimExpr value;
};

// A call of another PrimFunc of the module (a kernel) on buffers, in the
// callee's parameter order. The lowered main function is a sequence of these.
class CallKernelNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kCallKernel; }
  CallKernelNode(GlobalVar callee, std::vector<Buffer> args, Span span)
      : StmtNode(ObjectKind::kCallKernel, std::move(span)),
        callee(std::move(callee)),
        args(std::move(args)) {}
  const GlobalVar callee;
  const std::vector<Buffer> args;
};

// Ends the run with an error when `condition` is false: how main checks, before the kernels
// that rely on it, that an input deciding a shape holds the value the shapes were compiled
// for. The interpreter returns `message`; native code returns KILN_ERROR_SHAPE_MISMATCH.
class AssertNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kAssert; }
  AssertNode(PrimExpr condition, std::string message, Span span)
      : StmtNode(ObjectKind::kAssert, std::move(span)),
        condition(std::move(condition)),
        message(std::move(message)) {}
  const PrimExpr condition;
  const std::string message;
};

// while condition: body. The condition is evaluated before every iteration. Only main has
// these: a graph while_loop's kernel calls, run while its condition buffer holds true.
class WhileNode final : public StmtNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kWhile; }
  WhileNode(PrimExpr condition, Stmt body, Span span)
      : StmtNode(ObjectKind::kWhile, std::move(span)),
        condition(std::move(condition)),
        body(std::move(body)) {}
  const PrimExpr condition;
  const Stmt body;
};

Stmt MakeAssert(PrimExpr condition, std::string message, Span span = nullptr);
Stmt MakeWhile(PrimExpr condition, Stmt body, Span span = nullptr);
Stmt MakeFor(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
             Span span = nullptr);
Stmt MakeBufferStore(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices,
                     Span span = nullptr);
Stmt MakeAllocate(Var data, DataType dtype, int64_t extent, std::string scope, Stmt body,
                  Span span = nullptr);
// An Allocate of `extent` elements, static when it is a constant, else dynamic.
Stmt MakeAllocate(Var data, DataType dtype, PrimExpr extent, std::string scope, Stmt body,
                  Span span = nullptr);
// `op` around another body (every other field kept).
Stmt WithAllocateBody(const AllocateNode& op, Stmt body);
// `op` with other storage and body.
Stmt WithAllocateStorage(const AllocateNode& op, Var data, Stmt body);
Stmt MakeIfThenElse(PrimExpr condition, Stmt then_case, Stmt else_case = nullptr,
                    Span span = nullptr);
Stmt MakeLetStmt(Var var, PrimExpr value, Stmt body, Span span = nullptr);
// Flattens nested SeqStmts and drops nulls; one statement is returned as is,
// none gives an empty SeqStmt (a no-op).
Stmt MakeSeqStmt(std::vector<Stmt> seq, Span span = nullptr);
Stmt MakeEvaluate(PrimExpr value, Span span = nullptr);
Stmt MakeCallKernel(GlobalVar callee, std::vector<Buffer> args, Span span = nullptr);

// True for an Evaluate of an immediate or an empty SeqStmt.
bool IsNoOp(const Stmt& stmt);

}  // namespace kiln::loop
