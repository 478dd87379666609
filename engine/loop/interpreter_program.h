// The interpreter's compiled form of a PrimFunc (internal to the
// interpreter): a tree of dtype-specialized expression and statement nodes
// with variables resolved to frame slots and buffers to storage slots, the
// execution state they share (step budget, memory, first error), and the
// compiler entry point.
//
// Errors during execution do not unwind: the failing node records the first
// error in ExecState and returns a dummy value; every statement checks
// `failed()` before it writes memory and loops stop, so the first error is
// what the run reports.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/loop/interpreter.h"
#include "engine/loop/interpreter_values.h"

namespace kiln::loop::interp {

// Bytes a buffer views; a buffer's element index is checked against it.
struct StorageView {
  uint8_t* data = nullptr;
  int64_t bytes = 0;
};

class ExecState {
 public:
  explicit ExecState(const InterpreterOptions& options);
  ~ExecState();

  // Counts `cost` steps; false (with the error recorded) once the budget is
  // spent or the run is cancelled.
  bool Charge(int64_t cost) {
    steps_ += cost;
    return steps_ <= next_check_ || CheckLimits();
  }
  bool failed() const { return failed_; }
  // Records `status` unless an earlier error was recorded.
  void Fail(absl::Status status);
  const absl::Status& error() const { return error_; }

  // Reserves `bytes` of Allocate storage against the memory limit.
  bool ReserveAllocation(int64_t bytes, const std::string& what);
  void ReleaseAllocation(int64_t bytes) {
    live_allocation_bytes_ -= bytes;
    if (options_.budget != nullptr) options_.budget->Release(bytes);
  }

  // The function running now (named in error messages); returns the caller's.
  const std::string* EnterFunction(const std::string* name) {
    return std::exchange(function_, name);
  }
  void LeaveFunction(const std::string* caller) { function_ = caller; }

 private:
  bool CheckLimits();
  bool PollsPeriodically() const {
    return options_.is_cancelled || options_.budget != nullptr;
  }

  const InterpreterOptions& options_;
  int64_t steps_ = 0;
  int64_t next_check_ = 0;
  int64_t live_allocation_bytes_ = 0;
  int64_t steps_charged_to_budget_ = 0;
  bool failed_ = false;
  absl::Status error_;
  const std::string* function_ = nullptr;
};

struct Frame {
  Scalar* vars;
  StorageView* storages;
  ExecState* state;
};

class CompiledNode {
 public:
  virtual ~CompiledNode() = default;
};

// Batched execution of innermost loops. A loop whose body is one scalar store
// of a batchable expression (variables, constants, arithmetic, casts and
// loads) runs kBatchSize iterations per call of each node, so a node's
// dispatch is paid once per batch instead of once per element: constant
// folding of large weights spends its time in arithmetic, not in calls.
// Batch nodes never record errors: they set `failed`, and the loop re-runs
// that batch one iteration at a time, which reports the error exactly as the
// scalar path would (nothing of a failed batch has been stored).
inline constexpr int kBatchSize = 128;
// Deeper expressions run scalar (each level of a batch keeps a batch of
// temporaries on the stack).
inline constexpr int kMaxBatchDepth = 24;

struct Batch {
  int loop_slot = -1;
  int size = 0;
  bool failed = false;
  // loop_values[k] == loop_values[0] + k (no wrap-around in this batch), so
  // an access indexed by the loop variable alone is a contiguous range.
  bool consecutive = false;
  Scalar loop_values[kBatchSize];  // the loop variable in each iteration
};

// For a batch access at `index[k] + offset` into `elements` elements: the
// first element when the batch is one contiguous run indexed by the loop
// variable, checked in bounds; -1 when it is not such a run; `batch.failed`
// is set when it is, but out of bounds.
struct BatchRange {
  static int64_t Contiguous(const Batch& batch, bool indexed_by_loop_var, int64_t offset,
                            int64_t elements) {
    if (!indexed_by_loop_var || !batch.consecutive) return -1;
    int64_t first;
    if (__builtin_add_overflow(batch.loop_values[0].i, offset, &first) || first < 0 ||
        first > elements - batch.size) {
      return -1;  // the element-wise path reports it
    }
    return first;
  }
};

class CompiledExpr : public CompiledNode {
 public:
  virtual Scalar Eval(Frame& frame) const = 0;
  // True when EvalBatch is implemented for this node and its operands (up to
  // `depth` levels); appends the storage slots it loads from.
  virtual bool CollectBatchLoads(int depth, std::vector<int>* load_slots) const {
    (void)depth, (void)load_slots;
    return false;
  }
  // `out[k]` = the value in iteration k of `batch`.
  virtual void EvalBatch(Frame& frame, Batch& batch, Scalar* out) const {
    (void)frame, (void)batch, (void)out;
  }
};

// Leaves that Operand reads inline.
class VarExpr final : public CompiledExpr {
 public:
  explicit VarExpr(int slot) : slot(slot) {}
  Scalar Eval(Frame& frame) const override { return frame.vars[slot]; }
  const int slot;
};

class ConstExpr final : public CompiledExpr {
 public:
  explicit ConstExpr(Scalar value) : value(value) {}
  Scalar Eval(Frame&) const override { return value; }
  const Scalar value;
};

// A child of a compiled node. Most leaves are variables and constants: read
// inline, they cost a predictable branch instead of a virtual call, which
// roughly halves the time of index arithmetic.
class Operand {
 public:
  Operand() = default;
  Operand(const CompiledExpr* node)  // NOLINT(google-explicit-constructor)
      : node_(node) {
    if (const auto* var = dynamic_cast<const VarExpr*>(node)) {
      kind_ = kVar;
      slot_ = var->slot;
    } else if (const auto* constant = dynamic_cast<const ConstExpr*>(node)) {
      kind_ = kConst;
      value_ = constant->value;
    }
  }
  Scalar Eval(Frame& frame) const {
    if (kind_ == kVar) return frame.vars[slot_];
    if (kind_ == kConst) return value_;
    return node_->Eval(frame);
  }
  bool is_constant() const { return kind_ == kConst; }
  Scalar constant() const { return value_; }

