// Compute definitions of the indexing, scattering, sorting and data-dependent
// ops (transform_index.cc). Index tensors may hold negative indices (counting
// from the end of the axis); out-of-range indices are the user's error and
// are clamped so every load stays in bounds.
//
// Scatters, topk, cumsum, nonzero, compress and unique are written as
// reductions over all candidate positions (quadratic in the searched extent):
// a tensor expression has no sequential writes or sorting, and these ops are
// rare and small in the models Kiln compiles. arange, nonzero, compress and
// unique have data-dependent extents: their computes need the result type to
// be static (made so by whoever knows the data), else they are Unimplemented.
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

// How many points of `axis` satisfy `condition`.
te::ComputeBody CountWhere(const IterVar& axis, PrimExpr condition) {
  return te::Sum(Index(1), {axis}, std::move(condition));
}

// ---- gathers -------------------------------------------------------------------

// out = data[:axis] + indices.shape + data[axis+1:].
ComputeResult TakeCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "take"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "take"));
  const Tensor& data = in.inputs[0];
  const Tensor& indices = in.inputs[1];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), data.ndim());
  int q = indices.ndim();
  int64_t extent = data.shape()[axis];
  if (extent < 0) {  // an index is clamped into the axis: an empty one has no element to read
    return absl::UnimplementedError(
        "take along an axis whose length is known only at run time is not supported yet");
  }
  // The result is data's dims with the axis replaced by the indices' (a token sequence's
  // embeddings: a static table, positions of run-time length).
  for (int d = 0; d < data.ndim(); ++d) {
    if (d != axis) {
      te::SymbolScope::RequireEqual(data.dim(d), result.dims[d < axis ? d : d - 1 + q]);
    }
  }
  for (int d = 0; d < q; ++d) te::SymbolScope::RequireEqual(indices.dim(d), result.dims[axis + d]);
  return compute::One(te::ComputeOver(
      "T_take", result.dims, {data, indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> o = AsExprs(i);
        std::vector<PrimExpr> at(o.begin() + axis, o.begin() + axis + q);
        std::vector<PrimExpr> idx(o.begin(), o.begin() + axis);
        idx.push_back(compute::NormalizeIndex(indices(at), extent));
        idx.insert(idx.end(), o.begin() + axis + q, o.end());
        return data(idx);
      },
      "injective"));
}

// out[p] = data[p with p[axis] = indices[p]].
ComputeResult GatherElementsCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "gather_elements"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "gather_elements"));
  const Tensor& data = in.inputs[0];
  const Tensor& indices = in.inputs[1];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), data.ndim());
  return compute::One(te::Compute(
      "T_gather_elements", result.shape, {data, indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> o = AsExprs(i);
        std::vector<PrimExpr> idx;
        for (int d = 0; d < data.ndim(); ++d) {
          int64_t extent = data.shape()[d];
          if (d == axis) {
            idx.push_back(compute::NormalizeIndex(indices(o), extent));
          } else {
            idx.push_back(indices.shape()[d] > extent ? compute::ClampIndex(o[d], extent) : o[d]);
          }
        }
        return data(idx);
      },
      "injective"));
}

// ONNX GatherND: out[b..., i..., t...] = data[b..., indices[b..., i..., :], t...].
ComputeResult GatherNdCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "gather_nd"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "gather_nd"));
  const Tensor& data = in.inputs[0];
  const Tensor& indices = in.inputs[1];
  int64_t b = IntAttr(in.attrs, "batch_dims");
  int q = indices.ndim();
  int64_t m = indices.shape().back();
  return compute::One(te::Compute(
      "T_gather_nd", result.shape, {data, indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> o = AsExprs(i);
        std::vector<PrimExpr> row(o.begin(), o.begin() + (q - 1));
        std::vector<PrimExpr> idx(o.begin(), o.begin() + b);
        for (int64_t j = 0; j < m; ++j) {
          std::vector<PrimExpr> at = row;
          at.push_back(Index(j));
          idx.push_back(compute::NormalizeIndex(indices(at), data.shape()[b + j]));
        }
        idx.insert(idx.end(), o.begin() + (q - 1), o.end());
        return data(idx);
      },
      "injective"));
}

