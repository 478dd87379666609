// FunctionEmitter, statements and memory: loops (serial with llvm.loop metadata, parallel
// outlined into a closure that libkiln_rt's kiln_rt_parallel_for runs), stores, loads
// (contiguous vectors, gathers, masked under vector Selects), Allocates and branches.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/function_emitter.h"
#include "engine/codegen/llvm/weight_prefetch.h"
#include "engine/loop/functor.h"
#include "engine/support/check.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

namespace kiln::codegen {
namespace {

// Allocates up to this size inside a parallel loop live on the worker's stack; larger ones on
// the heap (kiln_rt_alloc).
constexpr int64_t kMaxStackAllocateBytes = 256 * 1024;

int Lanes(llvm::Type* type) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) return vector->getNumElements();
  return 1;
}

// Loops around at least this many stores are kept rolled (see EmitSerialFor).
constexpr int64_t kMinStoresKeptRolled = 8;

// Whether `body` holds at least `limit` stores (counting stops there).
bool HasAtLeastStores(const loop::Stmt& body, int64_t limit) {
  class Counter final : public loop::StmtExprVisitor {
   public:
    explicit Counter(int64_t limit) : limit_(limit) {}
    void VisitStmt(const loop::Stmt& stmt) override {
      if (count < limit_) loop::StmtExprVisitor::VisitStmt(stmt);
    }
    void VisitExpr(const loop::PrimExpr&) override {}  // expressions hold no stores
    int64_t count = 0;

   protected:
    void VisitBufferStore_(const loop::BufferStoreNode*) override { ++count; }

   private:
    int64_t limit_;
  };
  Counter counter(limit);
  counter.VisitStmt(body);
  return counter.count >= limit;
}

}  // namespace

FunctionEmitter::FunctionEmitter(
    ModuleContext& module, llvm::Function* function,
    const std::unordered_map<const loop::AllocateNode*, int64_t>* scratch_offsets,
    llvm::Value* scratch, bool in_parallel)
    : module_(module),
      function_(function),
      b_(llvm::BasicBlock::Create(module.context(), "entry", function)),
      scratch_offsets_(scratch_offsets),
      scratch_(scratch),
      in_parallel_(in_parallel) {
  if (module.fast_math) {
    llvm::FastMathFlags flags;
    flags.setFast();
    b_.setFastMathFlags(flags);
  }
}

void FunctionEmitter::SetSubprogram(llvm::DISubprogram* subprogram) {
  subprogram_ = subprogram;
  if (subprogram_ != nullptr) {
    b_.SetCurrentDebugLocation(
        llvm::DILocation::get(module_.context(), subprogram_->getLine(), 0, subprogram_));
  }
}

void FunctionEmitter::LocateAt(const Object* node) {
  if (subprogram_ == nullptr) return;
  int line = module_.LineOf(node);
  if (line > 0) b_.SetCurrentDebugLocation(llvm::DILocation::get(module_.context(), line, 0, subprogram_));
}

void FunctionEmitter::EmitBody(const loop::Stmt& body) {
  EmitStmt(body);
  b_.CreateRetVoid();
}