  bool IsVar(int slot) const { return kind_ == kVar && slot_ == slot; }

  bool CollectBatchLoads(int depth, std::vector<int>* load_slots) const {
    if (kind_ != kNode) return true;
    return depth > 0 && node_->CollectBatchLoads(depth - 1, load_slots);
  }
  void EvalBatch(Frame& frame, Batch& batch, Scalar* out) const {
    if (kind_ == kNode) {
      node_->EvalBatch(frame, batch, out);
      return;
    }
    if (kind_ == kVar && slot_ == batch.loop_slot) {
      std::copy_n(batch.loop_values, batch.size, out);
      return;
    }
    std::fill_n(out, batch.size, kind_ == kVar ? frame.vars[slot_] : value_);
  }

 private:
  enum Kind : uint8_t { kNode, kVar, kConst };
  Kind kind_ = kNode;
  int slot_ = 0;
  Scalar value_{};
  const CompiledExpr* node_ = nullptr;
};

// What a loop needs to know to run its body in batches.
struct BatchPlan {
  int store_slot = 0;
  std::vector<int> load_slots;
  int64_t cost = 0;  // steps charged per iteration by the body
};

class CompiledStmt : public CompiledNode {
 public:
  virtual void Exec(Frame& frame) const = 0;
  // True when the statement can run as the body of a batched loop whose
  // variable is `loop_slot`; fills `plan`.
  virtual bool PlanBatch(int loop_slot, BatchPlan* plan) const {
    (void)loop_slot, (void)plan;
    return false;
  }
  // Runs the iterations of `batch`; sets `batch.failed` (storing nothing)
  // when any iteration would fail.
  virtual void ExecBatch(Frame& frame, Batch& batch) const { (void)frame, (void)batch; }
};

struct CompiledFunc {
  std::string name;
  PrimFunc func;  // keeps the IR alive: nodes keep pointers into it for error messages
  std::vector<std::unique_ptr<CompiledNode>> nodes;  // owns every node below
  const CompiledStmt* body = nullptr;
  int num_var_slots = 0;
  int num_storage_slots = 0;  // the parameters take slots [0, params.size())
  // Storage slots some statement stores to (a parameter passed read-only
  // must not be among them).
  std::vector<bool> stored_slots;
};

// Looks up (compiling on first use) the callee of a CallKernel statement.
using KernelResolver = std::function<absl::StatusOr<const CompiledFunc*>(const CallKernelNode&)>;

// Compiles `func` (named `name` in messages). `resolve_kernel` may be empty:
// a CallKernel statement is then an error.
absl::StatusOr<std::unique_ptr<CompiledFunc>> CompilePrimFunc(
    const PrimFunc& func, std::string name, const KernelResolver& resolve_kernel);

// Runs `func` on `param_storages` (one per parameter); errors land in `state`.
void ExecuteCompiled(const CompiledFunc& func, const std::vector<StorageView>& param_storages,
                     ExecState* state);

// A short rendering of `expr` for error messages, e.g. `floordiv(i, (j - 1))`.
std::string DescribeExpr(const PrimExprNode* expr);
// " (from conv1)" when `span` names a source, else "".
std::string DescribeSpan(const Span& span);

}  // namespace kiln::loop::interp
