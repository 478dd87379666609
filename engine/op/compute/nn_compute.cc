// Compute definitions of the nn family (nn.cc): dense and matmul, bias_add,
// the normalizations (batch, instance, layer, local response), softmax,
// log_softmax and hardmax, pad, depth_to_space and space_to_depth. Window ops
// are in window_compute.cc, resizing in image_compute.cc.
//
// Multi-stage ops return their last stage; the earlier ones (statistics,
// maxima, sums) are inputs of the later computes. Statistics and products of
// half-precision inputs accumulate in float32, as ONNX's stash type does.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::AsExprs;
using compute::Cast;
using compute::Const;
using compute::Index;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;
using loop::Intrinsic;
using te::IterVar;

using ComputeResult = absl::StatusOr<std::vector<Tensor>>;

// ---- dense / matmul ------------------------------------------------------------

// x (..., K) times weight (N, K) transposed.
ComputeResult DenseCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "nn.dense"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "nn.dense"));
  const Tensor& x = in.inputs[0];
  const Tensor& w = in.inputs[1];
  DataType acc = compute::ComputeType(result.dtype);
  IterVar k = te::ReduceAxis(x.dim(x.ndim() - 1), "k");
  te::SymbolScope::RequireEqual(x.dim(x.ndim() - 1), w.dim(1));
  for (int d = 0; d + 1 < x.ndim(); ++d) te::SymbolScope::RequireEqual(x.dim(d), result.dims[d]);
  te::SymbolScope::RequireEqual(w.dim(0), result.dims.back());
  Tensor product = te::ComputeOver(
      compute::AccumulatorName("dense", acc, result.dtype), result.dims, {x, w},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> xi = AsExprs(i);
        PrimExpr n = xi.back();
        xi.back() = k->var;
        return te::Sum(Cast(acc, x(xi)) * Cast(acc, w(n, k->var)), {k});
      },
      "dense");
  return compute::One(compute::CastStage(product, result.dtype, "dense"));
}

// numpy.matmul: 1-D operands are promoted (and the added dim dropped), batch
// dims broadcast, transpose_a/b swap the last two dims of 2-D+ operands.
ComputeResult MatmulCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "nn.matmul"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "nn.matmul"));
  const Tensor& a = in.inputs[0];
  const Tensor& b = in.inputs[1];
  bool a_vector = a.ndim() == 1, b_vector = b.ndim() == 1;
  bool ta = !a_vector && BoolAttr(in.attrs, "transpose_a");
  bool tb = !b_vector && BoolAttr(in.attrs, "transpose_b");
  PrimExpr k_extent = a_vector ? a.dim(0) : a.dim(a.ndim() - (ta ? 2 : 1));
  int batch_rank = static_cast<int>(result.shape.size()) - (a_vector ? 0 : 1) - (b_vector ? 0 : 1);
  DataType acc = compute::ComputeType(result.dtype);
  IterVar k = te::ReduceAxis(k_extent, "k");
  // The relation took the contraction dims, and each operand's batch dims and matrix dims, to
  // be the result's.
  te::SymbolScope::RequireEqual(k_extent, b_vector ? b.dim(0) : b.dim(b.ndim() - (tb ? 1 : 2)));
  for (const Tensor* t : {&a, &b}) {
    if (t->ndim() < 2) continue;
    int t_batch = t->ndim() - 2;
    for (int d = 0; d < t_batch; ++d) {
      if (t->shape()[d] != 1) {
        te::SymbolScope::RequireEqual(t->dim(d), result.dims[batch_rank - t_batch + d]);
      }
    }
  }
  if (!a_vector) {
    te::SymbolScope::RequireEqual(a.dim(a.ndim() - (ta ? 1 : 2)), result.dims[batch_rank]);
  }
  if (!b_vector) te::SymbolScope::RequireEqual(b.dim(b.ndim() - (tb ? 2 : 1)), result.dims.back());

  // An operand's indices: its batch dims broadcast against the output's,
  // then (row, col) of its matrix.
  auto operand = [&](const Tensor& t, const std::vector<PrimExpr>& batch, PrimExpr row,
                     PrimExpr col, bool transposed) {
    std::vector<PrimExpr> idx;
    int t_batch = t.ndim() - 2;
    for (int d = 0; d < t_batch; ++d) {
      idx.push_back(t.shape()[d] == 1 ? Index(0) : batch[batch_rank - t_batch + d]);
    }
    if (transposed) std::swap(row, col);
    idx.push_back(row);
    idx.push_back(col);
    return t(idx);
  };
  Tensor product = te::ComputeOver(
      compute::AccumulatorName("matmul", acc, result.dtype), result.dims, {a, b},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> out = AsExprs(i);
        std::vector<PrimExpr> batch(out.begin(), out.begin() + batch_rank);
        size_t next = batch_rank;
        PrimExpr va = a_vector ? a(PrimExpr(k->var)) : operand(a, batch, out[next++], k->var, ta);
        PrimExpr vb = b_vector ? b(PrimExpr(k->var)) : operand(b, batch, k->var, out[next], tb);
        return te::Sum(Cast(acc, va) * Cast(acc, vb), {k});
      },
      "matmul");
  return compute::One(compute::CastStage(product, result.dtype, "matmul"));
}

