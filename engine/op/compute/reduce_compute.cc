// Compute definitions of the reduce family (reduce.cc): sum, mean, prod, max
// and min over a set of axes (keepdims, exclude), argmax and argmin along one
// axis (ties: first index, or last with select_last_index). Half-precision
// inputs accumulate in float32, long float32 and half sums into few outputs in float64;
// bool max/min reduce as 0/1 integers.
#include "absl/strings/str_cat.h"
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::Cast;
using compute::Index;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;
using te::IterVar;

// Which input axes are reduced (the relation validated the attributes).
std::vector<bool> ReducedAxes(const AttrsNode& attrs, int64_t rank) {
  std::vector<int64_t> axis = IntArrayAttr(attrs, "axis");
  if (axis.empty()) return std::vector<bool>(rank, true);
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axis) reduced[compute::NormalizedAxis(a, rank)] = true;
  if (BoolAttr(attrs, "exclude")) reduced.flip();
  return reduced;
}

// The input point a reduction reads: output indices for kept axes, reduce
// axes for reduced ones (keepdims output indices of reduced axes are 0).
struct ReductionIndexing {
  std::vector<IterVar> axes;  // one per reduced input axis, in order
  std::vector<bool> reduced;
  bool keepdims = false;

  std::vector<PrimExpr> InputIndices(const std::vector<PrimExpr>& out) const {
    std::vector<PrimExpr> in;
    size_t next_out = 0, next_axis = 0;
    for (bool r : reduced) {
      if (r) {
        in.push_back(axes[next_axis++]->var);
        if (keepdims) ++next_out;
      } else {
        in.push_back(out[next_out++]);
      }
    }
    return in;
  }
};

ReductionIndexing MakeIndexing(const Tensor& x, std::vector<bool> reduced, bool keepdims) {
  ReductionIndexing ix;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) ix.axes.push_back(te::ReduceAxis(x.dim(d), absl::StrCat("k", d)));
  }
  ix.reduced = std::move(reduced);
  ix.keepdims = keepdims;
  return ix;
}

enum class Kind { kSum, kMean, kProd, kMax, kMin };

// A float32 (or half, which accumulates in float32) sum of many terms into few outputs (a
// loss's mean, a global sum) runs as one serial
// chain of additions per output, with no lanes to spread it over: it accumulates in float64,
// which costs nothing there (the conversions are off the chain) and keeps the rounding error of
// n additions (up to n x 2^-24 relative: 4e-4 for 6,480 terms, 1.7e-5 measured on ONNX's
// SoftmaxCrossEntropyLoss test) below float32's own.
constexpr int64_t kLongSumTerms = 256;
constexpr int64_t kFewOutputs = 16;