// ---- scatters ------------------------------------------------------------------

// The updates landing on one element under `reduction` (add, mul, max, min): a sum, product,
// maximum or minimum over `axes` where `condition` holds (none landing: the reduction's
// identity, which leaves the data as it is).
te::ComputeBody ScatterReduce(const std::string& reduction, PrimExpr value,
                              std::vector<IterVar> axes, PrimExpr condition) {
  if (reduction == "add") return te::Sum(value, std::move(axes), condition);
  if (reduction == "mul") return te::Prod(value, std::move(axes), condition);
  if (reduction == "max") return te::Max(value, std::move(axes), condition);
  return te::Min(value, std::move(axes), condition);
}

// data combined elementwise with the reduced updates.
Tensor CombineScatter(const std::string& name, const std::string& reduction, const Tensor& data,
                      const Tensor& combined, const std::vector<int64_t>& shape) {
  return te::Compute(
      name, shape, {data, combined},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        if (reduction == "add") return data(p) + combined(p);
        if (reduction == "mul") return data(p) * combined(p);
        if (reduction == "max") return loop::Max(data(p), combined(p));
        return loop::Min(data(p), combined(p));
      },
      "injective");
}

// out[p] = updates[u] for the last update position u whose target is p, else
// data[p]. A first stage finds that position (or a negative value when no
// update targets p); the second selects.
ComputeResult ScatterElementsCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "scatter_elements"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "scatter_elements"));
  const Tensor& data = in.inputs[0];
  const Tensor& indices = in.inputs[1];
  const Tensor& updates = in.inputs[2];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), data.ndim());
  int rank = data.ndim();
  int64_t extent = data.shape()[axis];
  int64_t candidates = updates.shape()[axis];
  // The updates point with axis index k for data point p (clamped), and
  // whether p lies inside the updates along the other axes.
  auto update_point = [&](const std::vector<PrimExpr>& p, PrimExpr k,
                          std::vector<PrimExpr>* inside) {
    std::vector<PrimExpr> u;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) {
        u.push_back(k);
        continue;
      }
      int64_t e = updates.shape()[d];
      if (e < data.shape()[d]) {
        if (inside != nullptr) inside->push_back(p[d] < Index(e));
        u.push_back(compute::ClampIndex(p[d], e));
      } else {
        u.push_back(p[d]);
      }
    }
    return u;
  };
  if (candidates == 0 || compute::Product(updates.shape()) == 0) {
    return compute::One(compute::Gather("T_scatter_elements", result.shape, data,
                                        [](const std::vector<PrimExpr>& p) { return p; }));
  }
  IterVar k = te::ReduceAxis(candidates, "k");
  const std::string& reduction = StringAttr(in.attrs, "reduction");
  if (reduction != "none") {
    // Every update landing on p, combined (a reduction over the candidates), then with data.
    Tensor combined = te::Compute(
        "T_scatter_elements_combined", result.shape, {indices, updates},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<PrimExpr> p = AsExprs(i);
          std::vector<PrimExpr> conditions;
          std::vector<PrimExpr> u = update_point(p, k->var, &conditions);
          conditions.push_back(loop::Equal(compute::NormalizeIndex(indices(u), extent), p[axis]));
          return ScatterReduce(reduction, updates(u), {k}, compute::AllOf(conditions));
        },
        "reduce");
    return compute::One(CombineScatter("T_scatter_elements", reduction, data, combined,
                                       result.shape));
  }
  Tensor source = te::Compute(
      "T_scatter_elements_source", result.shape, {indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        std::vector<PrimExpr> conditions;
        std::vector<PrimExpr> u = update_point(p, k->var, &conditions);
        conditions.push_back(loop::Equal(compute::NormalizeIndex(indices(u), extent), p[axis]));
        return te::Max(PrimExpr(k->var), {k}, compute::AllOf(conditions));
      },
      "reduce");
  return compute::One(te::Compute(
      "T_scatter_elements", result.shape, {data, updates, source},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        PrimExpr s = source(p);
        std::vector<PrimExpr> u = update_point(p, compute::ClampIndex(s, candidates), nullptr);
        return loop::MakeSelect(s >= Index(0), updates(u), data(p));
      },
      "injective"));
}