// ---- bias_add and the normalizations ----------------------------------------------------

ComputeResult BiasAddCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "nn.bias_add"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "nn.bias_add"));
  const Tensor& x = in.inputs[0];
  const Tensor& bias = in.inputs[1];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  compute::RequireDims(x, result.dims);
  te::SymbolScope::RequireEqual(bias.dim(0), x.dim(static_cast<int>(axis)));
  return compute::One(te::ComputeOver(
      "T_bias_add", result.dims, {x, bias},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return Cast(result.dtype, compute::Widen(x(AsExprs(i))) + compute::Widen(bias(i[axis])));
      },
      "broadcast"));
}

// (x - mean) / sqrt(var + epsilon) * gamma + beta, per channel.
ComputeResult BatchNormCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 5, "nn.batch_norm"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "nn.batch_norm"));
  const Tensor& x = in.inputs[0];
  const Tensor& gamma = in.inputs[1];
  const Tensor& beta = in.inputs[2];
  const Tensor& mean = in.inputs[3];
  const Tensor& var = in.inputs[4];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  double epsilon = FloatAttr(in.attrs, "epsilon");
  return compute::One(te::Compute(
      "T_batch_norm", result.shape, {x, gamma, beta, mean, var},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr c = i[axis];
        PrimExpr v = compute::Widen(x(AsExprs(i)));
        DataType ct = v->type.dtype;
        PrimExpr std_dev =
            loop::MakeIntrinsic(Intrinsic::kSqrt, {compute::Widen(var(c)) + Const(ct, epsilon)});
        PrimExpr y = (v - compute::Widen(mean(c))) / std_dev * compute::Widen(gamma(c)) +
                     compute::Widen(beta(c));
        return Cast(result.dtype, y);
      },
      "injective"));
}

// ---- row statistics --------------------------------------------------------------

// Indices of a point of x with `axis` removed (the per-row statistics).
std::vector<PrimExpr> WithoutAxis(const std::vector<PrimExpr>& idx, int64_t axis) {
  std::vector<PrimExpr> out = idx;
  out.erase(out.begin() + axis);
  return out;
}

std::vector<PrimExpr> WithAxis(const std::vector<PrimExpr>& row, int64_t axis, PrimExpr k) {
  std::vector<PrimExpr> out = row;
  out.insert(out.begin() + axis, std::move(k));
  return out;
}

// A row statistic (softmax, layer normalization) over the last axis, when that axis is a multiple of kSoftmaxPartials long (and at
// least twice that), reduces each row in two stages: kSoftmaxPartials partial results, partial
// l over elements l, l + 8, l + 16, ... (a reduction whose lanes read contiguous elements), then
// those combined. One stage would reduce along the contiguous axis with one accumulator per row,
// which the default schedule can only vectorize across rows: a strided gather per element.
constexpr int64_t kSoftmaxPartials = 8;