void Reduce(OpRegistry& registry, const std::string& op, Kind kind) {
  registry.SetSymbolicCompute(
      op, [op, kind](const ComputeInput& in) -> absl::StatusOr<std::vector<Tensor>> {
        KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
        KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, op));
        const Tensor& x = in.inputs[0];
        ReductionIndexing ix =
            MakeIndexing(x, ReducedAxes(in.attrs, x.ndim()), BoolAttr(in.attrs, "keepdims"));
        std::vector<PrimExpr> extents;
        for (const IterVar& axis : ix.axes) extents.push_back(axis->ExtentExpr());
        PrimExpr count_expr = compute::Product(extents);
        int64_t count = -1;  // -1: symbolic
        loop::AsConstInt(count_expr, &count);
        int64_t outputs = -1;
        loop::AsConstInt(compute::Product(result.dims), &outputs);
        // bool max/min reduce as uint8; halves accumulate in float32 (long sums into few
        // outputs, float32 or half, in float64; decided for static extents only).
        DataType acc =
            x.dtype() == DataType::kBool ? DataType::kUInt8 : compute::ComputeType(x.dtype());
        if (acc == DataType::kFloat32 && (kind == Kind::kSum || kind == Kind::kMean) &&
            count >= kLongSumTerms && outputs >= 0 && outputs < kFewOutputs) {
          acc = DataType::kFloat64;
        }
        bool needs_final_stage = acc != result.dtype || kind == Kind::kMean;
        std::string name = compute::ComputeName(op);
        Tensor reduced = te::ComputeOver(
            needs_final_stage ? name + "_acc" : name, result.dims, {x},
            [&](const std::vector<Var>& i) -> te::ComputeBody {
              PrimExpr v = Cast(acc, x(ix.InputIndices(compute::AsExprs(i))));
              switch (kind) {
                case Kind::kSum:
                case Kind::kMean:
                  return te::Sum(v, ix.axes);
                case Kind::kProd:
                  return te::Prod(v, ix.axes);
                case Kind::kMax:
                  return te::Max(v, ix.axes);
                case Kind::kMin:
                  return te::Min(v, ix.axes);
              }
              return te::Sum(v, ix.axes);
            },
            "reduce");
        if (!needs_final_stage) return compute::One(reduced);
        return compute::One(te::ComputeOver(
            name, result.dims, {reduced},
            [&](const std::vector<Var>& i) -> te::ComputeBody {
              PrimExpr v = reduced(compute::AsExprs(i));
              if (kind == Kind::kMean && count < 0) {
                // A run's count: an empty integer mean is 0 (divided by 1) as below.
                PrimExpr divisor =
                    IsFloat(acc) ? count_expr : loop::Max(count_expr, compute::Index(1));
                v = v / Cast(acc, divisor);
              } else if (kind == Kind::kMean) {
                // An empty integer mean is 0 rather than a division by zero.
                v = IsFloat(acc) || count > 0 ? v / compute::Const(acc, static_cast<double>(count))
                                              : v;
              }
              return compute::ConvertTo(result.dtype, v);
            },
            "elemwise"));
      });
}

// Two stages: the extreme value along the axis, then the first (or last)
// index holding it.
void ArgReduce(OpRegistry& registry, const std::string& op, bool is_max) {
  registry.SetCompute(
      op, [op, is_max](const ComputeInput& in) -> absl::StatusOr<std::vector<Tensor>> {
        KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
        KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
        const Tensor& x = in.inputs[0];
        int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
        std::vector<bool> reduced(x.ndim(), false);
        reduced[axis] = true;
        bool keepdims = BoolAttr(in.attrs, "keepdims");
        bool last = BoolAttr(in.attrs, "select_last_index");
        DataType acc = compute::ComputeType(x.dtype());
        std::string name = compute::ComputeName(op);

        ReductionIndexing value_ix = MakeIndexing(x, reduced, keepdims);
        Tensor extreme = te::Compute(
            name + "_value", result.shape, {x},
            [&](const std::vector<Var>& i) -> te::ComputeBody {
              PrimExpr v = Cast(acc, x(value_ix.InputIndices(compute::AsExprs(i))));
              return is_max ? te::Max(v, value_ix.axes) : te::Min(v, value_ix.axes);
            },
            "reduce");
        ReductionIndexing index_ix = MakeIndexing(x, reduced, keepdims);
        return compute::One(te::Compute(
            name, result.shape, {x, extreme},
            [&](const std::vector<Var>& i) -> te::ComputeBody {
              std::vector<PrimExpr> out = compute::AsExprs(i);
              PrimExpr v = Cast(acc, x(index_ix.InputIndices(out)));
              PrimExpr k = index_ix.axes[0]->var;
              PrimExpr hit = loop::Equal(v, extreme(out));
              return last ? te::Max(k, index_ix.axes, hit) : te::Min(k, index_ix.axes, hit);
            },
            "reduce"));
      });
}

}  // namespace

void RegisterReduceComputes(OpRegistry& registry) {
  Reduce(registry, "sum", Kind::kSum);
  Reduce(registry, "mean", Kind::kMean);
  Reduce(registry, "prod", Kind::kProd);
  Reduce(registry, "max", Kind::kMax);
  Reduce(registry, "min", Kind::kMin);
  ArgReduce(registry, "argmax", true);
  ArgReduce(registry, "argmin", false);
}

}  // namespace kiln