// indices (..., m) addresses data[:m]; updates = indices.shape[:-1] +
// data.shape[m:]. The last update row addressing p[:m] wins.
ComputeResult ScatterNdCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "scatter_nd"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "scatter_nd"));
  const Tensor& data = in.inputs[0];
  const Tensor& indices = in.inputs[1];
  const Tensor& updates = in.inputs[2];
  int64_t m = indices.shape().back();
  std::vector<int64_t> rows_shape(indices.shape().begin(), indices.shape().end() - 1);
  int64_t rows = compute::Product(rows_shape);
  if (rows == 0) {
    return compute::One(compute::Gather("T_scatter_nd", result.shape, data,
                                        [](const std::vector<PrimExpr>& p) { return p; }));
  }
  std::vector<int64_t> addressed(data.shape().begin(), data.shape().begin() + m);
  IterVar r = te::ReduceAxis(rows, "r");
  // Whether update row `row` (its index tuple) addresses the data point whose first m
  // coordinates are i[:m].
  auto addresses = [&](const std::vector<PrimExpr>& row, const std::vector<Var>& i) {
    std::vector<PrimExpr> matches;
    for (int64_t j = 0; j < m; ++j) {
      std::vector<PrimExpr> at = row;
      at.push_back(Index(j));
      matches.push_back(loop::Equal(compute::NormalizeIndex(indices(at), data.shape()[j]), i[j]));
    }
    return compute::AllOf(matches);
  };
  const std::string& reduction = StringAttr(in.attrs, "reduction");
  if (reduction != "none") {
    // Every update row addressing p[:m], combined (a reduction over the rows), then with data.
    Tensor combined = te::Compute(
        "T_scatter_nd_combined", result.shape, {indices, updates},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<PrimExpr> row = compute::Unravel(r->var, rows_shape);
          std::vector<PrimExpr> u = row;
          for (size_t d = m; d < i.size(); ++d) u.push_back(i[d]);
          return ScatterReduce(reduction, updates(u), {r}, addresses(row, i));
        },
        "reduce");
    return compute::One(CombineScatter("T_scatter_nd", reduction, data, combined, result.shape));
  }
  Tensor source = te::Compute(
      "T_scatter_nd_source", addressed, {indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return te::Max(PrimExpr(r->var), {r},
                       addresses(compute::Unravel(r->var, rows_shape), i));
      },
      "reduce");
  return compute::One(te::Compute(
      "T_scatter_nd", result.shape, {data, updates, source},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        PrimExpr s = source(std::vector<PrimExpr>(p.begin(), p.begin() + m));
        std::vector<PrimExpr> u = compute::Unravel(compute::ClampIndex(s, rows), rows_shape);
        u.insert(u.end(), p.begin() + m, p.end());
        return loop::MakeSelect(s >= Index(0), updates(u), data(p));
      },
      "injective"));
}

// ---- one_hot, topk, cumsum, trilu, eye_like --------------------------------------------

ComputeResult OneHotCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "one_hot"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "one_hot"));
  const Tensor& indices = in.inputs[0];
  const Tensor& on = in.inputs[1];
  const Tensor& off = in.inputs[2];
  int64_t depth = IntAttr(in.attrs, "depth");
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), indices.ndim() + 1);
  return compute::One(te::Compute(
      "T_one_hot", result.shape, {indices, on, off},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> o = AsExprs(i);
        std::vector<PrimExpr> at = o;
        at.erase(at.begin() + axis);
        // Negative indices count from depth; anything else out of range
        // matches no position.
        PrimExpr index = Cast(DataType::kInt64, indices(at));
        if (!IsUnsignedInt(indices.dtype())) {
          index = loop::MakeSelect(index < Index(0), index + depth, index);
        }
        return loop::MakeSelect(loop::Equal(index, o[axis]), on(std::vector<PrimExpr>{}),
                                off(std::vector<PrimExpr>{}));
      },
      "injective"));
}