llvm::AllocaInst* FunctionEmitter::EntryAlloca(llvm::Type* type, int64_t align) {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> entry_builder(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst* slot = entry_builder.CreateAlloca(type);
  slot->setAlignment(llvm::Align(align));
  return slot;
}

void FunctionEmitter::EmitStmt(const loop::Stmt& stmt) {
  LocateAt(stmt.get());
  switch (stmt->kind()) {
    case ObjectKind::kFor: return EmitFor(stmt.as<loop::ForNode>());
    case ObjectKind::kBufferStore: return EmitStore(stmt.as<loop::BufferStoreNode>());
    case ObjectKind::kAllocate: return EmitAllocate(stmt.as<loop::AllocateNode>());
    case ObjectKind::kIfThenElse: return EmitIfThenElse(stmt.as<loop::IfThenElseNode>());
    case ObjectKind::kLetStmt: {
      const auto* op = stmt.as<loop::LetStmtNode>();
      vars_[op->var.get()] = EmitExpr(op->value);
      return EmitStmt(op->body);
    }
    case ObjectKind::kSeqStmt:
      for (const loop::Stmt& s : stmt.as<loop::SeqStmtNode>()->seq) EmitStmt(s);
      return;
    case ObjectKind::kEvaluate: return;  // loop expressions have no side effects
    default: break;
  }
  KILN_UNREACHABLE() << "statement kind " << ObjectKindName(stmt->kind())
                     << " in a kernel (CheckSupported lets none through)";
}

void FunctionEmitter::EmitFor(const loop::ForNode* op) {
  if (op->for_kind == loop::ForKind::kParallel && !in_parallel_) return EmitParallelFor(op);
  llvm::Value* min = EmitExpr(op->min);
  llvm::Value* extent = EmitExpr(op->extent);
  llvm::Value* zero = llvm::ConstantInt::get(extent->getType(), 0);
  EmitSerialFor(op, zero, extent, min);
}

// for i in [begin, end): loop_var = offset + i; body
void FunctionEmitter::EmitSerialFor(const loop::ForNode* op, llvm::Value* begin, llvm::Value* end,
                                    llvm::Value* offset) {
  llvm::LLVMContext& context = module_.context();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context, "for.header", function_);
  auto* body = llvm::BasicBlock::Create(context, "for.body", function_);
  auto* exit = llvm::BasicBlock::Create(context, "for.end", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(begin->getType(), 2, op->loop_var->name);
  i->addIncoming(begin, preheader);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body, exit);
  b_.SetInsertPoint(body);
  vars_[op->loop_var.get()] = b_.CreateAdd(offset, i, op->loop_var->name);
  if (prefetch_ != nullptr && prefetch_->host == op) EmitPrefetches();
  EmitStmt(op->body);
  LocateAt(op);  // the increment and back edge are the loop's own
  llvm::Value* next = b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1));
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateBr(header);
  // llvm.loop metadata: every loop makes progress; an `unroll` loop asks to be unrolled fully,
  // a `vectorized` one the schedule could not vectorize asks LLVM's vectorizer to try. A loop
  // around many stores (an unrolled register tile of a convolution, matmul or pooling, or the
  // reduce loops around one) is kept rolled, and LLVM's vectorizer does not interleave it: the
  // schedule unrolled what pays there (default_schedule.cc unrolls a convolution's innermost
  // reduce steps), and LLVM copying such bodies again costs compile time for no speed
  // (ResNet-50: 1.34x the compile time, within 2% of the run time; the encoder's matmuls
  // within 2%). Loops around fewer stores (elementwise rows, small tiles) are left to LLVM's
  // heuristics, which pay there (MobileNetV3 x1.05 slower with the limit at 4 stores).
  std::vector<llvm::Metadata*> properties = {nullptr};
  properties.push_back(llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.mustprogress")));
  if (op->for_kind == loop::ForKind::kUnrolled) {
    properties.push_back(
        llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.full")));
  } else if (HasAtLeastStores(op->body, kMinStoresKeptRolled)) {
    properties.push_back(
        llvm::MDNode::get(context, llvm::MDString::get(context, "llvm.loop.unroll.disable")));
  }
  if (op->for_kind == loop::ForKind::kVectorized) {
    properties.push_back(llvm::MDNode::get(
        context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(context))}));
  }
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context, properties);
  loop_id->replaceOperandWith(0, loop_id);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  b_.SetInsertPoint(exit);
  vars_.erase(op->loop_var.get());
}