// The per-row statistic of `x` along `axis` (of `extent`): reduce(value(index of x)) over the
// axis, as one reduction or, for a long contiguous last axis, in two stages (above).
// `reduce` is te::Max or te::Sum; `value` maps an index of x to the reduced value.
template <typename Reduce, typename Value>
Tensor RowReduction(const std::string& name, const std::vector<PrimExpr>& row_shape,
                    const std::vector<Tensor>& inputs, int64_t axis, const PrimExpr& axis_extent,
                    int64_t ndim, Reduce reduce, Value value) {
  int64_t extent = -1;  // a symbolic axis: one reduction
  loop::AsConstInt(axis_extent, &extent);
  if (axis != ndim - 1 || extent < 0 || extent % kSoftmaxPartials != 0 ||
      extent < 2 * kSoftmaxPartials) {
    IterVar k = te::ReduceAxis(axis_extent, "k");
    return te::ComputeOver(
        name, row_shape, inputs,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          return reduce(value(WithAxis(AsExprs(i), axis, k->var)), std::vector<IterVar>{k});
        },
        "reduce");
  }
  std::vector<PrimExpr> partial_shape = row_shape;
  partial_shape.push_back(Index(kSoftmaxPartials));
  IterVar kk = te::ReduceAxis(extent / kSoftmaxPartials, "kk");
  Tensor partial = te::ComputeOver(
      name + "_partial", partial_shape, inputs,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> row = AsExprs(i);
        PrimExpr lane = row.back();
        row.pop_back();
        PrimExpr k = kk->var * Index(kSoftmaxPartials) + lane;
        return reduce(value(WithAxis(row, axis, k)), std::vector<IterVar>{kk});
      },
      "reduce");
  IterVar l = te::ReduceAxis(kSoftmaxPartials, "l");
  return te::ComputeOver(
      name, row_shape, {partial},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx.push_back(l->var);
        return reduce(partial(idx), std::vector<IterVar>{l});
      },
      "reduce");
}

// Mean and variance of `x` over the axes `reduced` marks, as tensors over
// the kept axes (in order), in float32 for halves.
struct Moments {
  Tensor mean, variance;
  std::vector<bool> reduced;

  // The statistics' indices for a point of x.
  std::vector<PrimExpr> StatIndices(const std::vector<PrimExpr>& x_indices) const {
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (!reduced[d]) out.push_back(x_indices[d]);
    }
    return out;
  }
};

