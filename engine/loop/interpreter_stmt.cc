// The interpreter's statement nodes and their compilation, the function-level
// compile entry (parameters bound to storage slots) and execution.
#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/loop/buffer.h"
#include "engine/loop/interpreter_compiler.h"
#include "engine/support/status_macros.h"

namespace kiln::loop::interp {

namespace {

// Every statement charges its static cost (itself plus the expression nodes
// it evaluates) before running, and writes nothing once the run has failed.

template <typename T>
class ForStmt final : public CompiledStmt {
 public:
  ForStmt(int slot, const CompiledExpr* min, const CompiledExpr* extent, const CompiledStmt* body,
          int64_t cost)
      : slot_(slot), min_(min), extent_(extent), body_(body), cost_(cost) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    Scalar min = min_.Eval(frame);
    int64_t extent = extent_.Eval(frame).i;
    if (frame.state->failed()) return;
    for (int64_t k = 0; k < extent; ++k) {
      frame.vars[slot_] = T::Wrap(min.u + static_cast<uint64_t>(k));
      body_->Exec(frame);
      if (frame.state->failed() || !frame.state->Charge(1)) return;
    }
  }

 private:
  int slot_;
  Operand min_;
  Operand extent_;
  const CompiledStmt* body_;
  int64_t cost_;
};

// An innermost loop whose body runs in batches (see Batch). The body loads
// nothing from the storage it stores to, so iterations are independent; when
// the storages a run is given overlap (views into one workspace), the loop
// runs one iteration at a time.
template <typename T>
class BatchedForStmt final : public CompiledStmt {
 public:
  BatchedForStmt(int slot, const CompiledExpr* min, const CompiledExpr* extent,
                 const CompiledStmt* body, int64_t cost, BatchPlan plan)
      : slot_(slot), min_(min), extent_(extent), body_(body), cost_(cost),
        plan_(std::move(plan)) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    Scalar min = min_.Eval(frame);
    int64_t extent = extent_.Eval(frame).i;
    if (frame.state->failed()) return;
    int64_t k = 0;
    if (!StoreOverlapsLoads(frame)) {
      Batch batch;
      batch.loop_slot = slot_;
      for (; k < extent; k += batch.size) {
        batch.size = static_cast<int>(std::min<int64_t>(kBatchSize, extent - k));
        if (!frame.state->Charge(batch.size * (plan_.cost + 1))) return;
        for (int j = 0; j < batch.size; ++j) {
          batch.loop_values[j] = T::Wrap(min.u + static_cast<uint64_t>(k + j));
        }
        batch.consecutive = batch.loop_values[batch.size - 1].u - batch.loop_values[0].u ==
                            batch.size - 1;
        body_->ExecBatch(frame, batch);
        if (batch.failed) break;  // this batch again, one iteration at a time
      }
    }
    for (; k < extent; ++k) {
      frame.vars[slot_] = T::Wrap(min.u + static_cast<uint64_t>(k));
      body_->Exec(frame);
      if (frame.state->failed() || !frame.state->Charge(1)) return;
    }
  }

 private:
  bool StoreOverlapsLoads(const Frame& frame) const {
    const StorageView& store = frame.storages[plan_.store_slot];
    for (int slot : plan_.load_slots) {
      const StorageView& load = frame.storages[slot];
      if (load.data < store.data + store.bytes && store.data < load.data + load.bytes) {
        return true;
      }
    }
    return false;
  }

  int slot_;
  Operand min_;
  Operand extent_;
  const CompiledStmt* body_;
  int64_t cost_;
  BatchPlan plan_;
};

