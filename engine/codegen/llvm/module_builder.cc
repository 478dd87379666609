// BuildModule: kernels, the entry, weights and signature of a lowered model as one LLVM module.
#include "engine/codegen/llvm/module_builder.h"
#include "engine/support/status_macros.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/function_emitter.h"
#include "engine/codegen/llvm/module_context.h"
#include "engine/codegen/llvm/weight_prefetch.h"
#include "engine/loop/functor.h"
#include "engine/loop/prim_func.h"
#include "engine/loop/string_elements.h"
#include "engine/support/check.h"
#include "engine/support/identifier.h"
#include "llvm/IR/IRBuilder.h"

namespace kiln::codegen {
namespace {

constexpr int64_t kAlignment = 64;  // KILN_ALIGNMENT of kiln_runtime.h

int64_t RoundUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The largest power of two (at most kAlignment) dividing `offset`.
int64_t AlignmentOf(int64_t offset) {
  int64_t align = kAlignment;
  while (align > 1 && offset % align != 0) align /= 2;
  return align;
}

// -1 for a buffer of symbolic dims (its size is a run's).
int64_t BufferBytes(const loop::Buffer& buffer) {
  if (buffer->is_symbolic()) return -1;
  return buffer->NumElements() * DataTypeBytes(buffer->dtype);
}

// The bytes from a buffer's first element to just past its last (its strides may spread them).
// A buffer of symbolic dims may reach anywhere past its first element.
int64_t SpanBytes(const loop::Buffer& buffer) {
  if (buffer->is_symbolic()) return std::numeric_limits<int64_t>::max() / 2;
  std::vector<int64_t> strides = buffer->EffectiveStrides();
  int64_t last = 0;
  for (size_t d = 0; d < buffer->shape.size(); ++d) {
    if (buffer->shape[d] == 0) return 0;
    last += (buffer->shape[d] - 1) * std::abs(strides[d]);
  }
  return (last + 1) * DataTypeBytes(buffer->dtype);
}

// Statements a kernel may hold, and main's shape (Allocates of the workspace around kernel
// calls): anything else is a construct this code generator does not know.
absl::Status CheckKernelStmt(const loop::Stmt& stmt, const std::string& kernel) {
  absl::Status status;
  loop::PreOrderVisit(stmt, [&](const Object* node) {
    if (status.ok() && node->kind() == ObjectKind::kCallKernel) {
      status = absl::UnimplementedError(
          absl::StrCat("kernel ", kernel, " calls another kernel; native code supports kernel "
                                          "calls only in main"));
    }
    if (status.ok() && node->kind() == ObjectKind::kAllocate &&
        static_cast<const loop::AllocateNode*>(node)->is_dynamic()) {
      status = absl::UnimplementedError(absl::StrCat(
          "kernel ", kernel, ": native code allocates no run-time sized storage in a kernel"));
    }
    const loop::BufferNode* accessed =
        node->kind() == ObjectKind::kBufferLoad
            ? static_cast<const loop::BufferLoadNode*>(node)->buffer.get()
        : node->kind() == ObjectKind::kBufferStore
            ? static_cast<const loop::BufferStoreNode*>(node)->buffer.get()
            : nullptr;
    if (status.ok() && accessed != nullptr && accessed->is_symbolic() &&
        accessed->shape.size() > 1) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "kernel ", kernel, ": buffer ", accessed->name,
          " has symbolic dimensions and more than one (run FlattenBuffer first)"));
    }
    if (status.ok() && node->kind() == ObjectKind::kAllocate) {
      const auto* op = static_cast<const loop::AllocateNode*>(node);
      if (op->extent < 0) {
        status = absl::InvalidArgumentError(
            absl::StrCat("kernel ", kernel, ": Allocate of ", op->data->name,
                         " has a negative extent ", op->extent));
      }
    }
  });
  return status;
}

// The one stored bool an assert, an If or a while loop in main tests (a kernel's result or an input), or
// null: main holds no expression code of its own.
// FlattenBuffer makes a scalar at a nonzero offset of the workspace one constant element of a
// flat view.
const loop::BufferLoadNode* StoredFlag(const loop::PrimExpr& condition) {
  const auto* load = condition.as<loop::BufferLoadNode>();
  if (load == nullptr || load->buffer->dtype != DataType::kBool || load->type.lanes != 1) {
    return nullptr;
  }
  if (load->indices.empty() && load->buffer->NumElements() == 1) return load;
  if (load->indices.size() != 1 || load->buffer->shape.size() != 1) return nullptr;
  const auto* index = load->indices[0].as<loop::IntImmNode>();
  if (index == nullptr || index->value < 0 || index->value >= load->buffer->shape[0]) return nullptr;
  return load;
}

// Ifs and while loops of main nested deeper than this are refused (emitting one recurses).
constexpr int kMaxMainIfDepth = 64;