Moments ComputeMoments(const Tensor& x, std::vector<bool> reduced, const std::string& name) {
  Moments m;
  m.reduced = std::move(reduced);
  std::vector<PrimExpr> stat_shape;
  std::vector<PrimExpr> counted;
  for (int d = 0; d < x.ndim(); ++d) {
    (m.reduced[d] ? counted : stat_shape).push_back(x.dim(d));
  }
  DataType acc = compute::ComputeType(x.dtype());
  PrimExpr count = compute::Product(counted);
  int64_t static_count;
  PrimExpr divisor = loop::AsConstInt(count, &static_count)
                         ? Const(acc, static_cast<double>(static_count))
                         : Cast(acc, count);
  const int64_t last = x.ndim() - 1;
  if (std::count(m.reduced.begin(), m.reduced.end(), true) == 1 && m.reduced.back()) {
    // Over the contiguous last axis alone (a transformer's layer norm): reductions whose lanes
    // read contiguous elements (RowReduction), so a row's statistics vectorize.
    auto sum = [](PrimExpr v, std::vector<IterVar> axes) { return te::Sum(std::move(v), std::move(axes)); };
    Tensor total = RowReduction(
        name + "_sum", stat_shape, {x}, last, x.dim(last), x.ndim(), sum,
        [&](const std::vector<PrimExpr>& idx) { return Cast(acc, x(idx)); });
    m.mean = te::ComputeOver(
        name + "_mean", stat_shape, {total},
        [&](const std::vector<Var>& i) -> te::ComputeBody { return total(AsExprs(i)) / divisor; },
        "elemwise");
    Tensor squares = RowReduction(
        name + "_sqsum", stat_shape, {x, m.mean}, last, x.dim(last), x.ndim(), sum,
        [&](const std::vector<PrimExpr>& idx) {
          PrimExpr d = Cast(acc, x(idx)) - m.mean(WithoutAxis(idx, last));
          return d * d;
        });
    m.variance = te::ComputeOver(
        name + "_var", stat_shape, {squares},
        [&](const std::vector<Var>& i) -> te::ComputeBody { return squares(AsExprs(i)) / divisor; },
        "elemwise");
    return m;
  }
  // The x indices for a statistic's point and fresh reduce axes.
  auto point = [&](const std::vector<PrimExpr>& stat, std::vector<IterVar>* axes) {
    std::vector<PrimExpr> idx;
    size_t next = 0;
    for (int d = 0; d < x.ndim(); ++d) {
      if (m.reduced[d]) {
        axes->push_back(te::ReduceAxis(x.dim(d), absl::StrCat("k", d)));
        idx.push_back(axes->back()->var);
      } else {
        idx.push_back(stat[next++]);
      }
    }
    return idx;
  };
  Tensor sum = te::ComputeOver(
      name + "_sum", stat_shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<IterVar> axes;
        std::vector<PrimExpr> idx = point(AsExprs(i), &axes);
        return te::Sum(Cast(acc, x(idx)), axes);
      },
      "reduce");
  m.mean = te::ComputeOver(
      name + "_mean", stat_shape, {sum},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return sum(AsExprs(i)) / divisor; },
      "elemwise");
  Tensor squares = te::ComputeOver(
      name + "_sqsum", stat_shape, {x, m.mean},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<IterVar> axes;
        std::vector<PrimExpr> idx = point(AsExprs(i), &axes);
        PrimExpr d = Cast(acc, x(idx)) - m.mean(AsExprs(i));
        return te::Sum(d * d, axes);
      },
      "reduce");
  m.variance = te::ComputeOver(
      name + "_var", stat_shape, {squares},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return squares(AsExprs(i)) / divisor; },
      "elemwise");
  return m;
}

// Each (sample, channel) normalized over the remaining (spatial) axes, then
// gamma * (x - mean) / sqrt(var + epsilon) + beta per channel.
ComputeResult InstanceNormCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "nn.instance_norm"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "nn.instance_norm"));
  const Tensor& x = in.inputs[0];
  const Tensor& gamma = in.inputs[1];
  const Tensor& beta = in.inputs[2];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  double epsilon = FloatAttr(in.attrs, "epsilon");
  std::vector<bool> reduced(x.ndim(), true);
  reduced[0] = reduced[axis] = false;
  Moments m = ComputeMoments(x, reduced, "T_instance_norm");
  return compute::One(te::Compute(
      "T_instance_norm", result.shape, {x, gamma, beta, m.mean, m.variance},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> xi = AsExprs(i);
        std::vector<PrimExpr> si = m.StatIndices(xi);
        PrimExpr v = compute::Widen(x(xi));
        DataType ct = v->type.dtype;
        PrimExpr std_dev =
            loop::MakeIntrinsic(Intrinsic::kSqrt, {m.variance(si) + Const(ct, epsilon)});
        PrimExpr y = compute::Widen(gamma(i[axis])) * (v - m.mean(si)) / std_dev +
                     compute::Widen(beta(i[axis]));
        return Cast(result.dtype, y);
      },
      "injective"));
}