template <typename T>
class StoreStmt final : public CompiledStmt {
 public:
  StoreStmt(BufferAccess access, const CompiledExpr* value, int64_t cost,
            const BufferStoreNode* ir)
      : access_(std::move(access)), value_(value), cost_(cost), ir_(ir) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    Scalar value = value_.Eval(frame);
    int64_t flat = 0;
    bool ok = access_.Flat(frame, &flat);
    if (frame.state->failed()) return;
    const StorageView& storage = frame.storages[access_.storage_slot];
    if (!ok || flat < 0 || flat >= storage.bytes / T::kBytes) {
      access_.ReportOutOfBounds(frame, "store to", T::kBytes, ir_->span);
      return;
    }
    T::Store(storage.data + flat * T::kBytes, value);
  }

 private:
  BufferAccess access_;
  Operand value_;
  int64_t cost_;
  const BufferStoreNode* ir_;
};

// A store to a one-dimensional, unit-stride buffer.
template <typename T>
class FlatStoreStmt final : public CompiledStmt {
 public:
  FlatStoreStmt(BufferAccess access, const CompiledExpr* value, int64_t cost,
                const BufferStoreNode* ir)
      : access_(std::move(access)), index_(access_.dims[0].first), value_(value), cost_(cost),
        ir_(ir) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    Scalar value = value_.Eval(frame);
    int64_t index = index_.Eval(frame).i;
    if (frame.state->failed()) return;
    const StorageView& storage = frame.storages[access_.storage_slot];
    int64_t flat;
    if (__builtin_add_overflow(index, access_.offset, &flat) || flat < 0 ||
        flat >= storage.bytes / T::kBytes) {
      access_.ReportOutOfBounds(frame, "store to", T::kBytes, ir_->span);
      return;
    }
    T::Store(storage.data + flat * T::kBytes, value);
  }

  bool PlanBatch(int loop_slot, BatchPlan* plan) const override {
    (void)loop_slot;
    plan->store_slot = access_.storage_slot;
    plan->cost = cost_;
    return value_.CollectBatchLoads(kMaxBatchDepth, &plan->load_slots) &&
           index_.CollectBatchLoads(kMaxBatchDepth, &plan->load_slots) &&
           std::find(plan->load_slots.begin(), plan->load_slots.end(), plan->store_slot) ==
               plan->load_slots.end();
  }
  void ExecBatch(Frame& frame, Batch& batch) const override {
    Scalar values[kBatchSize];
    Scalar indices[kBatchSize];
    value_.EvalBatch(frame, batch, values);
    if (batch.failed) return;
    const StorageView& storage = frame.storages[access_.storage_slot];
    const int64_t size = storage.bytes / T::kBytes;
    int64_t first = BatchRange::Contiguous(batch, index_.IsVar(batch.loop_slot),
                                           access_.offset, size);
    if (first >= 0) {
      uint8_t* data = storage.data + first * T::kBytes;
      for (int k = 0; k < batch.size; ++k) T::Store(data + k * T::kBytes, values[k]);
      return;
    }
    index_.EvalBatch(frame, batch, indices);
    if (batch.failed) return;
    for (int k = 0; k < batch.size; ++k) {
      int64_t flat;
      if (__builtin_add_overflow(indices[k].i, access_.offset, &flat) || flat < 0 ||
          flat >= size) {
        batch.failed = true;
        return;
      }
      indices[k].i = flat;
    }
    for (int k = 0; k < batch.size; ++k) {
      T::Store(storage.data + indices[k].i * T::kBytes, values[k]);
    }
  }

 private:
  BufferAccess access_;
  Operand index_;
  Operand value_;
  int64_t cost_;
  const BufferStoreNode* ir_;
};