void FunctionEmitter::EmitParallelFor(const loop::ForNode* op) {
  // The variables the loop reads that are bound here (loop variables, lets, buffer storage) are
  // captured in a closure struct, in order of first use so the output is deterministic.
  std::vector<const loop::VarNode*> captured;
  std::set<const loop::VarNode*> seen;
  auto capture = [&](const loop::VarNode* var) {
    if (vars_.count(var) != 0 && seen.insert(var).second) captured.push_back(var);
  };
  loop::PreOrderVisit(op->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kLoopVar) capture(static_cast<const loop::VarNode*>(node));
    if (node->kind() == ObjectKind::kBufferLoad) {
      capture(static_cast<const loop::BufferLoadNode*>(node)->buffer->data.get());
    }
    if (node->kind() == ObjectKind::kBufferStore) {
      capture(static_cast<const loop::BufferStoreNode*>(node)->buffer->data.get());
    }
  });
  llvm::Value* min = EmitExpr(op->min);
  llvm::Value* extent = EmitExpr(op->extent);
  std::vector<llvm::Type*> field_types = {min->getType()};
  for (const loop::VarNode* var : captured) field_types.push_back(vars_.at(var)->getType());
  llvm::StructType* closure_type = llvm::StructType::get(module_.context(), field_types);

  llvm::LLVMContext& context = module_.context();
  auto* i64 = llvm::Type::getInt64Ty(context);
  auto* ptr = llvm::PointerType::getUnqual(context);
  auto* body_type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {i64, i64, ptr}, false);
  llvm::Function* body = llvm::Function::Create(
      body_type, llvm::Function::InternalLinkage,
      module_.OutlinedName(std::string(function_->getName())), module_.module);
  body->setDoesNotThrow();
  body->addParamAttr(2, llvm::Attribute::NoAlias);
  body->addParamAttr(2, llvm::Attribute::ReadOnly);

  // The caller: fill the closure, run the loop on the pool.
  llvm::AllocaInst* closure = EntryAlloca(closure_type, 8);
  b_.CreateStore(min, b_.CreateStructGEP(closure_type, closure, 0));
  for (size_t i = 0; i < captured.size(); ++i) {
    b_.CreateStore(vars_.at(captured[i]),
                   b_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(i + 1)));
  }
  b_.CreateCall(module_.ParallelFor(), {b_.CreateSExtOrTrunc(extent, i64), body, closure});

  // The outlined body: unpack the closure, run iterations [begin, end).
  FunctionEmitter inner(module_, body, nullptr, nullptr, /*in_parallel=*/true);
  inner.prefetch_ = prefetch_;
  inner.prefetch_weights_ = prefetch_weights_;
  inner.SetSubprogram(module_.AttachSubprogram(body, module_.LineOf(op)));
  inner.LocateAt(op);
  llvm::Value* inner_closure = body->getArg(2);
  llvm::Value* inner_min = inner.b_.CreateLoad(
      field_types[0], inner.b_.CreateStructGEP(closure_type, inner_closure, 0), "min");
  for (size_t i = 0; i < captured.size(); ++i) {
    llvm::Value* field = inner.b_.CreateStructGEP(closure_type, inner_closure,
                                                  static_cast<unsigned>(i + 1));
    inner.vars_[captured[i]] =
        inner.b_.CreateLoad(field_types[i + 1], field, captured[i]->name);
  }
  llvm::Value* begin = inner.b_.CreateSExtOrTrunc(body->getArg(0), min->getType());
  llvm::Value* end = inner.b_.CreateSExtOrTrunc(body->getArg(1), min->getType());
  inner.EmitSerialFor(op, begin, end, inner_min);
  inner.b_.CreateRetVoid();
}

void FunctionEmitter::EmitAllocate(const loop::AllocateNode* op) {
  int64_t bytes = std::max<int64_t>(1, op->extent * DataTypeBytes(op->dtype));
  llvm::Value* storage = nullptr;
  llvm::Value* heap = nullptr;
  const int64_t* scratch_offset = nullptr;
  if (scratch_offsets_ != nullptr) {
    auto it = scratch_offsets_->find(op);
    if (it != scratch_offsets_->end()) scratch_offset = &it->second;
  }
  if (scratch_offset != nullptr) {
    storage = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch_, *scratch_offset,
                                            op->data->name);
  } else if (bytes <= kMaxStackAllocateBytes) {
    storage = EntryAlloca(llvm::ArrayType::get(b_.getInt8Ty(), bytes), 64);
  } else {
    heap = b_.CreateCall(module_.Alloc(), {b_.getInt64(bytes)}, op->data->name);
    storage = heap;
  }
  // The interpreter zero-fills new storage; programs may read what they did not write (the
  // padding of a reduction), so native code does too.
  b_.CreateMemSet(storage, b_.getInt8(0), bytes, llvm::MaybeAlign(64));
  vars_[op->data.get()] = storage;
  EmitStmt(op->body);
  if (heap != nullptr) b_.CreateCall(module_.Free(), {heap});
  vars_.erase(op->data.get());
}