// Normalized over axes axis..rank-1 together: (x - mean) * (1 / sqrt(var +
// epsilon)) * gamma + beta, gamma and beta broadcast to those axes.
ComputeResult LayerNormCompute(const ComputeInput& in) {
  if (in.inputs.size() != 2 && in.inputs.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("nn.layer_norm: expected 2 or 3 input tensors, got ", in.inputs.size()));
  }
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "nn.layer_norm"));
  const Tensor& x = in.inputs[0];
  const Tensor& gamma = in.inputs[1];
  bool has_beta = in.inputs.size() == 3;
  Tensor beta = has_beta ? in.inputs[2] : Tensor();
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  double epsilon = FloatAttr(in.attrs, "epsilon");
  std::vector<bool> reduced(x.ndim(), false);
  for (int d = static_cast<int>(axis); d < x.ndim(); ++d) reduced[d] = true;
  Moments m = ComputeMoments(x, reduced, "T_layer_norm");
  compute::RequireDims(x, result.dims);
  compute::RequireBroadcastable(gamma, result.dims);
  if (has_beta) compute::RequireBroadcastable(beta, result.dims);
  std::vector<Tensor> inputs = {x, gamma, m.mean, m.variance};
  if (has_beta) inputs.push_back(beta);
  return compute::One(te::ComputeOver(
      "T_layer_norm", result.dims, inputs,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> xi = AsExprs(i);
        std::vector<PrimExpr> si = m.StatIndices(xi);
        PrimExpr v = compute::Widen(x(xi));
        DataType ct = v->type.dtype;
        PrimExpr inv_std =
            Const(ct, 1) /
            loop::MakeIntrinsic(Intrinsic::kSqrt, {m.variance(si) + Const(ct, epsilon)});
        PrimExpr y = (v - m.mean(si)) * inv_std *
                     compute::Widen(gamma(compute::BroadcastIndices(gamma, xi)));
        if (has_beta) y = y + compute::Widen(beta(compute::BroadcastIndices(beta, xi)));
        return Cast(result.dtype, y);
      },
      te::kRowNormalizationTag));
}

// x / (bias + alpha / size * sum of squares over the `size` channels
// centred on c (floor((size-1)/2) before, ceil((size-1)/2) after)) ^ beta.
ComputeResult LrnCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "nn.lrn"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "nn.lrn"));
  const Tensor& x = in.inputs[0];
  int64_t size = IntAttr(in.attrs, "size");
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  double alpha = FloatAttr(in.attrs, "alpha");
  double beta = FloatAttr(in.attrs, "beta");
  double bias = FloatAttr(in.attrs, "bias");
  int64_t channels = x.shape()[axis];
  DataType acc = compute::ComputeType(x.dtype());
  IterVar r = te::ReduceAxis(size, "r");
  Tensor square_sum = te::Compute(
      "T_lrn_sqsum", result.shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        PrimExpr c = idx[axis] - (size - 1) / 2 + r->var;
        idx[axis] = compute::ClampIndex(c, channels);
        PrimExpr v = Cast(acc, x(idx));
        return te::Sum(v * v, {r}, compute::InRange(c, channels));
      },
      "reduce");
  return compute::One(te::Compute(
      "T_lrn", result.shape, {x, square_sum},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr base = Const(acc, bias) +
                        Const(acc, alpha / static_cast<double>(size)) * square_sum(AsExprs(i));
        PrimExpr denominator = loop::MakeIntrinsic(Intrinsic::kPow, {base, Const(acc, beta)});
        return Cast(result.dtype, Cast(acc, x(AsExprs(i))) / denominator);
      },
      "injective"));
}

// ---- softmax family ---------------------------------------------------------------

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

