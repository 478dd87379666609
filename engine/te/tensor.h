// Tensor expressions: the declarative description of what an operator
// computes, before any loop structure is chosen. A placeholder is an input; a
// compute is `out[i, j, ...] = f(i, j, ...)`, optionally reducing over
// reduce axes (sum, max, min, prod). Each operation owns the buffer its
// output lives in, and reading a tensor inside a compute body is a
// BufferLoad of that buffer; lowering decides whether the buffer becomes a
// parameter, an allocation, or is inlined away.
//
// Operator compute definitions (engine/op/compute/) are written with this
// API once and used by constant folding, the interpreter path and code
// generation alike.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/buffer.h"
#include "engine/loop/expr.h"

namespace kiln::te {

using loop::PrimExpr;

// An iteration axis over [0, extent): a data-parallel axis of a compute's
// output or a reduce axis. An axis whose extent only a run knows (a symbolic
// dimension) has extent -1 and `symbolic_extent`, an index expression of the
// run's symbols.
struct IterVarNode {
  loop::Var var;
  int64_t extent;
  bool is_reduce;
  PrimExpr symbolic_extent = nullptr;

  bool is_symbolic() const { return symbolic_extent.defined(); }
  PrimExpr ExtentExpr() const { return is_symbolic() ? symbolic_extent : loop::IntImm(extent); }
};
using IterVar = std::shared_ptr<const IterVarNode>;

IterVar ReduceAxis(int64_t extent, std::string name = "k");
// A reduce axis of any extent (static when `extent` is a constant).
IterVar ReduceAxis(const PrimExpr& extent, std::string name = "k");

enum class ReduceKind { kSum, kMax, kMin, kProd };
const char* ReduceKindName(ReduceKind kind);

// What a compute lambda returns: a plain value, or a reduction of `value`
// over `reduce_axes` (built by Sum/Max/Min/Prod). `condition`, when set,
// excludes reduce points where it is false (used for padding and windows).
struct ComputeBody {
  ComputeBody(PrimExpr value) : value(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  ComputeBody(PrimExpr value, ReduceKind kind, std::vector<IterVar> axes, PrimExpr condition)
      : value(std::move(value)),
        reduce(kind),
        reduce_axes(std::move(axes)),
        condition(std::move(condition)) {}

  PrimExpr value;
  std::optional<ReduceKind> reduce;
  std::vector<IterVar> reduce_axes;
  PrimExpr condition;  // null: every point counts
};

ComputeBody Sum(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition = nullptr);
ComputeBody Max(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition = nullptr);
ComputeBody Min(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition = nullptr);
ComputeBody Prod(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition = nullptr);
// The identity element of a reduction in `type` (0, -inf or lowest, +inf or
// highest, 1).
PrimExpr ReduceIdentity(ReduceKind kind, loop::PrimType type);

class Tensor;

class OperationNode {
 public:
  enum class Kind { kPlaceholder, kCompute };

  Kind kind;
  std::string name;
  // The output buffer: its name is the op's name, its shape the output shape.
  loop::Buffer buffer;
  // Compute only: one data-parallel axis per output dimension, the body, and
  // the tensors the body reads (in order of first use).
  std::vector<IterVar> axis;
  std::optional<ComputeBody> body;
  std::vector<Tensor> inputs;
  // A short label for schedules and kernel names ("elemwise", "conv2d", ...).
  std::string tag;
  // The graph node(s) this computation was lowered from (see SpanScope).
  Span span;
};
using Operation = std::shared_ptr<const OperationNode>;

// A handle to the output of an operation.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}

  const Operation& op() const { return op_; }
  bool defined() const { return op_ != nullptr; }
  // The static shape; a symbolic tensor's dims are -1 here (see dims()). Compute definitions
  // that have not moved to dims() are only given static tensors (primitive_compute.cc).
  const std::vector<int64_t>& shape() const { return op_->buffer->shape; }
  // Every dimension as an index expression (constants for static ones).
  std::vector<PrimExpr> dims() const { return op_->buffer->ShapeExprs(); }
  PrimExpr dim(int axis) const { return op_->buffer->Extent(static_cast<size_t>(axis)); }
  bool is_symbolic() const { return op_->buffer->is_symbolic(); }
  int ndim() const { return static_cast<int>(op_->buffer->shape.size()); }
  DataType dtype() const { return op_->buffer->dtype; }
  loop::PrimType type() const { return loop::PrimType{dtype(), 1}; }
  const std::string& name() const { return op_->name; }