// A vector store: every lane's value and address are computed before any
// lane is written (a vector store reads its operands first), and nothing is
// written when any lane is out of bounds.
template <typename T>
class VectorStoreStmt final : public CompiledStmt {
 public:
  VectorStoreStmt(std::vector<BufferAccess> accesses, std::vector<Operand> values,
                  int64_t cost, const BufferStoreNode* ir)
      : accesses_(std::move(accesses)), values_(std::move(values)), cost_(cost), ir_(ir) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    const size_t lanes = values_.size();
    std::array<Scalar, kMaxLanes> values;
    std::array<int64_t, kMaxLanes> flats;
    std::array<bool, kMaxLanes> ok;
    for (size_t k = 0; k < lanes; ++k) values[k] = values_[k].Eval(frame);
    for (size_t k = 0; k < lanes; ++k) ok[k] = accesses_[k].Flat(frame, &flats[k]);
    if (frame.state->failed()) return;
    const StorageView& storage = frame.storages[accesses_[0].storage_slot];
    const int64_t limit = storage.bytes / T::kBytes;
    for (size_t k = 0; k < lanes; ++k) {
      if (!ok[k] || flats[k] < 0 || flats[k] >= limit) {
        accesses_[k].ReportOutOfBounds(frame, "store to", T::kBytes, ir_->span);
        return;
      }
    }
    for (size_t k = 0; k < lanes; ++k) T::Store(storage.data + flats[k] * T::kBytes, values[k]);
  }

 private:
  std::vector<BufferAccess> accesses_;
  std::vector<Operand> values_;
  int64_t cost_;
  const BufferStoreNode* ir_;
};

class AllocateStmt final : public CompiledStmt {
 public:
  // `extent` (elements) is evaluated when the statement runs for a dynamic allocation; static
  // ones pass null and their byte count.
  AllocateStmt(int slot, int64_t bytes, const CompiledExpr* extent, const CompiledStmt* body,
               const AllocateNode* ir)
      : slot_(slot), bytes_(bytes), dynamic_(extent != nullptr), extent_(extent), body_(body),
        ir_(ir) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(1)) return;
    int64_t bytes = bytes_;
    if (dynamic_) {
      int64_t extent = extent_.Eval(frame).i;
      if (frame.state->failed()) return;
      if (extent < 0 || __builtin_mul_overflow(extent, DataTypeBytes(ir_->dtype), &bytes)) {
        frame.state->Fail(absl::InvalidArgumentError(absl::StrCat(
            "allocation '", ir_->data->name, "' of ", extent, " elements is invalid")));
        return;
      }
    }
    // Charged before it is allocated: a run-time size is checked against the budget here.
    if (!frame.state->ReserveAllocation(bytes, ir_->data->name)) return;
    // Value-initialized: zero-filled.
    std::unique_ptr<uint8_t[]> memory(new uint8_t[static_cast<size_t>(bytes)]());
    StorageView saved = frame.storages[slot_];
    frame.storages[slot_] = StorageView{memory.get(), bytes};
    body_->Exec(frame);
    frame.storages[slot_] = saved;
    frame.state->ReleaseAllocation(bytes);
  }

 private:
  int slot_;
  int64_t bytes_;
  bool dynamic_;
  Operand extent_;
  const CompiledStmt* body_;
  const AllocateNode* ir_;
};

class IfStmt final : public CompiledStmt {
 public:
  IfStmt(const CompiledExpr* cond, const CompiledStmt* then_case, const CompiledStmt* else_case,
         int64_t cost)
      : cond_(cond), then_(then_case), else_(else_case), cost_(cost) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    bool cond = cond_.Eval(frame).u != 0;
    if (frame.state->failed()) return;
    if (cond) {
      then_->Exec(frame);
    } else if (else_ != nullptr) {
      else_->Exec(frame);
    }
  }

 private:
  Operand cond_;
  const CompiledStmt* then_;
  const CompiledStmt* else_;  // may be null
  int64_t cost_;
};

// Every iteration is charged to the run's step budget, so a loop whose condition never turns
// false ends with the budget's error (or when the run is cancelled), not a hang.
class WhileStmt final : public CompiledStmt {
 public:
  WhileStmt(const CompiledExpr* cond, const CompiledStmt* body, int64_t cost)
      : cond_(cond), body_(body), cost_(cost) {}
  void Exec(Frame& frame) const override {
    while (frame.state->Charge(cost_)) {
      bool cond = cond_.Eval(frame).u != 0;
      if (frame.state->failed() || !cond) return;
      body_->Exec(frame);
      if (frame.state->failed()) return;
    }
  }

