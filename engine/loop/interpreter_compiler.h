// The interpreter's compiler (internal): turns a PrimFunc's statements and
// expressions into compiled nodes. Vector expressions are scalarized here:
// lane k of a vector expression compiles to its own scalar node tree, and
// scalar subexpressions (a Ramp's base, a Broadcast's value) are shared by
// all lanes, so execution only ever handles scalars.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/interpreter_program.h"

namespace kiln::loop::interp {

// Static step cost of a node tree (its size with shared subtrees counted at
// every use, i.e. the number of evaluations), saturating so a DAG with
// exponential tree size still charges more than any budget.
inline constexpr int64_t kMaxCost = int64_t{1} << 50;
inline int64_t AddCost(int64_t a, int64_t b) { return a + b >= kMaxCost ? kMaxCost : a + b; }

// The location of one element access: elem_offset + sum(index[d] * stride[d])
// elements into a storage slot. Constant indices are folded into the offset
// when compiling.
struct BufferAccess {
  const BufferNode* buffer = nullptr;
  int storage_slot = 0;
  int64_t offset = 0;  // elem_offset plus the folded constant indices
  std::vector<Operand> indices;  // every index, for messages
  std::vector<std::pair<Operand, int64_t>> dims;  // the non-constant indices and their strides
  int lane = -1;  // the lane of a vector access, for messages

  // True when the access is `offset + index` (one dimension of stride 1).
  bool is_unit_stride() const { return dims.size() == 1 && dims[0].second == 1; }

  // False when the index arithmetic overflows int64.
  bool Flat(Frame& frame, int64_t* flat) const {
    int64_t result = offset;
    for (const auto& [index, stride] : dims) {
      int64_t term;
      if (__builtin_mul_overflow(index.Eval(frame).i, stride, &term) ||
          __builtin_add_overflow(result, term, &result)) {
        return false;
      }
    }
    *flat = result;
    return true;
  }

  // Records the out-of-bounds error (re-evaluating the indices to name them).
  void ReportOutOfBounds(Frame& frame, const char* access_kind, int64_t elem_bytes,
                         const Span& span) const;
};

class Compiler {
 public:
  struct Compiled {
    const CompiledExpr* node = nullptr;
    int64_t cost = 0;
  };

  Compiler(CompiledFunc* out, const KernelResolver& resolve_kernel)
      : out_(out), resolve_kernel_(resolve_kernel) {}

  absl::Status CompileBody();

  template <typename NodeT, typename... Args>
  const NodeT* New(Args&&... args) {
    auto node = std::make_unique<NodeT>(std::forward<Args>(args)...);
    const NodeT* raw = node.get();
    out_->nodes.push_back(std::move(node));
    return raw;
  }

  // Lane `lane` of `expr` (a scalar expression gives the same node for every lane).
  absl::StatusOr<Compiled> CompileExpr(const PrimExpr& expr, int lane);
  // A scalar expression (lanes == 1); `role` names it in errors ("loop extent").
  absl::StatusOr<Compiled> CompileScalar(const PrimExpr& expr, const char* role);
  // Lane `lane` as a bool (integers and floats compare `!= 0`).
  absl::StatusOr<Compiled> CompileBool(const PrimExpr& expr, int lane);
  absl::StatusOr<BufferAccess> CompileAccess(const Buffer& buffer, const std::vector<PrimExpr>& indices,
                                      int lane, int64_t* cost);

  absl::StatusOr<const CompiledStmt*> CompileStmt(const Stmt& stmt);

 private:
  int NewVarSlots(int lanes) {
    int slot = out_->num_var_slots;
    out_->num_var_slots += lanes;
    return slot;
  }
  int NewStorageSlot() { return out_->num_storage_slots++; }
  void MarkStored(int slot) {
    if (out_->stored_slots.size() <= static_cast<size_t>(slot)) {
      out_->stored_slots.resize(static_cast<size_t>(slot) + 1);
    }
    out_->stored_slots[static_cast<size_t>(slot)] = true;
  }

  absl::StatusOr<Compiled> CompileExprUncached(const PrimExpr& expr, int lane);
  absl::StatusOr<Compiled> CompileBinary(const BinaryNode* op, int lane);
  absl::StatusOr<Compiled> CompileIntrinsic(const IntrinsicCallNode* op, int lane);

  absl::StatusOr<const CompiledStmt*> CompileFor(const ForNode* op);
  absl::StatusOr<const CompiledStmt*> CompileStore(const BufferStoreNode* op);
  absl::StatusOr<const CompiledStmt*> CompileAllocate(const AllocateNode* op);
  absl::StatusOr<const CompiledStmt*> CompileIf(const IfThenElseNode* op);
  absl::StatusOr<const CompiledStmt*> CompileAssert(const AssertNode* op);
  absl::StatusOr<const CompiledStmt*> CompileWhile(const WhileNode* op);
  absl::StatusOr<const CompiledStmt*> CompileLet(const LetStmtNode* op);
  absl::StatusOr<const CompiledStmt*> CompileSeq(const SeqStmtNode* op);
  absl::StatusOr<const CompiledStmt*> CompileEvaluate(const EvaluateNode* op);
  absl::StatusOr<const CompiledStmt*> CompileCallKernel(const CallKernelNode* op);

  struct VarSlot {
    int slot = 0;
    int lanes = 1;
  };
  // Binding sites get fresh slots; a nested rebinding of the same Var
  // shadows the outer one until its scope ends.
  template <typename Map, typename Value>
  class ScopedBinding {
   public:
    ScopedBinding(Map* map, const VarNode* var, Value value) : map_(map), var_(var) {
      auto it = map->find(var);
      if (it != map->end()) saved_ = std::make_unique<Value>(it->second);
      (*map)[var] = value;
    }
    ~ScopedBinding() {
      if (saved_) {
        (*map_)[var_] = *saved_;
      } else {
        map_->erase(var_);
      }
    }
    ScopedBinding(const ScopedBinding&) = delete;
    ScopedBinding& operator=(const ScopedBinding&) = delete;

   private:
    Map* map_;
    const VarNode* var_;
    std::unique_ptr<Value> saved_;
  };
  using VarScope = ScopedBinding<std::unordered_map<const VarNode*, VarSlot>, VarSlot>;
  using StorageScope = ScopedBinding<std::unordered_map<const VarNode*, int>, int>;

  CompiledFunc* out_;
  const KernelResolver& resolve_kernel_;
  std::unordered_map<const VarNode*, VarSlot> vars_;
  std::unordered_map<const VarNode*, int> storages_;
  // Lanes already compiled since the scope last changed (keeps DAG-shaped
  // expressions linear in size). Lookup only, never iterated.
  std::map<std::pair<const PrimExprNode*, int>, Compiled> memo_;
};

// The largest vector the interpreter accepts.
inline constexpr int kMaxLanes = 64;

}  // namespace kiln::loop::interp