void FunctionEmitter::EmitIfThenElse(const loop::IfThenElseNode* op) {
  llvm::LLVMContext& context = module_.context();
  llvm::Value* cond = EmitExpr(op->condition);
  auto* then_block = llvm::BasicBlock::Create(context, "if.then", function_);
  auto* merge_block = llvm::BasicBlock::Create(context, "if.end", function_);
  auto* else_block =
      op->else_case ? llvm::BasicBlock::Create(context, "if.else", function_) : merge_block;
  b_.CreateCondBr(cond, then_block, else_block);
  b_.SetInsertPoint(then_block);
  EmitStmt(op->then_case);
  b_.CreateBr(merge_block);
  if (op->else_case) {
    b_.SetInsertPoint(else_block);
    EmitStmt(op->else_case);
    b_.CreateBr(merge_block);
  }
  b_.SetInsertPoint(merge_block);
}

llvm::Value* FunctionEmitter::FlatIndex(const loop::Buffer& buffer,
                                        const std::vector<loop::PrimExpr>& indices) {
  std::vector<int64_t> strides = buffer->EffectiveStrides();
  llvm::Value* index = nullptr;
  int lanes = 1;
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* term = EmitExpr(indices[d]);
    term = b_.CreateSExtOrTrunc(term, module_.ComputeType(DataType::kInt64, Lanes(term->getType())));
    if (strides[d] != 1) {
      term = b_.CreateMul(term, llvm::ConstantInt::get(term->getType(), strides[d]));
    }
    lanes = std::max(lanes, Lanes(term->getType()));
    index = index == nullptr ? term : b_.CreateAdd(Splat(index, lanes), Splat(term, lanes));
  }
  // A rank-0 buffer (a scalar operand nothing folded, e.g. with FoldConstant cut by bisection)
  // has its one element at offset 0.
  if (index == nullptr) index = llvm::ConstantInt::get(module_.ComputeType(DataType::kInt64, 1), 0);
  if (buffer->elem_offset != 0) {
    index = b_.CreateAdd(index, llvm::ConstantInt::get(index->getType(), buffer->elem_offset));
  }
  return index;
}

llvm::Value* FunctionEmitter::ElementPointer(const loop::Buffer& buffer, llvm::Value* index) {
  auto it = vars_.find(buffer->data.get());
  KILN_CHECK(it != vars_.end()) << "buffer " << buffer->name << " has unbound storage";
  return b_.CreateGEP(module_.StorageType(buffer->dtype), it->second, index);
}

const loop::PrimExpr* FunctionEmitter::ContiguousBase(const std::vector<loop::PrimExpr>& indices) {
  if (indices.size() != 1) return nullptr;
  const auto* ramp = indices[0].as<loop::RampNode>();
  int64_t stride = 0;
  if (ramp == nullptr || !loop::AsConstInt(ramp->stride, &stride) || stride != 1) return nullptr;
  return &ramp->base;
}

llvm::Value* FunctionEmitter::Tagged(llvm::Value* access, const loop::Buffer& buffer) {
  if (auto* instruction = llvm::dyn_cast<llvm::Instruction>(access)) {
    module_.TagAccess(instruction, buffer->data.get());
  }
  return access;
}

int64_t FunctionEmitter::SmallStride(const std::vector<loop::PrimExpr>& indices) {
  if (indices.size() != 1) return 0;
  const auto* ramp = indices[0].as<loop::RampNode>();
  int64_t stride = 0;
  if (ramp == nullptr || !loop::AsConstInt(ramp->stride, &stride)) return 0;
  return stride >= 2 && stride <= 4 ? stride : 0;
}