  // The element at `indices` (one per dimension): a load of the op's buffer.
  PrimExpr operator()(std::vector<PrimExpr> indices) const;
  template <typename... Index>
  PrimExpr operator()(const Index&... indices) const {
    return (*this)(std::vector<PrimExpr>{PrimExpr(indices)...});
  }

  bool same_as(const Tensor& other) const { return op_ == other.op_; }

 private:
  Operation op_;
};

Tensor Placeholder(std::string name, DataType dtype, std::vector<int64_t> shape);
// A placeholder over dimensions that may be symbolic.
Tensor PlaceholderOver(std::string name, DataType dtype, std::vector<PrimExpr> shape);

// The tag of a zero-padding stage (a convolution's padded input): schedules materialize it
// rather than inline it, so the reduction reading it needs no bounds checks.
inline constexpr char kPadTag[] = "pad";
// The tag of a blocked convolution's reduction (nn.conv2d_nchwc): the default schedule gives it
// a register tile over output-channel blocks x output columns, the block's lanes vectorized.
inline constexpr char kBlockedConvTag[] = "conv2d_nchwc";

// The tag of a normalization's output over its trailing axes (softmax over the last axis, layer
// normalization): its other stages are statistics of each row. The default schedule computes
// them inside the output's row loop, so a row is read while it is in L1 and no statistic or
// intermediate of the whole tensor is stored.
inline constexpr char kRowNormalizationTag[] = "row_normalization";

using ComputeFunc = std::function<ComputeBody(const std::vector<loop::Var>& indices)>;

// out[indices] = fcompute(indices) over `shape`. `inputs` are the tensors the
// body may read: a load of any other tensor's buffer is a Kiln bug (CHECK).
// The output dtype is the body's. Axis variables are named ax0, ax1, ...
Tensor Compute(std::string name, std::vector<int64_t> shape, std::vector<Tensor> inputs,
               const ComputeFunc& fcompute, std::string tag = "");
// The same over dimensions that may be symbolic (static when all are constants). A separate
// name: a braced list of integers would convert to either.
Tensor ComputeOver(std::string name, std::vector<PrimExpr> shape, std::vector<Tensor> inputs,
                   const ComputeFunc& fcompute, std::string tag = "");

// While alive, every operation created on this thread gets `span` (lowering
// opens one per graph call, so compute definitions need not pass spans).
class SpanScope {
 public:
  explicit SpanScope(Span span);
  ~SpanScope();
  SpanScope(const SpanScope&) = delete;
  SpanScope& operator=(const SpanScope&) = delete;
  static const Span& Current();

 private:
  Span previous_;
};

// The run's symbols: each symbolic dimension name of a model ("S", "seq") and the int64
// variable that holds its value in a kernel. Lowering opens one per kernel, so compute
// definitions can turn a result type's named dims into extents (compute::SymbolicResult).
//
// Type relations take a symbolic dim to be the extent it meets (x[N, 3] + y[4, 3] types as
// (4, 3); a matmul's contraction dims are taken to agree): compute definitions over symbolic
// tensors record each such assumption (RequireEqual), and lowering checks them when a run binds
// the symbols, so no kernel reads past a buffer whose real extent differs.
using SymbolVars = std::vector<std::pair<std::string, loop::Var>>;
struct SymbolEquality {
  PrimExpr left, right;
  Span span;  // the graph call that assumed it
};
class SymbolScope {
 public:
  // `symbols` may be null (no symbols: every dim must be static).
  explicit SymbolScope(const SymbolVars* symbols);
  ~SymbolScope();
  SymbolScope(const SymbolScope&) = delete;
  SymbolScope& operator=(const SymbolScope&) = delete;
  // The variable of `name`, or null when no scope is open or it has no such symbol.
  static loop::Var Lookup(const std::string& name);
  // Records, in the innermost open scope, that a run is valid only when the index expressions
  // `left` and `right` (extents, products of extents) are equal. Nothing when both are the
  // same expression or no scope is open.
  static void RequireEqual(const PrimExpr& left, const PrimExpr& right);
  // What this scope recorded, in order.
  const std::vector<SymbolEquality>& equalities() const { return equalities_; }

 private:
  const SymbolVars* symbols_;
  SymbolScope* previous_;
  std::vector<SymbolEquality> equalities_;
};

}  // namespace kiln::te