void Softmax(OpRegistry& registry, const std::string& op, SoftmaxKind kind) {
  registry.SetSymbolicCompute(op, [op, kind](const ComputeInput& in) -> ComputeResult {
    KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
    KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, op));
    const Tensor& x = in.inputs[0];
    int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
    PrimExpr extent = x.dim(axis);
    compute::RequireDims(x, result.dims);
    std::vector<PrimExpr> row_shape = x.dims();
    row_shape.erase(row_shape.begin() + axis);
    DataType acc = compute::ComputeType(x.dtype());
    std::string name = compute::ComputeName(op);
    auto load = [&](const std::vector<PrimExpr>& idx) { return Cast(acc, x(idx)); };

    auto max = [](PrimExpr v, std::vector<IterVar> axes) { return te::Max(std::move(v), std::move(axes)); };
    auto sum = [](PrimExpr v, std::vector<IterVar> axes) { return te::Sum(std::move(v), std::move(axes)); };
    const int64_t ndim = x.ndim();
    const char* tag = axis == ndim - 1 ? te::kRowNormalizationTag : "softmax";
    Tensor max_elem =
        RowReduction(name + "_maxelem", row_shape, {x}, axis, extent, ndim, max, load);

    if (kind == SoftmaxKind::kHardmax) {
      IterVar k = te::ReduceAxis(extent, "k");
      Tensor first = te::ComputeOver(
          name + "_argmax", row_shape, {x, max_elem},
          [&](const std::vector<Var>& i) -> te::ComputeBody {
            std::vector<PrimExpr> row = AsExprs(i);
            PrimExpr hit = loop::Equal(load(WithAxis(row, axis, k->var)), max_elem(row));
            return te::Min(k->var, {k}, hit);
          },
          "reduce");
      return compute::One(te::ComputeOver(
          name, result.dims, {first},
          [&](const std::vector<Var>& i) -> te::ComputeBody {
            std::vector<PrimExpr> idx = AsExprs(i);
            return loop::MakeSelect(loop::Equal(idx[axis], first(WithoutAxis(idx, axis))),
                                    Const(result.dtype, 1), Const(result.dtype, 0));
          },
          "injective"));
    }

    auto shifted_exp = [&](const std::vector<PrimExpr>& idx) {
      return loop::MakeIntrinsic(Intrinsic::kExp, {load(idx) - max_elem(WithoutAxis(idx, axis))});
    };
    if (kind == SoftmaxKind::kLogSoftmax) {
      Tensor exp_sum = RowReduction(name + "_expsum", row_shape, {x, max_elem}, axis, extent,
                                    ndim, sum, shifted_exp);
      return compute::One(te::ComputeOver(
          name, result.dims, {x, max_elem, exp_sum},
          [&](const std::vector<Var>& i) -> te::ComputeBody {
            std::vector<PrimExpr> idx = AsExprs(i);
            std::vector<PrimExpr> row = WithoutAxis(idx, axis);
            PrimExpr y =
                load(idx) - max_elem(row) - loop::MakeIntrinsic(Intrinsic::kLog, {exp_sum(row)});
            return Cast(result.dtype, y);
          },
          tag));
    }

    Tensor exp = te::ComputeOver(
        name + "_exp", x.dims(), {x, max_elem},
        [&](const std::vector<Var>& i) -> te::ComputeBody { return shifted_exp(AsExprs(i)); },
        "injective");
    Tensor exp_sum = RowReduction(name + "_expsum", row_shape, {exp}, axis, extent, ndim, sum,
                                  [&](const std::vector<PrimExpr>& idx) { return exp(idx); });
    return compute::One(te::ComputeOver(
        name, result.dims, {exp, exp_sum},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<PrimExpr> idx = AsExprs(i);
          return Cast(result.dtype, exp(idx) / exp_sum(WithoutAxis(idx, axis)));
        },
        tag));
  });
}

// ---- pad and block rearrangement ------------------------------------------------

// Element j of an axis of `extent` reflected about both ends (numpy's
// "reflect": the edge is not repeated), for any j.
PrimExpr Reflect(const PrimExpr& j, int64_t extent) {
  if (extent == 1) return Index(0);
  int64_t period = 2 * (extent - 1);
  PrimExpr m = loop::FloorMod(j, period);
  return loop::MakeSelect(m >= Index(extent), Index(period) - m, m);
}