// `if_depth`: the Ifs and while loops around `stmt` (workspace Allocates only outside them).
absl::Status CheckMainStmt(const loop::Stmt& stmt, int if_depth = 0) {
  if (const auto* op = stmt.as<loop::AllocateNode>(); op != nullptr && if_depth == 0) {
    return CheckMainStmt(op->body);
  }
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    for (const loop::Stmt& s : op->seq) {
      if (absl::Status status = CheckMainStmt(s, if_depth); !status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (stmt.as<loop::CallKernelNode>() != nullptr || loop::IsNoOp(stmt)) return absl::OkStatus();
  if (const auto* op = stmt.as<loop::AssertNode>();
      op != nullptr && StoredFlag(op->condition) != nullptr) {
    return absl::OkStatus();
  }
  if (const auto* op = stmt.as<loop::IfThenElseNode>();
      op != nullptr && StoredFlag(op->condition) != nullptr && if_depth < kMaxMainIfDepth) {
    KILN_RETURN_IF_ERROR(CheckMainStmt(op->then_case, if_depth + 1));
    return op->else_case.defined() ? CheckMainStmt(op->else_case, if_depth + 1)
                                   : absl::OkStatus();
  }
  if (const auto* op = stmt.as<loop::WhileNode>();
      op != nullptr && StoredFlag(op->condition) != nullptr && if_depth < kMaxMainIfDepth) {
    return CheckMainStmt(op->body, if_depth + 1);
  }
  return absl::UnimplementedError(absl::StrCat(
      "main holds a ", ObjectKindName(stmt->kind()),
      " statement; native code supports main as workspace Allocates around kernel calls, "
      "asserts of one stored bool and Ifs and while loops (at most ", kMaxMainIfDepth,
      " deep) on one stored bool around them"));
}

class Builder {
 public:
  Builder(llvm::LLVMContext& context, const lower::LoweredModule& lowered,
          const CodegenOptions& options, const VectorMathTarget& vector_math,
          const LoopSourceLines* source)
      : lowered_(lowered),
        options_(options),
        module_(std::make_unique<llvm::Module>(options.symbol_prefix, context)),
        context_(*module_, options.fast_math, vector_math, source) {}

  absl::StatusOr<BuiltModule> Build() {
    BaseFunc main = lowered_.module->Lookup("main");
    if (main.as<loop::PrimFuncNode>() == nullptr) {
      return absl::FailedPreconditionError(
          "native code needs a lowered main (a whole model, not one kernel's lowering)");
    }
    main_ = Downcast<loop::PrimFuncNode>(main);
    if (absl::Status status = CheckMainStmt(main_->body); !status.ok()) return status;
    for (const lower::LoweredKernel& kernel : lowered_.kernels) {
      loop::PrimFunc func = KernelFunc(kernel.name);
      if (absl::Status status = CheckKernelStmt(func->body, kernel.name); !status.ok()) {
        return status;
      }
    }
    PlanMain(main_->body);
    scratch_base_ = RoundUp(main_workspace_bytes_);
    for (const lower::LoweredKernel& kernel : lowered_.kernels) DeclareKernel(kernel);
    prefetch_plans_ = PlanWeightPrefetches(lowered_, scratch_base_ + max_scratch_bytes_,
                                           options_.weight_prefetch_footprint_bytes);
    for (const lower::LoweredKernel& kernel : lowered_.kernels) EmitKernel(kernel);
    EmitEntry();
    EmitSignature();
    EmitKernelNames();
    BuiltModule built;
    built.workspace_bytes = scratch_base_ + max_scratch_bytes_;
    EmitWorkspaceSize(built.workspace_bytes);
    built.deferred_weights = std::move(deferred_weights_);
    context_.FinishDebugInfo();
    built.module = std::move(module_);
    return built;
  }

 private:
  struct KernelInfo {
    loop::PrimFunc func;
    llvm::Function* function = nullptr;
    int id = 0;  // its index in lowered.kernels: <prefix>_kernel_name(id), the profile's slot
    std::unordered_map<const loop::AllocateNode*, int64_t> scratch_offsets;
    int64_t scratch_bytes = 0;
  };

  loop::PrimFunc KernelFunc(const std::string& name) const {
    return Downcast<loop::PrimFuncNode>(lowered_.module->Lookup(name));
  }

  // Main's workspace Allocates get offsets in order; each kernel call's argument alignment and
  // aliasing is recorded for the callee's parameter attributes.
  void PlanMain(const loop::Stmt& stmt) {
    if (const auto* op = stmt.as<loop::AllocateNode>()) {
      main_workspace_bytes_ = RoundUp(main_workspace_bytes_);
      storage_offset_[op->data.get()] = main_workspace_bytes_;
      main_workspace_bytes_ += op->extent * DataTypeBytes(op->dtype);
      return PlanMain(op->body);
    }
    if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
      for (const loop::Stmt& s : op->seq) PlanMain(s);
      return;
    }
    if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
      PlanMain(op->then_case);
      if (op->else_case.defined()) PlanMain(op->else_case);
      return;
    }
    if (const auto* op = stmt.as<loop::WhileNode>()) return PlanMain(op->body);
    const auto* call = stmt.as<loop::CallKernelNode>();
    if (call == nullptr) return;
    std::vector<int64_t>& aligns = param_align_[call->callee->name_hint];
    std::set<int>& aliased = aliased_params_[call->callee->name_hint];
    aligns.resize(call->args.size(), kAlignment);
    // Byte ranges within their storage: two arguments alias when they share storage and their
    // ranges overlap (the memory plan gives values live at the same time disjoint ranges of
    // the one workspace; a reshape's view shares its input's range).
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t i = 0; i < call->args.size(); ++i) {
      const loop::Buffer& arg = call->args[i];
      int64_t base = storage_offset_.count(arg->data.get()) ? storage_offset_[arg->data.get()] : 0;
      int64_t offset = base + arg->elem_offset * DataTypeBytes(arg->dtype);
      aligns[i] = std::min(aligns[i], AlignmentOf(offset));
      ranges.emplace_back(offset, offset + SpanBytes(arg));
      for (size_t j = 0; j < i; ++j) {
        bool overlap = ranges[j].first < ranges[i].second && ranges[i].first < ranges[j].second;
        if (call->args[j]->data.same_as(arg->data) && overlap) {
          aliased.insert(static_cast<int>(i));
          aliased.insert(static_cast<int>(j));
        }
      }
    }
  }

  // Kernel Allocates outside parallel loops live in the shared scratch area, one slot each.
  void PlanScratch(const loop::Stmt& stmt, KernelInfo& info) {
    if (const auto* op = stmt.as<loop::ForNode>()) {
      if (op->for_kind == loop::ForKind::kParallel) return;  // outlined: stack or heap
      return PlanScratch(op->body, info);
    }
    if (const auto* op = stmt.as<loop::AllocateNode>()) {
      info.scratch_bytes = RoundUp(info.scratch_bytes);
      info.scratch_offsets[op] = info.scratch_bytes;
      info.scratch_bytes += std::max<int64_t>(1, op->extent * DataTypeBytes(op->dtype));
      return PlanScratch(op->body, info);
    }
    if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
      for (const loop::Stmt& s : op->seq) PlanScratch(s, info);
    } else if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
      PlanScratch(op->then_case, info);
      if (op->else_case) PlanScratch(op->else_case, info);
    } else if (const auto* op = stmt.as<loop::LetStmtNode>()) {
      PlanScratch(op->body, info);
    }
  }

  void DeclareKernel(const lower::LoweredKernel& kernel) {
    KernelInfo& info = kernels_[kernel.name];
    info.func = KernelFunc(kernel.name);
    info.id = static_cast<int>(kernels_.size()) - 1;
    PlanScratch(info.func->body, info);
    max_scratch_bytes_ = std::max(max_scratch_bytes_, RoundUp(info.scratch_bytes));

    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    std::vector<llvm::Type*> params(info.func->params.size() + 1, ptr);  // + scratch
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false);
    info.function = llvm::Function::Create(
        type, llvm::Function::InternalLinkage,
        absl::StrCat(options_.symbol_prefix, "_", SanitizeIdentifier(kernel.name)), *module_);
    info.function->setDoesNotThrow();
    const std::vector<int64_t>& aligns = param_align_[kernel.name];
    const std::set<int>& aliased = aliased_params_[kernel.name];
    for (size_t i = 0; i < info.func->params.size(); ++i) {
      const loop::Buffer& buffer = info.func->param_buffer(i);
      int64_t align = i < aligns.size() ? aligns[i] : DataTypeBytes(buffer->dtype);
      unsigned arg = static_cast<unsigned>(i);
      info.function->getArg(arg)->setName(buffer->name);
      if (aliased.count(static_cast<int>(i)) == 0) info.function->addParamAttr(arg, llvm::Attribute::NoAlias);
      info.function->addParamAttr(arg, llvm::Attribute::getWithAlignment(context, llvm::Align(align)));
      int64_t bytes = BufferBytes(buffer);
      if (bytes > 0) info.function->addDereferenceableParamAttr(arg, static_cast<uint64_t>(bytes));
    }
    unsigned scratch = static_cast<unsigned>(info.func->params.size());
    info.function->getArg(scratch)->setName("scratch");
    info.function->addParamAttr(scratch, llvm::Attribute::NoAlias);
    info.function->addParamAttr(scratch, llvm::Attribute::getWithAlignment(context, llvm::Align(kAlignment)));
  }

  void EmitKernel(const lower::LoweredKernel& kernel) {
    KernelInfo& info = kernels_.at(kernel.name);
    llvm::Value* scratch = info.function->getArg(static_cast<unsigned>(info.func->params.size()));
    // A kernel on strings runs serially: the strings it creates go to the calling thread's arena.
    FunctionEmitter emitter(context_, info.function, &info.scratch_offsets, scratch,
                            /*in_parallel=*/loop::TouchesStrings(*info.func));
    if (auto it = prefetch_plans_.find(kernel.name); it != prefetch_plans_.end()) {
      std::vector<llvm::Constant*> weights;
      for (const PrefetchPlan::Target& target : it->second.targets) weights.push_back(WeightGlobal(target.weight));
      emitter.SetPrefetchPlan(&it->second, std::move(weights));
    }
    emitter.SetSubprogram(context_.AttachSubprogram(info.function, context_.LineOf(info.func.get())));
    for (size_t i = 0; i < info.func->params.size(); ++i) {
      llvm::Value* arg = info.function->getArg(static_cast<unsigned>(i));
      emitter.Bind(info.func->params[i].get(), arg);
      emitter.Bind(info.func->param_buffer(i)->data.get(), arg);
    }
    std::vector<const loop::VarNode*> disjoint;
    const std::set<int>& aliased = aliased_params_[kernel.name];
    for (size_t i = 0; i < info.func->params.size(); ++i) {
      if (aliased.count(static_cast<int>(i)) == 0) disjoint.push_back(info.func->param_buffer(i)->data.get());
    }
    CollectAllocations(info.func->body, &disjoint);
    context_.DeclareDisjointBuffers(disjoint);
    emitter.EmitBody(info.func->body);
  }

  // The storage every Allocate of `stmt` declares, parallel loops included.
  static void CollectAllocations(const loop::Stmt& stmt, std::vector<const loop::VarNode*>* out) {
    if (const auto* op = stmt.as<loop::ForNode>()) return CollectAllocations(op->body, out);
    if (const auto* op = stmt.as<loop::AllocateNode>()) {
      out->push_back(op->data.get());
      return CollectAllocations(op->body, out);
    }
    if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
      for (const loop::Stmt& s : op->seq) CollectAllocations(s, out);
    } else if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
      CollectAllocations(op->then_case, out);
      if (op->else_case) CollectAllocations(op->else_case, out);
    } else if (const auto* op = stmt.as<loop::LetStmtNode>()) {
      CollectAllocations(op->body, out);
    }
  }

  // Weights: aligned, internal, read-only data. A large one is declared without its bytes
  // (see deferred_weights.h); its address is this module's all the same (hidden, dso_local),
  // so code reaches it as it reaches an internal one.
  llvm::Constant* WeightGlobal(size_t index) {
    if (auto it = weight_globals_.find(index); it != weight_globals_.end()) return it->second;
    llvm::Constant* global = DefineWeightGlobal(index);
    weight_globals_[index] = global;
    return global;
  }

  llvm::Constant* DefineWeightGlobal(size_t index) {
    const TensorData& data = lowered_.constants[index].second;
    llvm::LLVMContext& context = context_.context();
    std::string name = absl::StrCat(options_.symbol_prefix, "_weight_", index);
    if (data->bytes.size() >= kDeferredWeightBytes) {
      auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(context), data->bytes.size());
      auto* global = new llvm::GlobalVariable(*module_, type, /*isConstant=*/true,
                                              llvm::GlobalValue::ExternalLinkage, nullptr, name);
      global->setVisibility(llvm::GlobalValue::HiddenVisibility);
      global->setDSOLocal(true);
      global->setAlignment(llvm::Align(kAlignment));
      deferred_weights_.push_back({global, index});
      return global;
    }
    llvm::StringRef bytes = data->bytes.empty() ? llvm::StringRef("\0", 1) : llvm::StringRef(data->bytes);
    llvm::Constant* init = llvm::ConstantDataArray::getString(context, bytes, /*AddNull=*/false);
    auto* global = new llvm::GlobalVariable(
        *module_, init->getType(), /*isConstant=*/true, llvm::GlobalValue::InternalLinkage, init,
        name);
    global->setAlignment(llvm::Align(kAlignment));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return global;
  }

  void EmitEntry() {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    auto* type = llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false);
    // A model compiled per sample keeps its one-sample program to itself: callers use
    // <prefix>_run_dynamic (EmitRunDynamic).
    entry_ = llvm::Function::Create(
        type,
        lowered_.sample_batch || lowered_.symbolic ? llvm::Function::InternalLinkage
                                                   : llvm::Function::ExternalLinkage,
        EntryName(lowered_, options_.symbol_prefix), *module_);
    entry_->setDoesNotThrow();
    llvm::Argument* inputs = entry_->getArg(0);
    llvm::Argument* outputs = entry_->getArg(1);
    workspace_ = entry_->getArg(2);
    inputs->setName("inputs");
    outputs->setName("outputs");
    workspace_->setName("workspace");
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry_));
    if (llvm::DISubprogram* subprogram =
            context_.AttachSubprogram(entry_, context_.LineOf(main_.get()))) {
      b.SetCurrentDebugLocation(llvm::DILocation::get(context, subprogram->getLine(), 0, subprogram));
    }
    auto* fail_null = llvm::BasicBlock::Create(context, "null_buffer", entry_);
    fail_shape_ = llvm::BasicBlock::Create(context, "shape_mismatch", entry_);
    auto* fail_align = llvm::BasicBlock::Create(context, "misaligned_buffer", entry_);
    // The pointer arrays are not null; every buffer is not null and KILN_ALIGNMENT-aligned.
    auto check_not_null = [&](llvm::Value* pointer) {
      auto* next = llvm::BasicBlock::Create(context, "not_null", entry_);
      b.CreateCondBr(b.CreateIsNull(pointer), fail_null, next);
      b.SetInsertPoint(next);
    };
    auto check = [&](llvm::Value* pointer) {
      check_not_null(pointer);
      auto* next = llvm::BasicBlock::Create(context, "aligned", entry_);
      llvm::Value* low = b.CreateAnd(b.CreatePtrToInt(pointer, b.getInt64Ty()), kAlignment - 1);
      b.CreateCondBr(b.CreateICmpNE(low, b.getInt64(0)), fail_align, next);
      b.SetInsertPoint(next);
    };
    if (lowered_.num_inputs > 0) check_not_null(inputs);
    if (lowered_.num_outputs > 0) check_not_null(outputs);
    size_t num_params = main_->params.size();
    for (size_t i = 0; i < num_params; ++i) {
      const loop::VarNode* var = main_->params[i].get();
      llvm::Value* pointer = nullptr;
      int index = static_cast<int>(i);
      const int num_constants = static_cast<int>(lowered_.constants.size());
      const int first_dynamic = lowered_.num_inputs + lowered_.num_outputs + num_constants;
      if (index < lowered_.num_inputs + lowered_.num_outputs || index >= first_dynamic) {
        // A symbolic model's values of run-time size and its symbols' values follow the
        // outputs in the outputs array (kiln_symbolic_plan::run).
        bool is_input = index < lowered_.num_inputs;
        int slot = is_input                 ? index
                   : index >= first_dynamic ? index - lowered_.num_inputs - num_constants
                                            : index - lowered_.num_inputs;
        llvm::Value* array = is_input ? inputs : outputs;
        pointer = b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, array, slot),
                                      llvm::Align(8), main_->param_buffer(i)->name);
        check(pointer);
      } else {
        pointer = WeightGlobal(i - lowered_.num_inputs - lowered_.num_outputs);
      }
      storage_pointer_[var] = pointer;
      storage_pointer_[main_->param_buffer(i)->data.get()] = pointer;
    }
    if (scratch_base_ + max_scratch_bytes_ > 0) check(workspace_);
    // String tensors: the strings kernels create live in a run arena; the string outputs get
    // malloc'ed copies the caller owns (kiln_runtime.h) before it is released.
    const bool strings = loop::ModuleTouchesStrings(lowered_.module);
    llvm::Value* enclosing_arena = nullptr;
    auto* i64 = b.getInt64Ty();
    if (strings) {
      enclosing_arena = b.CreateCall(context_.RuntimeFunction("kiln_rt_strings_begin", ptr, {}));
    }
    EmitMainStmt(b, main_->body);
    if (strings) {
      llvm::Value* status = b.getInt32(0);
      for (int o = 0; o < lowered_.num_outputs; ++o) {
        const loop::Buffer& buffer = main_->param_buffer(lowered_.num_inputs + o);
        if (buffer->dtype != DataType::kString) continue;
        llvm::Value* kept = b.CreateCall(
            context_.RuntimeFunction("kiln_rt_strings_keep", i32, {ptr, i64}),
            {storage_pointer_[main_->params[lowered_.num_inputs + o].get()],
             b.getInt64(static_cast<uint64_t>(buffer->NumElements()))});
        status = b.CreateSelect(b.CreateICmpNE(kept, b.getInt32(0)), kept, status);
      }
      llvm::Value* ended = b.CreateCall(
          context_.RuntimeFunction("kiln_rt_strings_end", i32, {ptr}), {enclosing_arena});
      b.CreateRet(b.CreateSelect(b.CreateICmpNE(ended, b.getInt32(0)), ended, status));
    } else {
      b.CreateRet(b.getInt32(0));
    }
    b.SetInsertPoint(fail_null);
    b.CreateRet(b.getInt32(1));  // KILN_ERROR_NULL_BUFFER
    b.SetInsertPoint(fail_align);
    b.CreateRet(b.getInt32(2));  // KILN_ERROR_MISALIGNED_BUFFER
    b.SetInsertPoint(fail_shape_);
    if (strings) {
      b.CreateCall(context_.RuntimeFunction("kiln_rt_strings_end", i32, {ptr}), {enclosing_arena});
    }
    b.CreateRet(b.getInt32(4));  // KILN_ERROR_SHAPE_MISMATCH
  }

  // The stored bool `flag` (one byte) is not zero.
  llvm::Value* LoadFlag(llvm::IRBuilder<>& b, const loop::BufferLoadNode& flag) {
    const loop::Buffer& buffer = flag.buffer;
    int64_t offset = buffer->elem_offset;
    if (!flag.indices.empty()) offset += flag.indices[0].as<loop::IntImmNode>()->value;
    llvm::Value* pointer = b.CreateConstInBoundsGEP1_64(
        b.getInt8Ty(), storage_pointer_.at(buffer->data.get()), offset, buffer->name);
    return b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), pointer), b.getInt8(0));
  }

  void EmitMainStmt(llvm::IRBuilder<>& b, const loop::Stmt& stmt) {
    if (const auto* op = stmt.as<loop::AllocateNode>()) {
      storage_pointer_[op->data.get()] = b.CreateConstInBoundsGEP1_64(
          b.getInt8Ty(), workspace_, storage_offset_.at(op->data.get()), op->data->name);
      return EmitMainStmt(b, op->body);
    }
    if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
      for (const loop::Stmt& s : op->seq) EmitMainStmt(b, s);
      return;
    }
    if (const auto* op = stmt.as<loop::AssertNode>()) {
      auto* next = llvm::BasicBlock::Create(context_.context(), "checked", entry_);
      b.CreateCondBr(LoadFlag(b, *StoredFlag(op->condition)), next, fail_shape_);
      b.SetInsertPoint(next);
      return;
    }
    if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
      llvm::LLVMContext& context = context_.context();
      auto* then_block = llvm::BasicBlock::Create(context, "then", entry_);
      auto* else_block = llvm::BasicBlock::Create(context, "else", entry_);
      auto* join = llvm::BasicBlock::Create(context, "endif", entry_);
      b.CreateCondBr(LoadFlag(b, *StoredFlag(op->condition)), then_block, else_block);
      b.SetInsertPoint(then_block);
      EmitMainStmt(b, op->then_case);
      b.CreateBr(join);
      b.SetInsertPoint(else_block);
      if (op->else_case.defined()) EmitMainStmt(b, op->else_case);
      b.CreateBr(join);
      b.SetInsertPoint(join);
      return;
    }
    if (const auto* op = stmt.as<loop::WhileNode>()) {
      // The condition is tested before every iteration, the body's kernels write it.
      llvm::LLVMContext& context = context_.context();
      auto* test = llvm::BasicBlock::Create(context, "while", entry_);
      auto* body = llvm::BasicBlock::Create(context, "do", entry_);
      auto* done = llvm::BasicBlock::Create(context, "endwhile", entry_);
      b.CreateBr(test);
      b.SetInsertPoint(test);
      b.CreateCondBr(LoadFlag(b, *StoredFlag(op->condition)), body, done);
      b.SetInsertPoint(body);
      EmitMainStmt(b, op->body);
      b.CreateBr(test);
      b.SetInsertPoint(done);
      return;
    }
    const auto* call = stmt.as<loop::CallKernelNode>();
    if (call == nullptr) return;  // a no-op
    const KernelInfo& info = kernels_.at(call->callee->name_hint);
    if (int line = context_.LineOf(call); line > 0 && entry_->getSubprogram() != nullptr) {
      b.SetCurrentDebugLocation(llvm::DILocation::get(context_.context(), line, 0, entry_->getSubprogram()));
    }
    std::vector<llvm::Value*> args;
    for (const loop::Buffer& arg : call->args) {
      llvm::Value* base = storage_pointer_.at(arg->data.get());
      int64_t offset = arg->elem_offset * DataTypeBytes(arg->dtype);
      args.push_back(offset == 0 ? base
                                 : b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset,
                                                                arg->name));
    }
    args.push_back(b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), workspace_, scratch_base_, "scratch"));
    if (options_.profile_kernels) b.CreateCall(context_.ProfileEnter(), {b.getInt32(info.id)});
    b.CreateCall(info.function, args);
    if (options_.profile_kernels) b.CreateCall(context_.ProfileExit(), {b.getInt32(info.id)});
  }

  // int32_t <prefix>_num_kernels(void) and const char* <prefix>_kernel_name(int32_t): NULL out
  // of range.
  void EmitKernelNames() {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    std::vector<llvm::Constant*> names;
    for (const lower::LoweredKernel& kernel : lowered_.kernels) {
      names.push_back(ConstantString(
          kernel.name, absl::StrCat(options_.symbol_prefix, "_kernel_", names.size(), "_name")));
    }
    auto* table_type = llvm::ArrayType::get(ptr, names.size());
    auto* table = new llvm::GlobalVariable(
        *module_, table_type, true, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantArray::get(table_type, names),
        absl::StrCat(options_.symbol_prefix, "_kernel_names"));
    auto* query = llvm::Function::Create(llvm::FunctionType::get(ptr, {i32}, false),
                                         llvm::Function::ExternalLinkage,
                                         absl::StrCat(options_.symbol_prefix, "_kernel_name"),
                                         *module_);
    query->setDoesNotThrow();
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", query));
    llvm::Value* index = query->getArg(0);
    llvm::Value* in_range = b.CreateICmpULT(index, b.getInt32(static_cast<uint32_t>(names.size())));
    llvm::BasicBlock* found = llvm::BasicBlock::Create(context, "found", query);
    llvm::BasicBlock* missing = llvm::BasicBlock::Create(context, "missing", query);
    b.CreateCondBr(in_range, found, missing);
    b.SetInsertPoint(found);
    llvm::Value* slot = b.CreateGEP(table_type, table, {b.getInt64(0), b.CreateZExt(index, b.getInt64Ty())});
    b.CreateRet(b.CreateLoad(ptr, slot));
    b.SetInsertPoint(missing);
    b.CreateRet(llvm::ConstantPointerNull::get(ptr));
    auto* counter = llvm::Function::Create(
        llvm::FunctionType::get(i32, false), llvm::Function::ExternalLinkage,
        absl::StrCat(options_.symbol_prefix, "_num_kernels"), *module_);
    counter->setDoesNotThrow();
    llvm::IRBuilder<> cb(llvm::BasicBlock::Create(context, "entry", counter));
    cb.CreateRet(cb.getInt32(static_cast<uint32_t>(names.size())));
  }

  // A table of kiln_tensor_info for main's params [first, first + count): one sample's shapes,
  // or (`batched` given) the model's, with -1 for the batch dim and the bytes of tensors that
  // have it.
  llvm::GlobalVariable* EmitInfoTable(const std::string& what, int first, int count,
                                      const std::vector<bool>* batched) {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    auto* i64 = llvm::Type::getInt64Ty(context);
    auto* info_type = llvm::StructType::get(context, {ptr, i32, i32, ptr, i64});
    std::vector<llvm::Constant*> rows;
    for (int i = first; i < first + count; ++i) {
      const loop::Buffer& buffer = main_->param_buffer(static_cast<size_t>(i));
      bool has_batch = batched != nullptr && (*batched)[static_cast<size_t>(i - first)];
      std::string tag = absl::StrCat(options_.symbol_prefix, "_", what, "_", i - first);
      llvm::Constant* name = ConstantString(buffer->name, tag + "_name");
      std::vector<llvm::Constant*> dims;
      for (size_t d = 0; d < buffer->shape.size(); ++d) {
        int64_t extent = d == 0 && has_batch ? -1 : buffer->shape[d];
        dims.push_back(llvm::ConstantInt::get(i64, static_cast<uint64_t>(extent), true));
      }
      auto* shape_type = llvm::ArrayType::get(i64, dims.size());
      auto* shape = new llvm::GlobalVariable(*module_, shape_type, true,
                                             llvm::GlobalValue::InternalLinkage,
                                             llvm::ConstantArray::get(shape_type, dims),
                                             tag + "_shape");
      int64_t bytes = has_batch ? -1 : BufferBytes(buffer);
      rows.push_back(llvm::ConstantStruct::get(
          info_type, {name, llvm::ConstantInt::get(i32, static_cast<int>(buffer->dtype)),
                      llvm::ConstantInt::get(i32, buffer->shape.size()), shape,
                      llvm::ConstantInt::get(i64, static_cast<uint64_t>(bytes), true)}));
    }
    auto* table_type = llvm::ArrayType::get(info_type, rows.size());
    return new llvm::GlobalVariable(*module_, table_type, true, llvm::GlobalValue::InternalLinkage,
                                    llvm::ConstantArray::get(table_type, rows),
                                    absl::StrCat(options_.symbol_prefix, "_", what, "_info_table"));
  }

  // <prefix>_num_inputs/_num_outputs and <prefix>_input_info/_output_info (kiln_tensor_info).
  void EmitSignature() {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    const std::optional<lower::SampleBatch>& batch = lowered_.sample_batch;
    auto emit_queries = [&](const char* what, int first, int count,
                            const std::vector<bool>* batched) {
      llvm::GlobalVariable* table = EmitInfoTable(what, first, count, batched);
      llvm::Type* table_type = table->getValueType();
      // const kiln_tensor_info* <prefix>_<what>_info(int32_t index): NULL out of range.
      auto* query = llvm::Function::Create(llvm::FunctionType::get(ptr, {i32}, false),
                                           llvm::Function::ExternalLinkage,
                                           absl::StrCat(options_.symbol_prefix, "_", what, "_info"),
                                           *module_);
      query->setDoesNotThrow();
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", query));
      llvm::Value* index = query->getArg(0);
      llvm::Value* in_range = b.CreateICmpULT(index, b.getInt32(static_cast<uint32_t>(count)));
      llvm::Value* row = b.CreateGEP(table_type, table,
                                     {b.getInt64(0), b.CreateZExt(index, b.getInt64Ty())});
      b.CreateRet(b.CreateSelect(in_range, row, llvm::ConstantPointerNull::get(ptr)));
      auto* counter = llvm::Function::Create(llvm::FunctionType::get(i32, false),
                                             llvm::Function::ExternalLinkage,
                                             absl::StrCat(options_.symbol_prefix, "_num_", what, "s"),
                                             *module_);
      counter->setDoesNotThrow();
      llvm::IRBuilder<> cb(llvm::BasicBlock::Create(context, "entry", counter));
      cb.CreateRet(cb.getInt32(static_cast<uint32_t>(count)));
    };
    emit_queries("input", 0, lowered_.num_inputs, batch ? &batch->inputs : nullptr);
    emit_queries("output", lowered_.num_inputs, lowered_.num_outputs,
                 batch ? &batch->outputs : nullptr);
    if (batch) EmitRunDynamic(*batch);
    if (lowered_.symbolic) EmitRunSymbolic(*lowered_.symbolic);
  }

  // An internal constant array of `values` (never empty: a 0 follows them).
  template <typename T>
  llvm::GlobalVariable* ConstantArray(llvm::Type* type, const std::vector<T>& values,
                                      const std::string& name) {
    std::vector<llvm::Constant*> elements;
    for (T value : values) {
      elements.push_back(llvm::ConstantInt::get(type, static_cast<uint64_t>(value), true));
    }
    elements.push_back(llvm::ConstantInt::get(type, 0));
    auto* array_type = llvm::ArrayType::get(type, elements.size());
    return new llvm::GlobalVariable(*module_, array_type, true, llvm::GlobalValue::InternalLinkage,
                                    llvm::ConstantArray::get(array_type, elements),
                                    absl::StrCat(options_.symbol_prefix, "_", name));
  }

  // int32_t <prefix>_run_dynamic(...) of a model over symbolic dims: one call of libkiln_rt's
  // kiln_rt_run_symbolic with this model's kiln_symbolic_plan.
  void EmitRunSymbolic(const lower::SymbolicSignature& signature) {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    auto* i64 = llvm::Type::getInt64Ty(context);
    std::vector<int64_t> input_dims, output_dims, coefficients;
    std::vector<int32_t> dtypes, counts, factors;
    for (const auto& dims : signature.input_dims) input_dims.insert(input_dims.end(), dims.begin(), dims.end());
    for (const auto& dims : signature.output_dims) output_dims.insert(output_dims.end(), dims.begin(), dims.end());
    auto add_monomial = [](const lower::SymbolicSignature::Monomial& monomial,
                           std::vector<int64_t>* coefficients, std::vector<int32_t>* counts,
                           std::vector<int32_t>* factors) {
      coefficients->push_back(monomial.coefficient);
      counts->push_back(static_cast<int32_t>(monomial.symbols.size()));
      factors->insert(factors->end(), monomial.symbols.begin(), monomial.symbols.end());
    };
    for (const lower::SymbolicSignature::DynamicBuffer& buffer : signature.dynamic) {
      dtypes.push_back(static_cast<int32_t>(buffer.dtype));
      add_monomial(buffer.elements, &coefficients, &counts, &factors);
    }
    std::vector<int64_t> equality_coefficients;
    std::vector<int32_t> equality_counts, equality_factors;
    for (const lower::SymbolicSignature::Equality& equality : signature.equalities) {
      add_monomial(equality.left, &equality_coefficients, &equality_counts, &equality_factors);
      add_monomial(equality.right, &equality_coefficients, &equality_counts, &equality_factors);
    }
    auto* plan_type = llvm::StructType::get(
        context, {i32, i32, i32, i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr,
                  ptr});
    auto* plan = new llvm::GlobalVariable(
        *module_, plan_type, true, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantStruct::get(
            plan_type,
            {llvm::ConstantInt::get(i32, lowered_.num_inputs),
             llvm::ConstantInt::get(i32, lowered_.num_outputs),
             llvm::ConstantInt::get(i32, signature.symbols.size()),
             llvm::ConstantInt::get(i32, signature.dynamic.size()),
             EmitInfoTable("symbolic_input", 0, lowered_.num_inputs, nullptr),
             EmitInfoTable("symbolic_output", lowered_.num_inputs, lowered_.num_outputs, nullptr),
             ConstantArray(i64, input_dims, "input_dims"), ConstantArray(i64, output_dims, "output_dims"),
             ConstantArray(i32, dtypes, "dynamic_dtypes"),
             ConstantArray(i64, coefficients, "dynamic_coefficients"),
             ConstantArray(i32, counts, "dynamic_symbol_counts"),
             ConstantArray(i32, factors, "dynamic_symbols"),
             llvm::ConstantInt::get(i32, signature.equalities.size()),
             ConstantArray(i64, equality_coefficients, "equality_coefficients"),
             ConstantArray(i32, equality_counts, "equality_symbol_counts"),
             ConstantArray(i32, equality_factors, "equality_symbols"), entry_}),
        absl::StrCat(options_.symbol_prefix, "_symbolic_plan"));
    llvm::FunctionCallee run_symbolic = module_->getOrInsertFunction(
        "kiln_rt_run_symbolic", llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr}, false));
    auto* run = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr}, false),
                                       llvm::Function::ExternalLinkage,
                                       absl::StrCat(options_.symbol_prefix, "_run_dynamic"), *module_);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", run));
    b.CreateRet(b.CreateCall(run_symbolic, {plan, run->getArg(0), run->getArg(1), run->getArg(2),
                                            run->getArg(3), run->getArg(4)}));
  }

  // int32_t <prefix>_run_dynamic(inputs, input_shapes, outputs, output_shapes, workspace): one
  // call of libkiln_rt's kiln_rt_run_per_sample with this model's kiln_sample_plan.
  void EmitRunDynamic(const lower::SampleBatch& batch) {
    llvm::LLVMContext& context = context_.context();
    auto* ptr = llvm::PointerType::getUnqual(context);
    auto* i8 = llvm::Type::getInt8Ty(context);
    auto* i32 = llvm::Type::getInt32Ty(context);
    auto flags = [&](const std::vector<bool>& batched, const char* what) {
      std::vector<llvm::Constant*> bytes;
      for (bool b : batched) bytes.push_back(llvm::ConstantInt::get(i8, b ? 1 : 0));
      bytes.push_back(llvm::ConstantInt::get(i8, 0));  // never an empty array
      auto* type = llvm::ArrayType::get(i8, bytes.size());
      return new llvm::GlobalVariable(*module_, type, true, llvm::GlobalValue::InternalLinkage,
                                      llvm::ConstantArray::get(type, bytes),
                                      absl::StrCat(options_.symbol_prefix, "_", what, "_batched"));
    };
    auto* i64 = llvm::Type::getInt64Ty(context);
    auto* plan_type = llvm::StructType::get(context, {i32, i32, ptr, ptr, ptr, ptr, ptr, i64, i32});
    auto* plan = new llvm::GlobalVariable(
        *module_, plan_type, true, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantStruct::get(
            plan_type,
            {llvm::ConstantInt::get(i32, lowered_.num_inputs),
             llvm::ConstantInt::get(i32, lowered_.num_outputs),
             EmitInfoTable("sample_input", 0, lowered_.num_inputs, nullptr),
             EmitInfoTable("sample_output", lowered_.num_inputs, lowered_.num_outputs, nullptr),
             flags(batch.inputs, "input"), flags(batch.outputs, "output"), entry_,
             llvm::ConstantInt::get(i64, static_cast<uint64_t>(scratch_base_ + max_scratch_bytes_)),
             llvm::ConstantInt::get(i32, options_.profile_kernels ? 1 : 0)}),
        absl::StrCat(options_.symbol_prefix, "_sample_plan"));
    auto* run_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr}, false);
    llvm::FunctionCallee per_sample = module_->getOrInsertFunction(
        "kiln_rt_run_per_sample", llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr}, false));
    auto* run = llvm::Function::Create(run_type, llvm::Function::ExternalLinkage,
                                       absl::StrCat(options_.symbol_prefix, "_run_dynamic"), *module_);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", run));
    b.CreateRet(b.CreateCall(per_sample, {plan, run->getArg(0), run->getArg(1), run->getArg(2),
                                          run->getArg(3), run->getArg(4)}));
  }

  void EmitWorkspaceSize(int64_t bytes) {
    llvm::LLVMContext& context = context_.context();
    auto* i64 = llvm::Type::getInt64Ty(context);
    auto* function = llvm::Function::Create(
        llvm::FunctionType::get(i64, false), llvm::Function::ExternalLinkage,
        absl::StrCat(options_.symbol_prefix, "_workspace_size"), *module_);
    function->setDoesNotThrow();
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
    b.CreateRet(b.getInt64(static_cast<uint64_t>(bytes)));
  }

  llvm::Constant* ConstantString(const std::string& text, const std::string& name) {
    llvm::Constant* init = llvm::ConstantDataArray::getString(context_.context(), text, true);
    auto* global = new llvm::GlobalVariable(*module_, init->getType(), true,
                                            llvm::GlobalValue::InternalLinkage, init, name);
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return global;
  }

  const lower::LoweredModule& lowered_;
  const CodegenOptions& options_;
  std::unique_ptr<llvm::Module> module_;
  ModuleContext context_;
  loop::PrimFunc main_;
  std::map<std::string, KernelInfo> kernels_;
  // Byte offsets of main's workspace Allocates; pointers of main's storage while emitting it.
  std::unordered_map<const loop::VarNode*, int64_t> storage_offset_;
  std::unordered_map<const loop::VarNode*, llvm::Value*> storage_pointer_;
  std::map<std::string, std::vector<int64_t>> param_align_;
  std::map<std::string, std::set<int>> aliased_params_;
  int64_t main_workspace_bytes_ = 0;
  int64_t scratch_base_ = 0;
  int64_t max_scratch_bytes_ = 0;
  std::vector<DeferredWeight> deferred_weights_;
  std::map<size_t, llvm::Constant*> weight_globals_;
  std::map<std::string, PrefetchPlan> prefetch_plans_;
  llvm::Function* entry_ = nullptr;
  llvm::Value* workspace_ = nullptr;
  llvm::BasicBlock* fail_shape_ = nullptr;  // returns KILN_ERROR_SHAPE_MISMATCH
};

}  // namespace

std::string EntryName(const lower::LoweredModule& lowered, const std::string& prefix) {
  if (lowered.symbolic) return absl::StrCat(prefix, "_run_bound");
  return absl::StrCat(prefix, lowered.sample_batch ? "_run_sample" : "_run");
}

absl::StatusOr<BuiltModule> BuildModule(llvm::LLVMContext& context,
                                        const lower::LoweredModule& lowered,
                                        const CodegenOptions& options,
                                        const VectorMathTarget& vector_math,
                                        const LoopSourceLines* source) {
  return Builder(context, lowered, options, vector_math, source).Build();
}

}  // namespace kiln::codegen
