// Compute definitions of the sliding-window ops (nn_window.cc) in NC[D]HW
// layout, for 1 to 3 spatial dims: convolution (a zero-padding stage, then
// the reduction over input channels of the group and the kernel), transposed
// convolution (a gather over the input points that scatter into each output
// point), max and average pooling (padding excluded from the max, and from
// the divisor unless count_include_pad), and global pooling.
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
using te::IterVar;

using ComputeResult = absl::StatusOr<std::vector<Tensor>>;

struct Window {
  std::vector<int64_t> strides, dilation, pad_begin, pad_end;
};

// Strides, dilation and padding of an n-D window op (padding: n values for
// both ends or 2n, all begins then all ends).
Window ReadWindow(const AttrsNode& attrs, int n) {
  Window w;
  w.strides = IntArrayAttr(attrs, "strides");
  w.dilation = IntArrayAttr(attrs, "dilation");
  std::vector<int64_t> padding = IntArrayAttr(attrs, "padding");
  w.pad_begin.assign(padding.begin(), padding.begin() + n);
  if (padding.size() == static_cast<size_t>(2 * n)) {
    w.pad_end.assign(padding.begin() + n, padding.end());
  } else {
    w.pad_end = w.pad_begin;
  }
  return w;
}

// data (N, C, *spatial) with zeros around the spatial dims; `data` itself
// when there is no padding.
Tensor ZeroPad(const Tensor& data, const Window& w, const std::string& name) {
  int n = data.ndim() - 2;
  bool any = false;
  std::vector<int64_t> shape = data.shape();
  for (int d = 0; d < n; ++d) {
    any |= w.pad_begin[d] != 0 || w.pad_end[d] != 0;
    shape[2 + d] += w.pad_begin[d] + w.pad_end[d];
  }
  if (!any) return data;
  return te::Compute(
      name, shape, {data},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        std::vector<PrimExpr> inside;
        for (int d = 0; d < n; ++d) {
          int64_t extent = data.shape()[2 + d];
          PrimExpr j = idx[2 + d] - w.pad_begin[d];
          inside.push_back(compute::InRange(j, extent));
          idx[2 + d] = compute::ClampIndex(j, extent);
        }
        return loop::MakeSelect(compute::AllOf(inside), data(idx), Const(data.dtype(), 0));
      },
      te::kPadTag);
}

// data[n, c, y * stride] over the spatial extents of `out_shape`: the points a strided 1x1
// window reads, as their own stage (te::kPadTag: materialized, not inlined).
Tensor Subsample(const Tensor& data, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& out_shape, const std::string& name) {
  std::vector<int64_t> shape = {data.shape()[0], data.shape()[1]};
  shape.insert(shape.end(), out_shape.begin() + 2, out_shape.end());
  return te::Compute(
      name, shape, {data},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        for (size_t d = 2; d < idx.size(); ++d) idx[d] = idx[d] * strides[d - 2];
        return data(idx);
      },
      te::kPadTag);
}