// The k largest (or smallest) along an axis, ties by lower index first:
// every element's rank counts the elements ordered before it; output r holds
// the element of rank r.
ComputeResult TopKCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "topk"));
  KILN_ASSIGN_OR_RETURN(std::vector<compute::ResultTensor> results,
                        compute::TupleResult(in, "topk"));
  const Tensor& x = in.inputs[0];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  bool largest = BoolAttr(in.attrs, "largest");
  int64_t extent = x.shape()[axis];
  auto at = [&](const std::vector<PrimExpr>& p, PrimExpr k) {
    std::vector<PrimExpr> idx = p;
    idx[axis] = std::move(k);
    return compute::Widen(x(idx));
  };
  if (extent == 0) {
    return absl::InvalidArgumentError("topk: cannot take elements of an empty axis");
  }
  IterVar j = te::ReduceAxis(extent, "j");
  Tensor rank = te::Compute(
      "T_topk_rank", x.shape(), {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        PrimExpr mine = at(p, p[axis]);
        PrimExpr other = at(p, j->var);
        PrimExpr better = largest ? other > mine : other < mine;
        PrimExpr before = better || (loop::Equal(other, mine) && PrimExpr(j->var) < p[axis]);
        return CountWhere(j, before);
      },
      "reduce");
  IterVar e = te::ReduceAxis(extent, "e");
  Tensor indices = te::Compute(
      "T_topk_indices", results[1].shape, {rank},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        std::vector<PrimExpr> idx = p;
        idx[axis] = e->var;
        return te::Max(PrimExpr(e->var), {e}, loop::Equal(rank(idx), p[axis]));
      },
      "reduce");
  Tensor values = te::Compute(
      "T_topk_values", results[0].shape, {x, indices},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> p = AsExprs(i);
        std::vector<PrimExpr> idx = p;
        idx[axis] = compute::ClampIndex(indices(p), extent);
        return x(idx);
      },
      "injective");
  return std::vector<Tensor>{values, indices};
}

// Running sum along an axis: out[i] sums x[j] for j <= i (j < i exclusive;
// j >= i / j > i when reversed).
ComputeResult CumsumCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "cumsum"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "cumsum"));
  const Tensor& x = in.inputs[0];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  bool exclusive = BoolAttr(in.attrs, "exclusive");
  bool reverse = BoolAttr(in.attrs, "reverse");
  DataType acc = compute::ComputeType(result.dtype);
  IterVar j = te::ReduceAxis(x.shape()[axis], "j");
  Tensor sum = te::Compute(
      compute::AccumulatorName("T_cumsum", acc, result.dtype), result.shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        PrimExpr self = idx[axis];
        PrimExpr other = j->var;
        PrimExpr included = reverse ? (exclusive ? other > self : other >= self)
                                    : (exclusive ? other < self : other <= self);
        idx[axis] = j->var;
        return te::Sum(Cast(acc, x(idx)), {j}, included);
      },
      "reduce");
  return compute::One(compute::CastStage(sum, result.dtype, "T_cumsum"));
}

ComputeResult TriluCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "trilu"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "trilu"));
  const Tensor& x = in.inputs[0];
  bool upper = BoolAttr(in.attrs, "upper");
  int64_t k = IntAttr(in.attrs, "k");
  int rank = x.ndim();
  return compute::One(te::Compute(
      "T_trilu", result.shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr offset = PrimExpr(i[rank - 1]) - i[rank - 2];
        PrimExpr keep = upper ? offset >= Index(k) : offset <= Index(k);
        return loop::MakeSelect(keep, x(AsExprs(i)), Const(result.dtype, 0));
      },
      "injective"));
}

ComputeResult EyeLikeCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "eye_like"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "eye_like"));
  int64_t k = IntAttr(in.attrs, "k");
  return compute::One(te::Compute(
      "T_eye_like", result.shape, {},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr on_diagonal = loop::Equal(PrimExpr(i[1]) - i[0], Index(k));
        return loop::MakeSelect(on_diagonal, Const(result.dtype, 1), Const(result.dtype, 0));
      },
      "injective"));
}

// ---- data-dependent extents ------------------------------------------------------------

