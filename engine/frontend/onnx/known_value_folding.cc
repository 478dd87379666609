// NonZero and Unique folded at import (known_value_folding.h).
#include "engine/frontend/onnx/known_value_folding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

std::vector<double> Values(const TensorData& data) {
  std::vector<double> out(static_cast<size_t>(data->NumElements()));
  DispatchDataType(data->dtype, [&]<DataType D>() {
    const auto* elements = data->data<DataTypeStorage<D>>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = ElementToDouble<D>(elements[i]);
  });
  return out;
}

}  // namespace

absl::StatusOr<Expr> FoldNonZero(ConvertContext& ctx, const TensorData& data) {
  const std::vector<int64_t>& shape = data->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return ctx.Error("input 0 must have rank 1 or more");
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(data->NumElements() * int64_t{sizeof(double)},
                                       "NonZero's reading of its input"));
  std::vector<double> values = Values(data);
  std::vector<int64_t> positions;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != 0) positions.push_back(static_cast<int64_t>(i));  // NaN counts as nonzero
  }
  const int64_t count = static_cast<int64_t>(positions.size());
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(rank * count * int64_t{sizeof(int64_t)}, "NonZero's indices"));
  std::vector<int64_t> out(static_cast<size_t>(rank * count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = positions[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[d * count + k] = rest % shape[d];
      rest /= shape[d];
    }
  }
  return ctx.Constant(Int64Tensor({rank, count}, out));
}

absl::StatusOr<std::vector<Expr>> FoldUnique(ConvertContext& ctx, const TensorData& data,
                                             std::optional<int64_t> axis, bool sorted) {
  std::vector<int64_t> shape = data->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t a = 0;
  if (axis) {
    a = *axis < 0 ? *axis + rank : *axis;
    if (a < 0 || a >= rank) {
      return ctx.Error(absl::StrCat("attribute 'axis' is ", *axis, " for input 0 of rank ", rank));
    }
  } else {
    shape = {data->NumElements()};  // over the flattened data
  }
  // Slice s along axis a: the elements with index s there, in row-major order of the others.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= shape[d];
  for (int64_t d = a + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
  const int64_t slices = shape[a];
  // The data read as doubles, each distinct slice's key in a map (its doubles and about 96
  // bytes of node), and the per-slice index tables.
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(
      2 * data->NumElements() * int64_t{sizeof(double)} + slices * (96 + 4 * int64_t{sizeof(int64_t)}),
      "Unique's reading of its input"));
  std::vector<double> values = Values(data);
  auto key = [&](int64_t s) {
    std::vector<double> k;
    k.reserve(static_cast<size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) k.push_back(values[(o * slices + s) * inner + i]);
    }
    return k;
  };
  // The distinct slices in first-occurrence order, with their first index and count. Keys compare
  // lexicographically under a total order (NaNs equal to each other, above every number).
  struct KeyLess {
    bool operator()(const std::vector<double>& x, const std::vector<double>& y) const {
      return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(), [](double p, double q) {
        if (std::isnan(p)) return false;
        return std::isnan(q) || p < q;
      });
    }
  };
  std::map<std::vector<double>, int64_t, KeyLess> seen;  // key -> position in `firsts`
  std::vector<int64_t> firsts, counts, inverse(static_cast<size_t>(slices));
  for (int64_t s = 0; s < slices; ++s) {
    auto [it, inserted] = seen.emplace(key(s), static_cast<int64_t>(firsts.size()));
    if (inserted) {
      firsts.push_back(s);
      counts.push_back(0);
    }
    ++counts[it->second];
    inverse[s] = it->second;
  }
  std::vector<int64_t> order(firsts.size());  // output position -> first-occurrence position
  std::iota(order.begin(), order.end(), 0);
  if (sorted) {
    std::vector<int64_t> rank_of(firsts.size());
    int64_t r = 0;
    for (const auto& [k, position] : seen) rank_of[position] = r++;  // the map is ordered
    for (size_t p = 0; p < firsts.size(); ++p) order[rank_of[p]] = static_cast<int64_t>(p);
    for (int64_t& v : inverse) v = rank_of[v];
  }
  const int64_t unique = static_cast<int64_t>(firsts.size());
  const int64_t element = static_cast<int64_t>(DataTypeBytes(data->dtype));
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(outer * unique * inner * element +
                                           (2 * unique + slices) * int64_t{sizeof(int64_t)},
                                       "Unique's outputs"));
  // Y: the unique slices, copied element by element from the data's bytes.
  std::string y_bytes;
  y_bytes.reserve(static_cast<size_t>(outer * unique * inner * element));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t u = 0; u < unique; ++u) {
      int64_t s = firsts[order[u]];
      y_bytes.append(data->bytes, static_cast<size_t>(((o * slices + s) * inner) * element),
                     static_cast<size_t>(inner * element));
    }
  }
  std::vector<int64_t> y_shape = shape;
  y_shape[a] = unique;
  std::vector<int64_t> indices, ordered_counts;
  for (int64_t u = 0; u < unique; ++u) {
    indices.push_back(firsts[order[u]]);
    ordered_counts.push_back(counts[order[u]]);
  }
  return std::vector<Expr>{
      ctx.Constant(MakeTensorData(data->dtype, y_shape, std::move(y_bytes))),
      ctx.Constant(Int64Tensor({unique}, indices)), ctx.Constant(Int64Tensor({slices}, inverse)),
      ctx.Constant(Int64Tensor({unique}, ordered_counts))};
}

}  // namespace kiln::onnx_frontend