// nn.conv2d_nchwc (data (N, C/i, H, W, i), weight OIHW{i}i{b}o or, depthwise,
// OIHW1i{b}o): out[n, ob, y, x, o] = sum over cb < C/i, k, c < i of
//   padded[n, cb, y * s + k * d, c] * weight[ob, cb, k, c, o]
// or, depthwise, sum over k of padded[n, ob, y * s + k * d, o] * weight[ob, 0, k, 0, o].
// Tagged kBlockedConvTag: the default schedule gives it register tiles.
ComputeResult BlockedConvCompute(const ComputeInput& in) {
  const std::string op = "nn.conv2d_nchwc";
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  const Tensor& weight = in.inputs[1];
  Window w = ReadWindow(in.attrs, 2);
  const bool depthwise = IntAttr(in.attrs, "groups") > 1;
  // Pad H and W (axes 2, 3) of the 5-D data: ZeroPad pads axes 2..4, the block axis by 0.
  Window padding = w;
  padding.pad_begin.push_back(0);
  padding.pad_end.push_back(0);
  Tensor padded = ZeroPad(data, padding, "conv2d_nchwc_pad");
  DataType acc = compute::ComputeType(result.dtype);
  std::vector<IterVar> axes;
  IterVar rcb = te::ReduceAxis(weight.shape()[1], "rcb");
  IterVar rky = te::ReduceAxis(weight.shape()[2], "rk0");
  IterVar rkx = te::ReduceAxis(weight.shape()[3], "rk1");
  IterVar rc = te::ReduceAxis(weight.shape()[4], "rc");
  if (depthwise) {
    axes = {rky, rkx};
  } else {
    axes = {rcb, rky, rkx, rc};
  }
  Tensor conv = te::Compute(
      compute::AccumulatorName("conv2d_nchwc", acc, result.dtype), result.shape, {padded, weight},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr y = i[2] * w.strides[0] + PrimExpr(rky->var) * w.dilation[0];
        PrimExpr x = i[3] * w.strides[1] + PrimExpr(rkx->var) * w.dilation[1];
        if (depthwise) {
          PrimExpr zero = Index(0);
          return te::Sum(Cast(acc, padded({i[0], i[1], y, x, i[4]})) *
                             Cast(acc, weight({i[1], zero, rky->var, rkx->var, zero, i[4]})),
                         axes);
        }
        return te::Sum(Cast(acc, padded({i[0], rcb->var, y, x, rc->var})) *
                           Cast(acc, weight({i[1], rcb->var, rky->var, rkx->var, rc->var, i[4]})),
                       axes);
      },
      te::kBlockedConvTag);
  return compute::One(compute::CastStage(conv, result.dtype, "conv2d_nchwc"));
}

// data (N, C, *in), weight (O, C / groups, *kernel) -> (N, O, *out):
// out[n, o, y] = sum over c < C / groups and k of
//   padded[n, g * C / groups + c, y * stride + k * dilation] * weight[o, c, k]
// with g = o / (O / groups).
ComputeResult ConvCompute(const ComputeInput& in, const std::string& op, int n) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  const Tensor& weight = in.inputs[1];
  Window w = ReadWindow(in.attrs, n);
  int64_t groups = IntAttr(in.attrs, "groups");
  int64_t in_per_group = weight.shape()[1];
  int64_t out_per_group = weight.shape()[0] / groups;
  std::string name = absl::StrCat("conv", n, "d");
  Tensor padded = ZeroPad(data, w, name + "_pad");
  // A strided 1x1 convolution (a ResNet's downsampling shortcut) reads every s-th point: those
  // points are gathered into their own stage first, so the reduction reads contiguous rows.
  bool pointwise = true, strided = false;
  for (int d = 0; d < n; ++d) {
    pointwise &= weight.shape()[2 + d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
    strided |= w.strides[d] > 1;
  }
  if (pointwise && strided) {
    padded = Subsample(data, w.strides, result.shape, name + "_strided");
    w.strides.assign(n, 1);
  }
  DataType acc = compute::ComputeType(result.dtype);
  IterVar rc = te::ReduceAxis(in_per_group, "rc");
  std::vector<IterVar> rk;
  for (int d = 0; d < n; ++d)
    rk.push_back(te::ReduceAxis(weight.shape()[2 + d], absl::StrCat("rk", d)));
  std::vector<IterVar> axes = {rc};
  axes.insert(axes.end(), rk.begin(), rk.end());
  Tensor conv = te::Compute(
      compute::AccumulatorName(name, acc, result.dtype), result.shape, {padded, weight},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr o = i[1];
        PrimExpr c = rc->var;
        if (groups > 1) c = loop::FloorDiv(o, out_per_group) * in_per_group + c;
        std::vector<PrimExpr> di = {i[0], c};
        std::vector<PrimExpr> wi = {o, rc->var};
        for (int d = 0; d < n; ++d) {
          di.push_back(i[2 + d] * w.strides[d] + PrimExpr(rk[d]->var) * w.dilation[d]);
          wi.push_back(rk[d]->var);
        }
        return te::Sum(Cast(acc, padded(di)) * Cast(acc, weight(wi)), axes);
      },
      name);
  return compute::One(compute::CastStage(conv, result.dtype, name));
}

