// FunctionEmitter: the body of one loop-IR function (a kernel, or a parallel loop outlined from
// it) as LLVM IR. Expressions become scalar or vector values in their compute type (float16 and
// bfloat16 are held as float and rounded to their format after every operation, bool as i1);
// buffers are read and written in their storage type. The semantics are the interpreter's
// (engine/loop/interpreter_values.h), including the two that machines do not give for free:
// a Select or `&&`/`||` never evaluates the loads of the operand it does not take (scalar code
// branches, vector code masks the loads), and integer division by zero or INT_MIN / -1 never
// traps.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/codegen/llvm/module_context.h"
#include "engine/loop/stmt.h"
#include "llvm/IR/IRBuilder.h"

namespace kiln::codegen {

struct PrefetchPlan;  // weight_prefetch.h

class FunctionEmitter {
 public:
  // `scratch_offsets`: byte offsets into the function's scratch argument of the Allocates that
  // live there (the others become stack or heap memory); `in_parallel`: the function already runs
  // inside a parallel loop, so parallel loops in it run serially.
  FunctionEmitter(ModuleContext& module, llvm::Function* function,
                  const std::unordered_map<const loop::AllocateNode*, int64_t>* scratch_offsets,
                  llvm::Value* scratch, bool in_parallel);

  void Bind(const loop::VarNode* var, llvm::Value* value) { vars_[var] = value; }
  // Weights to fetch ahead (weight_prefetch.h), with the global of each of the plan's targets.
  void SetPrefetchPlan(const PrefetchPlan* plan, std::vector<llvm::Constant*> weights) {
    prefetch_ = plan;
    prefetch_weights_ = std::move(weights);
  }
  // With debug info: the function's subprogram (every instruction gets the line of the loop
  // statement it came from, in it).
  void SetSubprogram(llvm::DISubprogram* subprogram);
  // Emits `body` then `ret void`.
  void EmitBody(const loop::Stmt& body);

 private:
  // Statements (emit_stmt.cc).
  void EmitStmt(const loop::Stmt& stmt);
  void EmitFor(const loop::ForNode* op);
  void EmitSerialFor(const loop::ForNode* op, llvm::Value* begin, llvm::Value* end,
                     llvm::Value* offset);
  void EmitParallelFor(const loop::ForNode* op);
  void EmitStore(const loop::BufferStoreNode* op);
  void EmitAllocate(const loop::AllocateNode* op);
  void EmitIfThenElse(const loop::IfThenElseNode* op);
  // At the top of an iteration of the prefetch plan's host loop: its share of the targets
  // (weight_prefetch.cc).
  void EmitPrefetches();

  // Expressions (emit_expr.cc).
  llvm::Value* EmitExpr(const loop::PrimExpr& expr);
  llvm::Value* EmitBinary(const loop::BinaryNode* op);
  llvm::Value* EmitFloatBinary(loop::BinaryOp op, DataType dtype, llvm::Value* a, llvm::Value* b);
  llvm::Value* EmitIntBinary(loop::BinaryOp op, DataType dtype, llvm::Value* a, llvm::Value* b,
                             const loop::PrimExpr& divisor);
  llvm::Value* EmitLazyLogic(const loop::BinaryNode* op);
  llvm::Value* EmitSelect(const loop::SelectNode* op);
  llvm::Value* EmitCast(const loop::CastNode* op);
  // Casts to and from strings and the string intrinsics: libkiln_rt calls, one per lane.
  llvm::Value* EmitStringCast(DataType from, DataType to, llvm::Value* value);
  llvm::Value* EmitStringIntrinsic(loop::Intrinsic intrinsic, const std::vector<llvm::Value*>& args);
  llvm::Value* CallPerLane(llvm::FunctionCallee callee, llvm::Type* result,
                           const std::vector<llvm::Value*>& args);
  llvm::Value* EmitIntrinsic(const loop::IntrinsicCallNode* op);
  llvm::Value* EmitFloatMath(loop::Intrinsic intrinsic, DataType dtype,
                             const std::vector<llvm::Value*>& args);
  llvm::Value* EmitLoad(const loop::BufferLoadNode* op);
  llvm::Value* EmitRamp(const loop::RampNode* op);
  // A scalar or vector value of `type` from `then_value` or `else_value`, emitting only the one
  // `cond` (scalar) takes.
  llvm::Value* EmitBranchy(llvm::Value* cond, const std::function<llvm::Value*()>& then_value,
                           const std::function<llvm::Value*()>& else_value);

  // Buffer addressing: the element index into the buffer's storage (elem_offset and strides
  // applied), scalar or vector; and a pointer to element `index` of scalar index.
  llvm::Value* FlatIndex(const loop::Buffer& buffer, const std::vector<loop::PrimExpr>& indices);
  llvm::Value* ElementPointer(const loop::Buffer& buffer, llvm::Value* index);
  // When `indices` is one Ramp of stride 1: its base (the first element of a contiguous access).
  const loop::PrimExpr* ContiguousBase(const std::vector<loop::PrimExpr>& indices);
  // `access` (a load or store of `buffer`) with the buffer's alias scope (ModuleContext).
  llvm::Value* Tagged(llvm::Value* access, const loop::Buffer& buffer);
  // The constant stride (2..4) of a one-index Ramp, else 0: loaded as one span and a shuffle.
  int64_t SmallStride(const std::vector<loop::PrimExpr>& indices);

  // Conversions between compute and storage representations.
  llvm::Value* FromStorage(llvm::Value* stored, DataType dtype);
  llvm::Value* ToStorage(llvm::Value* value, DataType dtype);
  // float16/bfloat16 values are rounded to their format (others returned as they are).
  llvm::Value* RoundToFormat(llvm::Value* value, DataType dtype);
  // A double rounded to float with the sticky bit (round to odd), so a second rounding to a
  // narrower format is correct.
  llvm::Value* DoubleToFloatRoundToOdd(llvm::Value* value);

  // Instructions from here on carry `node`'s line (nothing when it has none).
  void LocateAt(const Object* node);

  llvm::Value* AllLanes(llvm::Value* mask_or_null, int lanes);
  llvm::Value* Splat(llvm::Value* scalar, int lanes);
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, int64_t align);

  ModuleContext& module_;
  llvm::Function* function_;
  llvm::IRBuilder<> b_;
  const std::unordered_map<const loop::AllocateNode*, int64_t>* scratch_offsets_;
  llvm::Value* scratch_;
  bool in_parallel_;
  llvm::DISubprogram* subprogram_ = nullptr;
  std::unordered_map<const loop::VarNode*, llvm::Value*> vars_;
  // The lanes of the vector expression being emitted that are taken (inside vector Selects and
  // `&&`/`||`); null when all are.
  llvm::Value* mask_ = nullptr;
  const PrefetchPlan* prefetch_ = nullptr;
  std::vector<llvm::Constant*> prefetch_weights_;
};

}  // namespace kiln::codegen