 private:
  Operand cond_;
  const CompiledStmt* body_;
  int64_t cost_;
};

// A failed assertion is the run's error: the message names the check.
class AssertStmt final : public CompiledStmt {
 public:
  AssertStmt(const CompiledExpr* cond, std::string message, int64_t cost)
      : cond_(cond), message_(std::move(message)), cost_(cost) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    bool cond = cond_.Eval(frame).u != 0;
    if (frame.state->failed() || cond) return;
    frame.state->Fail(absl::InvalidArgumentError(message_));
  }

 private:
  Operand cond_;
  std::string message_;
  int64_t cost_;
};

class LetStmt final : public CompiledStmt {
 public:
  LetStmt(int slot, std::vector<Operand> values, const CompiledStmt* body,
          int64_t cost)
      : slot_(slot), values_(std::move(values)), body_(body), cost_(cost) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    for (size_t k = 0; k < values_.size(); ++k) frame.vars[slot_ + k] = values_[k].Eval(frame);
    if (frame.state->failed()) return;
    body_->Exec(frame);
  }

 private:
  int slot_;
  std::vector<Operand> values_;  // one per lane
  const CompiledStmt* body_;
  int64_t cost_;
};

class SeqStmt final : public CompiledStmt {
 public:
  explicit SeqStmt(std::vector<const CompiledStmt*> seq) : seq_(std::move(seq)) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(1)) return;
    for (const CompiledStmt* stmt : seq_) {
      stmt->Exec(frame);
      if (frame.state->failed()) return;
    }
  }

 private:
  std::vector<const CompiledStmt*> seq_;
};

class EvaluateStmt final : public CompiledStmt {
 public:
  EvaluateStmt(std::vector<Operand> lanes, int64_t cost)
      : lanes_(std::move(lanes)), cost_(cost) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(cost_)) return;
    for (const Operand& lane : lanes_) lane.Eval(frame);
  }

 private:
  std::vector<Operand> lanes_;
  int64_t cost_;
};

class CallKernelStmt final : public CompiledStmt {
 public:
  struct Arg {
    const BufferNode* buffer;
    int storage_slot;
    int64_t elem_offset;
    int64_t num_elements;
    int64_t elem_bytes;
  };
  CallKernelStmt(const CompiledFunc* callee, std::vector<Arg> args, const CallKernelNode* ir)
      : callee_(callee), args_(std::move(args)), ir_(ir) {}
  void Exec(Frame& frame) const override {
    if (!frame.state->Charge(1)) return;
    std::vector<StorageView> views;
    views.reserve(args_.size());
    for (const Arg& arg : args_) {
      const StorageView& storage = frame.storages[arg.storage_slot];
      int64_t available = storage.bytes / arg.elem_bytes;
      // Compile-time checks make elem_offset non-negative; num_elements is -1 for a symbolic
      // buffer: the rest of its storage, which the run sized.
      int64_t num_elements = arg.num_elements < 0 ? available - arg.elem_offset : arg.num_elements;
      if (arg.elem_offset > available || num_elements > available - arg.elem_offset) {
        frame.state->Fail(absl::OutOfRangeError(absl::StrCat(
            "kernel call of '", callee_->name, "': argument buffer '", arg.buffer->name,
            "' views elements [", arg.elem_offset, ", ", arg.elem_offset + num_elements,
            ") of storage '", arg.buffer->data->name, "', which holds ", available, " ",
            DataTypeName(arg.buffer->dtype), " elements", DescribeSpan(ir_->span))));
        return;
      }
      views.push_back(StorageView{storage.data + arg.elem_offset * arg.elem_bytes,
                                  num_elements * arg.elem_bytes});
    }
    ExecuteCompiled(*callee_, views, frame.state);
  }