// data (N, C, *in), weight (C, O / groups, *kernel) -> (N, O, *out): each
// input point x scatters x * weight[c, o, k] to out[y], y = x * stride + k *
// dilation - pad_begin. Gathered: out[n, o, y] sums over c in o's group and k
// with (y + pad_begin - k * dilation) a multiple of the stride inside the input.
ComputeResult ConvTransposeCompute(const ComputeInput& in, const std::string& op, int n) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  const Tensor& weight = in.inputs[1];
  Window w = ReadWindow(in.attrs, n);
  int64_t groups = IntAttr(in.attrs, "groups");
  int64_t in_per_group = data.shape()[1] / groups;
  int64_t out_per_group = weight.shape()[1];
  std::string name = absl::StrCat("conv", n, "d_transpose");
  DataType acc = compute::ComputeType(result.dtype);
  IterVar rc = te::ReduceAxis(in_per_group, "rc");
  std::vector<IterVar> rk;
  for (int d = 0; d < n; ++d)
    rk.push_back(te::ReduceAxis(weight.shape()[2 + d], absl::StrCat("rk", d)));
  std::vector<IterVar> axes = {rc};
  axes.insert(axes.end(), rk.begin(), rk.end());
  Tensor conv = te::Compute(
      compute::AccumulatorName(name, acc, result.dtype), result.shape, {data, weight},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr o = i[1];
        PrimExpr c = rc->var;
        PrimExpr o_in_group = o;
        if (groups > 1) {
          c = loop::FloorDiv(o, out_per_group) * in_per_group + c;
          o_in_group = loop::FloorMod(o, out_per_group);
        }
        std::vector<PrimExpr> di = {i[0], c};
        std::vector<PrimExpr> wi = {c, o_in_group};
        std::vector<PrimExpr> valid;
        for (int d = 0; d < n; ++d) {
          PrimExpr scaled = i[2 + d] + w.pad_begin[d] - PrimExpr(rk[d]->var) * w.dilation[d];
          PrimExpr x = w.strides[d] == 1 ? scaled : loop::FloorDiv(scaled, w.strides[d]);
          int64_t extent = data.shape()[2 + d];
          if (w.strides[d] != 1) {
            valid.push_back(loop::Equal(loop::FloorMod(scaled, w.strides[d]), Index(0)));
          }
          valid.push_back(compute::InRange(x, extent));
          di.push_back(compute::ClampIndex(x, extent));
          wi.push_back(rk[d]->var);
        }
        return te::Sum(Cast(acc, data(di)) * Cast(acc, weight(wi)), axes, compute::AllOf(valid));
      },
      name);
  return compute::One(compute::CastStage(conv, result.dtype, name));
}

// The number of k in [0, kernel) with lo <= base + k * dilation <= hi.
PrimExpr CountInWindow(const PrimExpr& base, int64_t kernel, int64_t dilation, int64_t lo,
                       int64_t hi) {
  // k >= ceil((lo - base) / dilation) and k <= floor((hi - base) / dilation).
  PrimExpr first = Index(0) - loop::FloorDiv(base - lo, dilation);
  PrimExpr last = loop::FloorDiv(Index(hi) - base, dilation);
  first = loop::Max(first, Index(0));
  last = loop::Min(last, Index(kernel - 1));
  return loop::Max(last - first + 1, Index(0));
}

