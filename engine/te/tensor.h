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
#include <vector>

#include "absl/status/statusor.h"
#include "engine/loop/buffer.h"
#include "engine/loop/expr.h"

namespace kiln::te {

using loop::PrimExpr;

// An iteration axis over [0, extent): a data-parallel axis of a compute's
// output or a reduce axis.
struct IterVarNode {
  loop::Var var;
  int64_t extent;
  bool is_reduce;
};
using IterVar = std::shared_ptr<const IterVarNode>;

IterVar ReduceAxis(int64_t extent, std::string name = "k");

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
  const std::vector<int64_t>& shape() const { return op_->buffer->shape; }
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

}  // namespace kiln::te