// start + i * delta, for a result type made static by someone who knows the
// values.
ComputeResult ArangeCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "arange"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "arange"));
  const Tensor& start = in.inputs[0];
  const Tensor& delta = in.inputs[2];
  DataType ct = compute::ComputeType(result.dtype);
  return compute::One(te::Compute(
      "T_arange", result.shape, {start, delta},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr s = Cast(ct, start(std::vector<PrimExpr>{}));
        PrimExpr d = Cast(ct, delta(std::vector<PrimExpr>{}));
        return Cast(result.dtype, s + Cast(ct, i[0]) * d);
      },
      "injective"));
}

// For each position of a 1-D `flags` predicate: how many earlier positions
// hold, then for each output slot k the position that is the k-th to hold.
// Returns the second stage (extent `count`, int64; negative when none).
Tensor KthTrue(const std::string& name, int64_t extent, int64_t count,
               const std::vector<Tensor>& inputs,
               const std::function<PrimExpr(const PrimExpr&)>& flag) {
  IterVar q = te::ReduceAxis(extent, "q");
  Tensor before = te::Compute(
      name + "_prefix", {extent}, inputs,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return CountWhere(q, PrimExpr(q->var) < i[0] && flag(q->var));
      },
      "reduce");
  std::vector<Tensor> with_prefix = inputs;
  with_prefix.push_back(before);
  IterVar p = te::ReduceAxis(extent, "p");
  return te::Compute(
      name + "_position", {count}, with_prefix,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr hit = flag(p->var) && loop::Equal(before(PrimExpr(p->var)), i[0]);
        return te::Max(PrimExpr(p->var), {p}, hit);
      },
      "reduce");
}

// (rank, count) coordinates of the nonzero elements in row-major order.
ComputeResult NonzeroCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "nonzero"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "nonzero"));
  const Tensor& x = in.inputs[0];
  int64_t total = compute::Product(x.shape());
  int64_t count = result.shape[1];
  if (total == 0 || count == 0) {
    return compute::One(te::Compute(
        "T_nonzero", result.shape, {},
        [](const std::vector<Var>&) -> te::ComputeBody { return Index(0); }, "injective"));
  }
  auto nonzero = [&](const PrimExpr& flat) {
    return compute::ConvertTo(DataType::kBool, x(compute::Unravel(flat, x.shape())));
  };
  Tensor position = KthTrue("T_nonzero", total, count, {x}, nonzero);
  return compute::One(te::Compute(
      "T_nonzero", result.shape, {position},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> coords =
            compute::Unravel(compute::ClampIndex(position(i[1]), total), x.shape());
        PrimExpr value = Index(0);
        for (size_t d = coords.size(); d-- > 0;) {
          value =
              loop::MakeSelect(loop::Equal(i[0], Index(static_cast<int64_t>(d))), coords[d], value);
        }
        return value;
      },
      "injective"));
}

// The slices along `axis` whose condition entry is true (a condition shorter
// than the axis drops the rest).
ComputeResult CompressCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "compress"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "compress"));
  const Tensor& x = in.inputs[0];
  const Tensor& condition = in.inputs[1];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  int64_t extent = std::min(condition.shape()[0], x.shape()[axis]);
  int64_t count = result.shape[axis];
  if (extent == 0 || compute::Product(result.shape) == 0) {
    return compute::One(compute::Gather("T_compress", result.shape, x,
                                        [](const std::vector<PrimExpr>& p) { return p; }));
  }
  Tensor position = KthTrue("T_compress", extent, count, {condition},
                            [&](const PrimExpr& j) { return condition(j); });
  return compute::One(te::Compute(
      "T_compress", result.shape, {x, position},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx[axis] = compute::ClampIndex(position(i[axis]), x.shape()[axis]);
        return x(idx);
      },
      "injective"));
}