ComputeResult PoolCompute(const ComputeInput& in, const std::string& op, int n, bool is_max) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  Window w = ReadWindow(in.attrs, n);
  std::vector<int64_t> kernel = IntArrayAttr(in.attrs, "pool_size");
  bool include_pad = !is_max && BoolAttr(in.attrs, "count_include_pad");
  DataType acc = compute::ComputeType(data.dtype());
  std::string name = is_max ? absl::StrCat("max_pool", n, "d") : absl::StrCat("avg_pool", n, "d");
  std::vector<IterVar> rk;
  for (int d = 0; d < n; ++d) rk.push_back(te::ReduceAxis(kernel[d], absl::StrCat("rk", d)));
  // The input position of window element k for output position y, per dim.
  auto position = [&](const std::vector<PrimExpr>& out, int d) {
    return out[2 + d] * w.strides[d] + PrimExpr(rk[d]->var) * w.dilation[d] - w.pad_begin[d];
  };
  bool narrowing = is_max ? acc != result.dtype : true;
  Tensor pooled = te::Compute(
      narrowing ? name + (is_max ? "_acc" : "_sum") : name, result.shape, {data},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> out = AsExprs(i);
        std::vector<PrimExpr> idx = {out[0], out[1]};
        std::vector<PrimExpr> inside;
        for (int d = 0; d < n; ++d) {
          PrimExpr x = position(out, d);
          int64_t extent = data.shape()[2 + d];
          inside.push_back(compute::InRange(x, extent));
          idx.push_back(compute::ClampIndex(x, extent));
        }
        // A position outside the input contributes the reduction's identity, rather than the
        // update being skipped by a condition: every step then stores its accumulator, so code
        // generation keeps a tile of them in registers (a conditional store pins each to memory,
        // and the rows a parallel loop owns are not partitioned). The load is clamped, so
        // reading it outside is safe.
        PrimExpr identity = is_max ? compute::LowestValue(acc) : compute::Const(acc, 0);
        PrimExpr v = loop::MakeSelect(compute::AllOf(inside), Cast(acc, data(idx)), identity);
        return is_max ? te::Max(v, rk) : te::Sum(v, rk);
      },
      "pool");
  if (is_max) return compute::One(compute::CastStage(pooled, result.dtype, name));
  return compute::One(te::Compute(
      name, result.shape, {pooled},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> out = AsExprs(i);
        PrimExpr count = Index(1);
        for (int d = 0; d < n; ++d) {
          int64_t extent = data.shape()[2 + d];
          PrimExpr base = out[2 + d] * w.strides[d] - w.pad_begin[d];
          int64_t lo = include_pad ? -w.pad_begin[d] : 0;
          int64_t hi = include_pad ? extent + w.pad_end[d] - 1 : extent - 1;
          count = count * CountInWindow(base, kernel[d], w.dilation[d], lo, hi);
        }
        return Cast(result.dtype, pooled(out) / Cast(acc, count));
      },
      "elemwise"));
}

ComputeResult GlobalPoolCompute(const ComputeInput& in, const std::string& op, int n, bool is_max) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  DataType acc = compute::ComputeType(data.dtype());
  std::string name = absl::StrCat("global_", is_max ? "max" : "avg", "_pool", n, "d");
  std::vector<IterVar> rk;
  int64_t count = 1;
  for (int d = 0; d < n; ++d) {
    rk.push_back(te::ReduceAxis(data.shape()[2 + d], absl::StrCat("rk", d)));
    count *= data.shape()[2 + d];
  }
  bool narrowing = is_max ? acc != result.dtype : true;
  Tensor pooled = te::Compute(
      narrowing ? name + (is_max ? "_acc" : "_sum") : name, result.shape, {data},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = {i[0], i[1]};
        for (const IterVar& k : rk) idx.push_back(k->var);
        PrimExpr v = Cast(acc, data(idx));
        return is_max ? te::Max(v, rk) : te::Sum(v, rk);
      },
      "pool");
  if (is_max) return compute::One(compute::CastStage(pooled, result.dtype, name));
  return compute::One(te::Compute(
      name, result.shape, {pooled},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return Cast(result.dtype, pooled(AsExprs(i)) / Const(acc, static_cast<double>(count)));
      },
      "elemwise"));
}

}  // namespace

void RegisterWindowComputes(OpRegistry& registry) {
  registry.SetCompute("nn.conv2d_nchwc", BlockedConvCompute);
  for (int n = 1; n <= 3; ++n) {
    std::string conv = absl::StrCat("nn.conv", n, "d");
    registry.SetCompute(conv,
                        [conv, n](const ComputeInput& in) { return ConvCompute(in, conv, n); });
    std::string transpose = absl::StrCat("nn.conv", n, "d_transpose");
    registry.SetCompute(transpose, [transpose, n](const ComputeInput& in) {
      return ConvTransposeCompute(in, transpose, n);
    });
    for (bool is_max : {true, false}) {
      std::string pool = absl::StrCat("nn.", is_max ? "max" : "avg", "_pool", n, "d");
      registry.SetCompute(pool, [pool, n, is_max](const ComputeInput& in) {
        return PoolCompute(in, pool, n, is_max);
      });
      std::string global = absl::StrCat("nn.global_", is_max ? "max" : "avg", "_pool", n, "d");
      registry.SetCompute(global, [global, n, is_max](const ComputeInput& in) {
        return GlobalPoolCompute(in, global, n, is_max);
      });
    }
  }
}

}  // namespace kiln