 private:
  const CompiledFunc* callee_;
  std::vector<Arg> args_;
  const CallKernelNode* ir_;
};

absl::Status Invalid(const Span& span, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(message, DescribeSpan(span)));
}

bool IsDense(const BufferNode& buffer) {
  if (buffer.strides.empty()) return true;
  std::vector<int64_t> dense = MakeBufferView("", buffer.data, buffer.dtype, buffer.shape)
                                   ->EffectiveStrides();
  return dense == buffer.strides;
}

bool IsIntegerType(const PrimType& type) {
  return type.lanes == 1 && !IsFloat(type.dtype) && type.dtype != DataType::kBool;
}

}  // namespace

absl::StatusOr<const CompiledStmt*> Compiler::CompileStmt(const Stmt& stmt) {
  // Scopes change between statements only, so compiled lanes are shared
  // within one statement's expressions.
  memo_.clear();
  switch (stmt->kind()) {
    case ObjectKind::kFor: return CompileFor(stmt.as<ForNode>());
    case ObjectKind::kBufferStore: return CompileStore(stmt.as<BufferStoreNode>());
    case ObjectKind::kAllocate: return CompileAllocate(stmt.as<AllocateNode>());
    case ObjectKind::kIfThenElse: return CompileIf(stmt.as<IfThenElseNode>());
    case ObjectKind::kLetStmt: return CompileLet(stmt.as<LetStmtNode>());
    case ObjectKind::kSeqStmt: return CompileSeq(stmt.as<SeqStmtNode>());
    case ObjectKind::kEvaluate: return CompileEvaluate(stmt.as<EvaluateNode>());
    case ObjectKind::kCallKernel: return CompileCallKernel(stmt.as<CallKernelNode>());
    case ObjectKind::kAssert: return CompileAssert(stmt.as<AssertNode>());
    case ObjectKind::kWhile: return CompileWhile(stmt.as<WhileNode>());
    default:
      return Invalid(stmt->span,
                     absl::StrCat("unknown statement kind ", ObjectKindName(stmt->kind())));
  }
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileFor(const ForNode* op) {
  if (!IsIntegerType(op->loop_var->type)) {
    return Invalid(op->span, absl::StrCat("loop variable '", op->loop_var->name, "' is ",
                                          PrimTypeName(op->loop_var->type),
                                          ", not a scalar integer"));
  }
  KILN_ASSIGN_OR_RETURN(Compiled min, CompileScalar(op->min, "loop minimum"));
  KILN_ASSIGN_OR_RETURN(Compiled extent, CompileScalar(op->extent, "loop extent"));
  if (!IsIntegerType(op->min->type) || !IsIntegerType(op->extent->type)) {
    return Invalid(op->span, absl::StrCat("the bounds of loop '", op->loop_var->name,
                                          "' are not integers"));
  }
  int64_t cost = AddCost(AddCost(min.cost, extent.cost), 1);
  int slot = NewVarSlots(1);
  VarScope scope(&vars_, op->loop_var.get(), VarSlot{slot, 1});
  KILN_ASSIGN_OR_RETURN(const CompiledStmt* body, CompileStmt(op->body));
  return VisitDataType(op->loop_var->type.dtype, [&](auto traits) -> const CompiledStmt* {
    using T = decltype(traits);
    if constexpr (T::kFloat || T::kBool) {
      return nullptr;  // rejected above
    } else {
      BatchPlan plan;
      if (body->PlanBatch(slot, &plan)) {
        return New<BatchedForStmt<T>>(slot, min.node, extent.node, body, cost, std::move(plan));
      }
      return New<ForStmt<T>>(slot, min.node, extent.node, body, cost);
    }
  });
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileStore(const BufferStoreNode* op) {
  const Buffer& buffer = op->buffer;
  const PrimType value_type = op->value->type;
  if (value_type.dtype != buffer->dtype) {
    return Invalid(op->span, absl::StrCat("storing ", PrimTypeName(value_type), " into ",
                                          DataTypeName(buffer->dtype), " buffer '",
                                          buffer->name, "'"));
  }
  int lanes = value_type.lanes;
  for (const PrimExpr& index : op->indices) {
    int index_lanes = index->type.lanes;
    if (index_lanes == 1) continue;
    if (lanes == 1) lanes = index_lanes;  // a scalar stored to every lane's address
    if (index_lanes != lanes) {
      return Invalid(op->span, absl::StrCat("store to buffer '", buffer->name, "' mixes ",
                                            lanes, "-lane and ", index_lanes, "-lane values"));
    }
  }
  bool vector_index = false;
  for (const PrimExpr& index : op->indices) vector_index |= index->type.lanes > 1;
  if (lanes > 1 && !vector_index) {
    return Invalid(op->span, absl::StrCat("store of a ", lanes, "-lane value to buffer '",
                                          buffer->name, "' at a scalar index"));
  }
  if (lanes > kMaxLanes) {
    return Invalid(op->span, absl::StrCat("vectors of ", lanes, " lanes are not supported"));
  }
  int64_t cost = 1;
  if (lanes == 1) {
    KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(op->value, 0));
    cost = AddCost(cost, value.cost);
    KILN_ASSIGN_OR_RETURN(BufferAccess access, CompileAccess(buffer, op->indices, 0, &cost));
    MarkStored(access.storage_slot);
    bool flat = access.is_unit_stride();
    return VisitDataType(buffer->dtype, [&](auto traits) -> const CompiledStmt* {
      using T = decltype(traits);
      if (flat) return New<FlatStoreStmt<T>>(std::move(access), value.node, cost, op);
      return New<StoreStmt<T>>(std::move(access), value.node, cost, op);
    });
  }
  std::vector<BufferAccess> accesses;
  std::vector<Operand> values;
  for (int k = 0; k < lanes; ++k) {
    KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(op->value, k));
    cost = AddCost(cost, value.cost);
    values.push_back(value.node);
    KILN_ASSIGN_OR_RETURN(BufferAccess access, CompileAccess(buffer, op->indices, k, &cost));
    access.lane = k;
    MarkStored(access.storage_slot);
    accesses.push_back(std::move(access));
  }
  return VisitDataType(buffer->dtype, [&](auto traits) -> const CompiledStmt* {
    return New<VectorStoreStmt<decltype(traits)>>(std::move(accesses), std::move(values), cost,
                                                  op);
  });
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileAllocate(const AllocateNode* op) {
  int64_t bytes = 0;
  const CompiledExpr* extent = nullptr;
  if (op->is_dynamic()) {
    if (op->dynamic_extent->type != kIndexType) {
      return Invalid(op->span, absl::StrCat("the extent of allocation '", op->data->name,
                                            "' is not an int64 scalar"));
    }
    KILN_ASSIGN_OR_RETURN(Compiled compiled, CompileScalar(op->dynamic_extent, "allocation extent"));
    extent = compiled.node;
  } else if (op->extent < 0 ||
             __builtin_mul_overflow(op->extent, DataTypeBytes(op->dtype), &bytes)) {
    return Invalid(op->span, absl::StrCat("allocation '", op->data->name, "' of ", op->extent,
                                          " elements is invalid"));
  }
  int slot = NewStorageSlot();
  StorageScope scope(&storages_, op->data.get(), slot);
  KILN_ASSIGN_OR_RETURN(const CompiledStmt* body, CompileStmt(op->body));
  return New<AllocateStmt>(slot, bytes, extent, body, op);
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileIf(const IfThenElseNode* op) {
  if (op->condition->type.lanes != 1) {
    return Invalid(op->span, "the condition of an if statement must be a scalar");
  }
  KILN_ASSIGN_OR_RETURN(Compiled cond, CompileBool(op->condition, 0));
  KILN_ASSIGN_OR_RETURN(const CompiledStmt* then_case, CompileStmt(op->then_case));
  const CompiledStmt* else_case = nullptr;
  if (op->else_case.defined()) {
    KILN_ASSIGN_OR_RETURN(else_case, CompileStmt(op->else_case));
  }
  return New<IfStmt>(cond.node, then_case, else_case, AddCost(cond.cost, 1));
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileAssert(const AssertNode* op) {
  if (op->condition->type.lanes != 1) {
    return Invalid(op->span, "the condition of an assert must be a scalar");
  }
  KILN_ASSIGN_OR_RETURN(Compiled cond, CompileBool(op->condition, 0));
  return New<AssertStmt>(cond.node, op->message, AddCost(cond.cost, 1));
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileWhile(const WhileNode* op) {
  if (op->condition->type.lanes != 1) {
    return Invalid(op->span, "the condition of a while loop must be a scalar");
  }
  KILN_ASSIGN_OR_RETURN(Compiled cond, CompileBool(op->condition, 0));
  KILN_ASSIGN_OR_RETURN(const CompiledStmt* body, CompileStmt(op->body));
  return New<WhileStmt>(cond.node, body, AddCost(cond.cost, 1));
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileLet(const LetStmtNode* op) {
  if (!(op->var->type == op->value->type)) {
    return Invalid(op->span, absl::StrCat("let '", op->var->name, "' of type ",
                                          PrimTypeName(op->var->type), " is bound to a ",
                                          PrimTypeName(op->value->type), " value"));
  }
  const int lanes = op->value->type.lanes;
  std::vector<Operand> values;
  int64_t cost = 1;
  for (int k = 0; k < lanes; ++k) {
    KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(op->value, k));
    values.push_back(value.node);
    cost = AddCost(cost, value.cost);
  }
  int slot = NewVarSlots(lanes);
  VarScope scope(&vars_, op->var.get(), VarSlot{slot, lanes});
  KILN_ASSIGN_OR_RETURN(const CompiledStmt* body, CompileStmt(op->body));
  return New<LetStmt>(slot, std::move(values), body, cost);
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileSeq(const SeqStmtNode* op) {
  std::vector<const CompiledStmt*> seq;
  seq.reserve(op->seq.size());
  for (const Stmt& stmt : op->seq) {
    KILN_ASSIGN_OR_RETURN(const CompiledStmt* compiled, CompileStmt(stmt));
    seq.push_back(compiled);
  }
  return New<SeqStmt>(std::move(seq));
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileEvaluate(const EvaluateNode* op) {
  std::vector<Operand> lanes;
  int64_t cost = 1;
  for (int k = 0; k < op->value->type.lanes; ++k) {
    KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(op->value, k));
    lanes.push_back(value.node);
    cost = AddCost(cost, value.cost);
  }
  return New<EvaluateStmt>(std::move(lanes), cost);
}

absl::StatusOr<const CompiledStmt*> Compiler::CompileCallKernel(const CallKernelNode* op) {
  const std::string& callee_name = op->callee->name_hint;
  if (!resolve_kernel_) {
    return Invalid(op->span, absl::StrCat("kernel call of '", callee_name,
                                          "' needs a module (run it with RunModuleFunction)"));
  }
  KILN_ASSIGN_OR_RETURN(const CompiledFunc* callee, resolve_kernel_(*op));
  const PrimFuncNode& callee_func = *callee->func;
  if (op->args.size() != callee_func.params.size()) {
    return Invalid(op->span, absl::StrCat("kernel '", callee_name, "' takes ",
                                          callee_func.params.size(), " buffers, the call passes ",
                                          op->args.size()));
  }
  std::vector<CallKernelStmt::Arg> args;
  for (size_t i = 0; i < op->args.size(); ++i) {
    const Buffer& arg = op->args[i];
    const Buffer& param = callee_func.param_buffer(i);
    auto storage = storages_.find(arg->data.get());
    if (storage == storages_.end()) {
      return Invalid(op->span, absl::StrCat("kernel call of '", callee_name, "': buffer '",
                                            arg->name, "' views storage '", arg->data->name,
                                            "', which is neither a parameter nor allocated "
                                            "in scope"));
    }
    const bool symbolic = arg->is_symbolic() || param->is_symbolic();
    if (symbolic && (arg->dtype != param->dtype || arg->shape.size() != param->shape.size())) {
      return Invalid(op->span, absl::StrCat("kernel call of '", callee_name, "': parameter '",
                                            param->name, "' takes a ",
                                            DataTypeName(param->dtype), " tensor of rank ",
                                            param->shape.size(), ", the call passes '", arg->name,
                                            "'"));
    }
    if (!symbolic &&
        (arg->dtype != param->dtype || arg->NumElements() != param->NumElements())) {
      return Invalid(op->span,
                     absl::StrCat("kernel call of '", callee_name, "': parameter '", param->name,
                                  "' takes ", param->NumElements(), " ",
                                  DataTypeName(param->dtype), " elements, the call passes '",
                                  arg->name, "' with ", arg->NumElements(), " ",
                                  DataTypeName(arg->dtype), " elements"));
    }
    if (!IsDense(*arg) || arg->elem_offset < 0) {
      return Invalid(op->span, absl::StrCat("kernel call of '", callee_name, "': buffer '",
                                            arg->name, "' is not a dense view"));
    }
    args.push_back(CallKernelStmt::Arg{arg.get(), storage->second, arg->elem_offset,
                                       symbolic ? -1 : arg->NumElements(),
                                       DataTypeBytes(arg->dtype)});
  }
  return New<CallKernelStmt>(callee, std::move(args), op);
}

absl::Status Compiler::CompileBody() {
  const PrimFuncNode& func = *out_->func;
  if (func.buffer_map.size() != func.params.size()) {
    return Invalid(func.span, "the buffer map does not have one buffer per parameter");
  }
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Var& param = func.params[i];
    const Buffer& buffer = func.param_buffer(i);
    if (!func.buffer_map[i].first.same_as(param) || !buffer->data.same_as(param)) {
      return Invalid(func.span, absl::StrCat("parameter buffer '", buffer->name,
                                             "' does not view parameter '", param->name, "'"));
    }
    if (!storages_.emplace(param.get(), static_cast<int>(i)).second) {
      return Invalid(func.span, absl::StrCat("parameter '", param->name, "' appears twice"));
    }
  }
  KILN_ASSIGN_OR_RETURN(out_->body, CompileStmt(func.body));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CompiledFunc>> CompilePrimFunc(
    const PrimFunc& func, std::string name, const KernelResolver& resolve_kernel) {
  auto compiled = std::make_unique<CompiledFunc>();
  compiled->name = std::move(name);
  compiled->func = func;
  compiled->num_storage_slots = static_cast<int>(func->params.size());
  Compiler compiler(compiled.get(), resolve_kernel);
  absl::Status status = compiler.CompileBody();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("in function '", compiled->name, "': ",
                                                    std::string(status.message())));
  }
  return compiled;
}

void ExecuteCompiled(const CompiledFunc& func, const std::vector<StorageView>& param_storages,
                     ExecState* state) {
  KILN_CHECK(param_storages.size() == func.func->params.size())
      << "running '" << func.name << "' with " << param_storages.size() << " storages";
  std::vector<StorageView> storages(static_cast<size_t>(func.num_storage_slots));
  std::copy(param_storages.begin(), param_storages.end(), storages.begin());
  std::vector<Scalar> vars(static_cast<size_t>(func.num_var_slots));
  Frame frame{vars.data(), storages.data(), state};
  const std::string* caller = state->EnterFunction(&func.name);
  func.body->Exec(frame);
  state->LeaveFunction(caller);
}

}  // namespace kiln::loop::interp