// (unique slices along axis, index of each one's first occurrence, for each
// slice the index of its unique slice, count of each), ascending when
// sorted, else in order of first occurrence. Slices compare
// lexicographically through the first position where they differ.
ComputeResult UniqueCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "unique"));
  KILN_ASSIGN_OR_RETURN(std::vector<compute::ResultTensor> results,
                        compute::TupleResult(in, "unique"));
  const Tensor& x = in.inputs[0];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  bool sorted = BoolAttr(in.attrs, "sorted");
  int64_t n = x.shape()[axis];
  if (n == 0) return absl::InvalidArgumentError("unique: the axis is empty");
  std::vector<int64_t> slice_shape = x.shape();
  slice_shape.erase(slice_shape.begin() + axis);
  int64_t slice_size = compute::Product(slice_shape);
  // Element s (row-major) of slice `i`.
  auto element = [&](const PrimExpr& i, const PrimExpr& s) {
    std::vector<PrimExpr> idx = compute::Unravel(s, slice_shape);
    idx.insert(idx.begin() + axis, i);
    return compute::Widen(x(idx));
  };
  // First position where slices a and b differ; INT64_MAX when equal.
  IterVar s = te::ReduceAxis(std::max<int64_t>(slice_size, 1), "s");
  Tensor diff = te::Compute(
      "T_unique_diff", {n, n}, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr differs = slice_size == 0
                               ? loop::BoolImm(false)
                               : loop::NotEqual(element(i[0], s->var), element(i[1], s->var));
        return te::Min(PrimExpr(s->var), {s}, differs);
      },
      "reduce");
  auto equal = [&](const PrimExpr& a, const PrimExpr& b) {
    return diff(a, b) >= Index(slice_size);
  };
  auto less = [&](const PrimExpr& a, const PrimExpr& b) {  // slice a < slice b
    PrimExpr d = diff(a, b);
    PrimExpr at = compute::ClampIndex(d, std::max<int64_t>(slice_size, 1));
    if (slice_size == 0) return loop::BoolImm(false);
    return d < Index(slice_size) && element(a, at) < element(b, at);
  };
  IterVar j = te::ReduceAxis(n, "j");
  Tensor first = te::Compute(
      "T_unique_first", {n}, {diff},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return te::Min(PrimExpr(j->var), {j}, equal(i[0], j->var));
      },
      "reduce");
  IterVar j2 = te::ReduceAxis(n, "j");
  Tensor inverse = te::Compute(
      "T_unique_inverse", results[2].shape, {x, diff, first},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr other = j2->var;
        PrimExpr is_first = loop::Equal(first(other), other);
        PrimExpr ahead = sorted ? less(other, i[0]) : other < first(i[0]);
        return CountWhere(j2, is_first && ahead);
      },
      "reduce");
  IterVar j3 = te::ReduceAxis(n, "j");
  Tensor first_index = te::Compute(
      "T_unique_indices", results[1].shape, {inverse},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return te::Min(PrimExpr(j3->var), {j3}, loop::Equal(inverse(PrimExpr(j3->var)), i[0]));
      },
      "reduce");
  IterVar j4 = te::ReduceAxis(n, "j");
  Tensor counts = te::Compute(
      "T_unique_counts", results[3].shape, {inverse},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return CountWhere(j4, loop::Equal(inverse(PrimExpr(j4->var)), i[0]));
      },
      "reduce");
  Tensor values = te::Compute(
      "T_unique_values", results[0].shape, {x, first_index},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx[axis] = compute::ClampIndex(first_index(i[axis]), n);
        return x(idx);
      },
      "injective");
  return std::vector<Tensor>{values, first_index, inverse, counts};
}

}  // namespace

void RegisterIndexComputes(OpRegistry& registry) {
  registry.SetSymbolicCompute("take", TakeCompute);
  registry.SetCompute("gather_elements", GatherElementsCompute);
  registry.SetCompute("gather_nd", GatherNdCompute);
  registry.SetCompute("scatter_elements", ScatterElementsCompute);
  registry.SetCompute("scatter_nd", ScatterNdCompute);
  registry.SetCompute("one_hot", OneHotCompute);
  registry.SetCompute("topk", TopKCompute);
  registry.SetCompute("cumsum", CumsumCompute);
  registry.SetCompute("trilu", TriluCompute);
  registry.SetCompute("eye_like", EyeLikeCompute);
  registry.SetCompute("arange", ArangeCompute);
  registry.SetCompute("nonzero", NonzeroCompute);
  registry.SetCompute("compress", CompressCompute);
  registry.SetCompute("unique", UniqueCompute);
}

}  // namespace kiln