llvm::Value* FunctionEmitter::EmitLoad(const loop::BufferLoadNode* op) {
  DataType dtype = op->buffer->dtype;
  int lanes = op->type.lanes;
  llvm::Type* storage_type = module_.StorageType(dtype, lanes);
  llvm::Align element_align(DataTypeBytes(dtype));
  llvm::Value* loaded = nullptr;
  if (lanes == 1) {
    auto load_scalar = [&]() -> llvm::Value* {
      llvm::Value* pointer = ElementPointer(op->buffer, FlatIndex(op->buffer, op->indices));
      return Tagged(b_.CreateAlignedLoad(storage_type, pointer, element_align), op->buffer);
    };
    if (mask_ == nullptr) {
      loaded = load_scalar();
    } else {
      // A scalar read inside a vector Select: only when some lane takes it.
      llvm::Value* any = b_.CreateOrReduce(mask_);
      llvm::Value* outer = mask_;
      mask_ = nullptr;
      loaded = EmitBranchy(any, load_scalar, [&]() -> llvm::Value* {
        return llvm::Constant::getNullValue(storage_type);
      });
      mask_ = outer;
    }
  } else if (const loop::PrimExpr* base = ContiguousBase(op->indices)) {
    llvm::Value* start = b_.CreateSExtOrTrunc(EmitExpr(*base), b_.getInt64Ty());
    if (op->buffer->elem_offset != 0) start = b_.CreateAdd(start, b_.getInt64(op->buffer->elem_offset));
    llvm::Value* pointer = ElementPointer(op->buffer, start);
    if (mask_ == nullptr) {
      loaded = Tagged(b_.CreateAlignedLoad(storage_type, pointer, element_align), op->buffer);
    } else {
      loaded = Tagged(b_.CreateMaskedLoad(storage_type, pointer, element_align, mask_,
                                          llvm::Constant::getNullValue(storage_type)),
                      op->buffer);
    }
  } else if (int64_t stride = 0; mask_ == nullptr && (stride = SmallStride(op->indices)) > 0) {
    // A strided conv's input row (stride 2..4): one contiguous load spanning exactly the lanes'
    // elements, then the lanes picked out by a shuffle; far cheaper than a gather.
    const auto* ramp = op->indices[0].as<loop::RampNode>();
    llvm::Value* start = b_.CreateSExtOrTrunc(EmitExpr(ramp->base), b_.getInt64Ty());
    if (op->buffer->elem_offset != 0) start = b_.CreateAdd(start, b_.getInt64(op->buffer->elem_offset));
    int span = static_cast<int>((lanes - 1) * stride + 1);
    llvm::Type* span_type = module_.StorageType(dtype, span);
    llvm::Value* wide =
        Tagged(b_.CreateAlignedLoad(span_type, ElementPointer(op->buffer, start), element_align), op->buffer);
    llvm::SmallVector<int, 16> picks;
    for (int lane = 0; lane < lanes; ++lane) picks.push_back(static_cast<int>(lane * stride));
    loaded = b_.CreateShuffleVector(wide, picks);
  } else {
    llvm::Value* pointers = ElementPointer(op->buffer, FlatIndex(op->buffer, op->indices));
    loaded = Tagged(b_.CreateMaskedGather(storage_type, pointers, element_align, AllLanes(mask_, lanes),
                                          llvm::Constant::getNullValue(storage_type)),
                    op->buffer);
  }
  return FromStorage(loaded, dtype);
}

void FunctionEmitter::EmitStore(const loop::BufferStoreNode* op) {
  DataType dtype = op->buffer->dtype;
  llvm::Value* value = EmitExpr(op->value);
  int lanes = Lanes(value->getType());
  llvm::Value* stored = ToStorage(value, dtype);
  llvm::Align element_align(DataTypeBytes(dtype));
  if (lanes == 1) {
    Tagged(b_.CreateAlignedStore(stored, ElementPointer(op->buffer, FlatIndex(op->buffer, op->indices)),
                                 element_align),
           op->buffer);
  } else if (const loop::PrimExpr* base = ContiguousBase(op->indices)) {
    llvm::Value* start = b_.CreateSExtOrTrunc(EmitExpr(*base), b_.getInt64Ty());
    if (op->buffer->elem_offset != 0) start = b_.CreateAdd(start, b_.getInt64(op->buffer->elem_offset));
    Tagged(b_.CreateAlignedStore(stored, ElementPointer(op->buffer, start), element_align), op->buffer);
  } else {
    llvm::Value* pointers = ElementPointer(op->buffer, FlatIndex(op->buffer, op->indices));
    Tagged(b_.CreateMaskedScatter(stored, pointers, element_align, AllLanes(nullptr, lanes)), op->buffer);
  }
}

}  // namespace kiln::codegen
