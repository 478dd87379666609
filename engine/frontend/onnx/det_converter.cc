// Det as graph ops: Gaussian elimination with partial pivoting, unrolled over the static M of
// the [..., M, M] input, every matrix of the batch at once. Step k takes the largest |a_rk|
// (r >= k) as the pivot, swaps its row with row k (a gather of the rows; a swap negates the
// determinant), multiplies the determinant by the pivot and subtracts multiples of row k from
// the rows below. A zero pivot (a singular matrix) makes the determinant 0; the elimination
// then divides by 1 instead, so nothing becomes inf or NaN.
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The largest M unrolled: each step is a dozen graph ops over the whole batch.
constexpr int64_t kMaxDetOrder = 64;

absl::StatusOr<std::vector<Expr>> ConvertDet(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(type->shape.size());
  if (rank < 2 || !type->shape[rank - 1].is_static() ||
      type->shape[rank - 1] != type->shape[rank - 2]) {
    return ctx.Error("input 0 must be [..., M, M] with a static M");
  }
  if (type->dtype != DataType::kFloat32 && type->dtype != DataType::kFloat64) {
    return ctx.Error(absl::StrCat("input 0 must be float32 or float64, got ", DataTypeName(type->dtype)));
  }
  for (const Dim& d : type->shape) {
    if (!d.is_static()) return ctx.Error("input 0 must have a static shape");
  }
  const int64_t m = type->shape[rank - 1].value;
  if (m < 1 || m > kMaxDetOrder) {
    return ctx.Error(absl::StrCat("matrices of order ", m, "; Kiln unrolls orders 1 to ", kMaxDetOrder));
  }
  const DataType dt = type->dtype;
  auto scalar = [&](double v) { return ctx.Constant(ScalarTensor(dt, v)); };
  auto slice = [&](const Expr& e, int64_t axis, int64_t begin, int64_t end) {
    return ctx.Call("strided_slice", {e}, MakeAttrs({{"begin", IntArray({begin})}, {"end", IntArray({end})},
                                                    {"strides", IntArray({1})}, {"axes", IntArray({axis})}}));
  };
  std::vector<int64_t> positions(static_cast<size_t>(m));
  std::iota(positions.begin(), positions.end(), 0);
  Expr rows = ctx.Constant(Int64Tensor({m, 1}, positions));  // row positions along axis -2
  Expr det = scalar(1);
  for (int64_t k = 0; k < m; ++k) {
    // The pivot row: k + argmax |a[k:, k]|, [..., 1, 1].
    KILN_ASSIGN_OR_RETURN(Expr column, slice(a, rank - 1, k, k + 1));        // [..., M, 1]
    KILN_ASSIGN_OR_RETURN(Expr below, slice(column, rank - 2, k, m));        // [..., M-k, 1]
    KILN_ASSIGN_OR_RETURN(Expr magnitude, ctx.Call("abs", {below}));
    KILN_ASSIGN_OR_RETURN(Expr offset, ctx.Call("argmax", {magnitude},
                                                MakeAttrs({{"axis", rank - 2}, {"keepdims", true}})));
    KILN_ASSIGN_OR_RETURN(Expr pivot_row, ctx.Call("add", {offset, ctx.Constant(MakeScalar(k))}));
    // Rows k and pivot_row swapped: row r reads row pivot_row at r = k, row k at r = pivot_row.
    KILN_ASSIGN_OR_RETURN(Expr at_k, ctx.Call("equal", {rows, ctx.Constant(MakeScalar(k))}));
    KILN_ASSIGN_OR_RETURN(Expr at_pivot, ctx.Call("equal", {rows, pivot_row}));
    KILN_ASSIGN_OR_RETURN(Expr source, ctx.Call("where", {at_pivot, ctx.Constant(MakeScalar(k)), rows}));
    KILN_ASSIGN_OR_RETURN(source, ctx.Call("where", {at_k, pivot_row, source}));  // [..., M, 1]
    std::vector<Dim> full = type->shape;
    KILN_ASSIGN_OR_RETURN(source, ctx.Call("broadcast_to", {source}, MakeAttrs({{"shape", ShapeValue{full}}})));
    KILN_ASSIGN_OR_RETURN(a, ctx.Call("gather_elements", {a, source}, MakeAttrs({{"axis", rank - 2}})));
    KILN_ASSIGN_OR_RETURN(Expr swapped, ctx.Call("not_equal", {offset, ctx.Constant(MakeScalar(int64_t{0}))}));
    KILN_ASSIGN_OR_RETURN(Expr sign, ctx.Call("where", {swapped, scalar(-1), scalar(1)}));
    // The pivot a[k, k], [..., 1, 1]: into the determinant; the divisor 1 where it is 0.
    KILN_ASSIGN_OR_RETURN(Expr pivot_line, slice(a, rank - 2, k, k + 1));     // [..., 1, M]
    KILN_ASSIGN_OR_RETURN(Expr pivot, slice(pivot_line, rank - 1, k, k + 1));  // [..., 1, 1]
    KILN_ASSIGN_OR_RETURN(Expr step, ctx.Call("multiply", {pivot, sign}));
    KILN_ASSIGN_OR_RETURN(det, ctx.Call("multiply", {det, step}));
    if (k + 1 == m) break;
    KILN_ASSIGN_OR_RETURN(Expr zero_pivot, ctx.Call("equal", {pivot, scalar(0)}));
    KILN_ASSIGN_OR_RETURN(Expr divisor, ctx.Call("where", {zero_pivot, scalar(1), pivot}));
    // Rows below k lose (a[r, k] / pivot) times row k.
    KILN_ASSIGN_OR_RETURN(Expr lead, slice(a, rank - 1, k, k + 1));          // [..., M, 1]
    KILN_ASSIGN_OR_RETURN(Expr factor, ctx.Call("divide", {lead, divisor}));
    KILN_ASSIGN_OR_RETURN(Expr is_below, ctx.Call("greater", {rows, ctx.Constant(MakeScalar(k))}));
    KILN_ASSIGN_OR_RETURN(factor, ctx.Call("where", {is_below, factor, scalar(0)}));
    KILN_ASSIGN_OR_RETURN(Expr update, ctx.Call("multiply", {factor, pivot_line}));  // [..., M, M]
    KILN_ASSIGN_OR_RETURN(a, ctx.Call("subtract", {a, update}));
  }
  // [..., 1, 1] -> [...].
  std::vector<int64_t> batch;
  for (int64_t d = 0; d + 2 < rank; ++d) batch.push_back(type->shape[d].value);
  KILN_ASSIGN_OR_RETURN(det, ctx.Call("reshape", {det}, MakeAttrs({{"newshape", IntArray(batch)}})));
  return std::vector<Expr>{det};
}

}  // namespace

void RegisterDetConverter(ConverterTable& table) { table.Add("Det", ConvertDet); }

}  // namespace kiln::onnx_frontend