ComputeResult PadCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "nn.pad"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "nn.pad"));
  const Tensor& x = in.inputs[0];
  const Tensor& pad_value = in.inputs[1];
  std::vector<int64_t> width = IntArrayAttr(in.attrs, "pad_width");
  const std::string& mode = StringAttr(in.attrs, "pad_mode");
  int rank = x.ndim();
  bool empty_input = compute::Product(x.shape()) == 0;
  return compute::One(te::Compute(
      "T_pad", result.shape, {x, pad_value},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr fill = pad_value(std::vector<PrimExpr>(pad_value.ndim(), Index(0)));
        if (empty_input) return fill;
        std::vector<PrimExpr> src;
        std::vector<PrimExpr> inside;
        for (int d = 0; d < rank; ++d) {
          int64_t extent = x.shape()[d];
          PrimExpr j = i[d] - width[d];
          if (mode == "reflect") {
            src.push_back(Reflect(j, extent));
          } else {
            if (mode == "constant") inside.push_back(compute::InRange(j, extent));
            src.push_back(compute::ClampIndex(j, extent));
          }
        }
        if (inside.empty()) return x(src);
        return loop::MakeSelect(compute::AllOf(inside), x(src), fill);
      },
      "injective"));
}

// DCR: the channel is (row offset, column offset, depth); CRD: (depth, row
// offset, column offset).
ComputeResult DepthToSpaceCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "nn.depth_to_space"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "nn.depth_to_space"));
  const Tensor& x = in.inputs[0];
  int64_t b = IntAttr(in.attrs, "block_size");
  bool dcr = StringAttr(in.attrs, "mode") == "DCR";
  int64_t depth = result.shape[1];
  return compute::One(
      compute::Gather("T_depth_to_space", result.shape, x, [&](const std::vector<PrimExpr>& o) {
        PrimExpr bh = loop::FloorMod(o[2], b), bw = loop::FloorMod(o[3], b);
        PrimExpr c = dcr ? (bh * b + bw) * depth + o[1] : (o[1] * b + bh) * b + bw;
        return std::vector<PrimExpr>{o[0], c, loop::FloorDiv(o[2], b), loop::FloorDiv(o[3], b)};
      }));
}

// Output channel (row offset, column offset, input channel), like ONNX's
// reshape-transpose-reshape definition.
ComputeResult SpaceToDepthCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "nn.space_to_depth"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "nn.space_to_depth"));
  const Tensor& x = in.inputs[0];
  int64_t b = IntAttr(in.attrs, "block_size");
  int64_t channels = x.shape()[1];
  return compute::One(
      compute::Gather("T_space_to_depth", result.shape, x, [&](const std::vector<PrimExpr>& o) {
        PrimExpr c = loop::FloorMod(o[1], channels);
        PrimExpr block = loop::FloorDiv(o[1], channels);
        PrimExpr bh = loop::FloorDiv(block, b), bw = loop::FloorMod(block, b);
        return std::vector<PrimExpr>{o[0], c, o[2] * b + bh, o[3] * b + bw};
      }));
}

}  // namespace

void RegisterNnComputes(OpRegistry& registry) {
  RegisterWindowComputes(registry);
  RegisterImageComputes(registry);
  registry.SetSymbolicCompute("nn.dense", DenseCompute);
  registry.SetSymbolicCompute("nn.matmul", MatmulCompute);
  registry.SetSymbolicCompute("nn.bias_add", BiasAddCompute);
  registry.SetCompute("nn.batch_norm", BatchNormCompute);
  registry.SetCompute("nn.instance_norm", InstanceNormCompute);
  registry.SetSymbolicCompute("nn.layer_norm", LayerNormCompute);
  registry.SetCompute("nn.lrn", LrnCompute);
  Softmax(registry, "nn.softmax", SoftmaxKind::kSoftmax);
  Softmax(registry, "nn.log_softmax", SoftmaxKind::kLogSoftmax);
  Softmax(registry, "nn.hardmax", SoftmaxKind::kHardmax);
  registry.SetCompute("nn.pad", PadCompute);
  registry.SetCompute("nn.depth_to_space", DepthToSpaceCompute);
  registry.SetCompute("nn.space_to_depth", SpaceToDepthCompute);
}

}  // namespace kiln
