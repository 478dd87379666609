// Building blocks shared by the op compute definitions (engine/op/compute/):
// reading the call's static result shape, numpy broadcast index mapping,
// index normalization and clamping, constants and casts, and the "compute
// type" rule that half-precision arithmetic runs in float32.
//
// Every load a compute emits must be in bounds for every point of its
// iteration domain, even where a select or a reduction condition discards the
// value: lowering may evaluate both sides of a select. ClampIndex exists for
// that.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/op/op_registry.h"
#include "engine/te/tensor.h"

namespace kiln::compute {

using loop::PrimExpr;
using loop::Var;
using te::Tensor;

// The static extents of a tensor type; a symbolic dim is an Unimplemented
// error naming `op` (Kiln's loop IR has static shapes only).
absl::StatusOr<std::vector<int64_t>> StaticShape(const Type& type, std::string_view op);

// The call's single tensor result (dtype and static shape).
struct ResultTensor {
  DataType dtype;
  std::vector<int64_t> shape;  // -1 for a symbolic dim (SymbolicResult)
  std::vector<PrimExpr> dims;  // every dim as an extent (constants for static dims)
};
absl::StatusOr<ResultTensor> TensorResult(const ComputeInput& in, std::string_view op);
// The same for compute definitions written over dims(): a dim named by a symbol of the open
// te::SymbolScope is that symbol's variable; an unnamed symbolic dim (one no input names, such
// as a reshape's merge of a symbolic dim with another) is an Unimplemented error naming `op`.
absl::StatusOr<ResultTensor> SymbolicResult(const ComputeInput& in, std::string_view op);
// The extents of a tensor type's dims (see SymbolicResult).
absl::StatusOr<std::vector<PrimExpr>> SymbolicShape(const Type& type, std::string_view op);
// Every field of a tuple result, in order.
absl::StatusOr<std::vector<ResultTensor>> TupleResult(const ComputeInput& in, std::string_view op);

// InvalidArgument unless the call has `count` input tensors.
absl::Status ExpectInputs(const ComputeInput& in, size_t count, std::string_view op);

// "T_add" for "add", "T_relu" for "nn.relu": the name of an op's main compute.
std::string ComputeName(std::string_view op);

std::vector<PrimExpr> AsExprs(const std::vector<Var>& vars);
// An int64 index immediate.
PrimExpr Index(int64_t value);
// `value` in `dtype` (an IntImm or FloatImm).
PrimExpr Const(DataType dtype, double value);
// The largest / smallest value of `dtype` (+-inf for floats).
PrimExpr HighestValue(DataType dtype);
PrimExpr LowestValue(DataType dtype);
PrimExpr Cast(DataType dtype, const PrimExpr& value);
// ONNX Cast semantics: to bool is `value != 0` (NaN is true); everything
// else is a numeric conversion (floats truncate toward zero to integers).
PrimExpr ConvertTo(DataType dtype, const PrimExpr& value);

// Half-precision arithmetic runs in float32 (rounded back when stored); all
// other dtypes compute in themselves.
DataType ComputeType(DataType dtype);
// The value converted to ComputeType(value's dtype).
PrimExpr Widen(const PrimExpr& value);

// Conjunction of `terms`; true when empty.
PrimExpr AllOf(const std::vector<PrimExpr>& terms);
// 0 <= index < extent.
PrimExpr InRange(const PrimExpr& index, int64_t extent);
// index clamped into [0, extent - 1] (extent must be >= 1).
PrimExpr ClampIndex(const PrimExpr& index, int64_t extent);
// An index read from a tensor: converted to int64, negative values counting
// from the end of an axis of `extent`, then clamped into the axis (out of
// range indices are the user's error; clamping keeps the load in bounds).
PrimExpr NormalizeIndex(const PrimExpr& index, int64_t extent);

// The indices to read `input` at for the output point `out_indices` under
// numpy broadcasting (dims aligned from the right; extent-1 dims read 0).
std::vector<PrimExpr> BroadcastIndices(const Tensor& input,
                                       const std::vector<PrimExpr>& out_indices);

// Records (te::SymbolScope::RequireEqual) what a broadcast of `input` to `out_dims` assumes:
// each of its dims that is not a static 1 equals the output's it lines up with.
void RequireBroadcastable(const Tensor& input, const std::vector<PrimExpr>& out_dims);
// Records that `input` has exactly `dims` (an op whose result takes its input's shape).
void RequireDims(const Tensor& input, const std::vector<PrimExpr>& dims);

// Row-major flat index of `indices` in `shape`, and its inverse.
PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape);
std::vector<PrimExpr> Unravel(const PrimExpr& flat, const std::vector<int64_t>& shape);
// The same over extents that may be symbolic.
PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<PrimExpr>& shape);
std::vector<PrimExpr> Unravel(const PrimExpr& flat, const std::vector<PrimExpr>& shape);

int64_t Product(const std::vector<int64_t>& values);
// The product of extents as an index expression (folded when they are constants).
PrimExpr Product(const std::vector<PrimExpr>& values);
// `axis` in [-rank, rank) as [0, rank); the type relation already checked it.
int64_t NormalizedAxis(int64_t axis, int64_t rank);

// A copy of `input` with `shape` and dtype, read at `index_of(out indices)`.
Tensor Gather(const std::string& name, const std::vector<int64_t>& shape, const Tensor& input,
              const std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)>& index_of,
              const std::string& tag = "injective");
Tensor Gather(const std::string& name, const std::vector<PrimExpr>& shape, const Tensor& input,
              const std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)>& index_of,
              const std::string& tag = "injective");

// `t` converted to `dtype` by one more stage named `name` (tag "elemwise"),
// or `t` itself when it already has that dtype: how float32 accumulations of
// half-precision ops return to the op's dtype.
Tensor CastStage(const Tensor& t, DataType dtype, const std::string& name);
// `name`, or `name` + "_acc" when CastStage will add a final stage.
std::string AccumulatorName(const std::string& name, DataType acc, DataType result);

inline std::vector<Tensor> One(Tensor t) { return std::vector<Tensor>{std::move(t)}; }

}  // namespace kiln::compute
