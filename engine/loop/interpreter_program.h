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
  void ReleaseAllocation(int64_t bytes) { live_allocation_bytes_ -= bytes; }

  // The function running now (named in error messages); returns the caller's.
  const std::string* EnterFunction(const std::string* name) {
    return std::exchange(function_, name);
  }
  void LeaveFunction(const std::string* caller) { function_ = caller; }

 private:
  bool CheckLimits();

  const InterpreterOptions& options_;
  int64_t steps_ = 0;
  int64_t next_check_ = 0;
  int64_t live_allocation_bytes_ = 0;
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

class CompiledExpr : public CompiledNode {
 public:
  virtual Scalar Eval(Frame& frame) const = 0;
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

 private:
  enum Kind : uint8_t { kNode, kVar, kConst };
  Kind kind_ = kNode;
  int slot_ = 0;
  Scalar value_{};
  const CompiledExpr* node_ = nullptr;
};

class CompiledStmt : public CompiledNode {
 public:
  virtual void Exec(Frame& frame) const = 0;
};

struct CompiledFunc {
  std::string name;
  PrimFunc func;  // keeps the IR alive: nodes keep pointers into it for error messages
  std::vector<std::unique_ptr<CompiledNode>> nodes;  // owns every node below
  const CompiledStmt* body = nullptr;
  int num_var_slots = 0;
  int num_storage_slots = 0;  // the parameters take slots [0, params.size())
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
