// Compute definitions of the layout and shape ops (transform.cc): reshape,
// transpose, squeeze, expand_dims, broadcast_to, tile, concatenate (variadic),
// split (one tensor per piece), strided_slice, reverse, reverse_sequence,
// shape_of and size. Each output element copies one input element (shape_of
// and size read none: they are constants of the static shape).
#include <functional>

#include "absl/strings/str_cat.h"
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/layout.h"
#include "engine/op/transform_ops.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::AsExprs;
using compute::Index;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;

using ComputeResult = absl::StatusOr<std::vector<Tensor>>;
using IndexMap = std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)>;

// A one-input op whose output element reads the input at index_of(indices). `symbolic`: `make`
// reads no static shape of a symbolic tensor (the op takes symbolic dims).
void Injective(OpRegistry& registry, const std::string& op,
               std::function<IndexMap(const ComputeInput&, const compute::ResultTensor&)> make,
               bool symbolic = false,
               std::function<absl::Status(const ComputeInput&)> check = nullptr) {
  ComputeDefinition compute = [op, make, symbolic, check](const ComputeInput& in) -> ComputeResult {
    KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
    if (check) KILN_RETURN_IF_ERROR(check(in));
    KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, symbolic
                                                            ? compute::SymbolicResult(in, op)
                                                            : compute::TensorResult(in, op));
    return compute::One(
        compute::Gather(compute::ComputeName(op), result.dims, in.inputs[0], make(in, result)));
  };
  if (symbolic) {
    registry.SetSymbolicCompute(op, std::move(compute));
  } else {
    registry.SetCompute(op, std::move(compute));
  }
}

// Same elements in row-major order (reshape, squeeze, expand_dims).
IndexMap RowMajor(const ComputeInput& in, const compute::ResultTensor& result) {
  std::vector<PrimExpr> in_shape = in.inputs[0].dims();
  std::vector<PrimExpr> out_shape = result.dims;
  te::SymbolScope::RequireEqual(compute::Product(in_shape), compute::Product(out_shape));
  return [in_shape, out_shape](const std::vector<PrimExpr>& o) {
    return compute::Unravel(compute::Ravel(o, out_shape), in_shape);
  };
}

IndexMap Transpose(const ComputeInput& in, const compute::ResultTensor&) {
  int64_t rank = in.inputs[0].ndim();
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axes");
  if (axes.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = compute::NormalizedAxis(a, rank);
  return [axes](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx(axes.size());
    for (size_t p = 0; p < axes.size(); ++p) idx[axes[p]] = o[p];
    return idx;
  };
}

// Output dims are the input dims minus the removed ones: the removed read 0.
IndexMap Squeeze(const ComputeInput& in, const compute::ResultTensor&) {
  const std::vector<int64_t>& shape = in.inputs[0].shape();
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axis");
  std::vector<bool> removed(rank, false);
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) removed[d] = shape[d] == 1;
  }
  for (int64_t a : axes) removed[compute::NormalizedAxis(a, rank)] = true;
  for (int64_t d = 0; d < rank; ++d) {  // a removed dim reads index 0: it must be 1
    if (removed[d]) te::SymbolScope::RequireEqual(in.inputs[0].dim(static_cast<int>(d)), Index(1));
  }
  return [removed](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx;
    size_t next = 0;
    for (bool r : removed) idx.push_back(r ? Index(0) : o[next++]);
    return idx;
  };
}

IndexMap ExpandDims(const ComputeInput& in, const compute::ResultTensor&) {
  int64_t rank = in.inputs[0].ndim();
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), rank + 1);
  int64_t count = IntAttr(in.attrs, "num_newaxis");
  return [axis, count](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx(o.begin(), o.begin() + axis);
    idx.insert(idx.end(), o.begin() + axis + count, o.end());
    return idx;
  };
}

IndexMap BroadcastTo(const ComputeInput& in, const compute::ResultTensor& result) {
  Tensor x = in.inputs[0];
  compute::RequireBroadcastable(x, result.dims);
  return [x](const std::vector<PrimExpr>& o) { return compute::BroadcastIndices(x, o); };
}

// numpy.tile: input dims aligned from the right; out index modulo extent.
IndexMap Tile(const ComputeInput& in, const compute::ResultTensor& result) {
  std::vector<int64_t> shape = in.inputs[0].shape();
  size_t offset = result.shape.size() - shape.size();
  return [shape, offset](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < shape.size(); ++d) {
      idx.push_back(shape[d] <= 1 ? Index(0) : loop::FloorMod(o[offset + d], shape[d]));
    }
    return idx;
  };
}

// Each result element reads the input element at the same coordinates along the primal axes.
IndexMap LayoutTransform(const ComputeInput& in, const compute::ResultTensor&) {
  // The relation accepted both layouts before any compute runs.
  Layout from = Layout::Parse(StringAttr(in.attrs, "src_layout")).value();
  Layout to = Layout::Parse(StringAttr(in.attrs, "dst_layout")).value();
  return [from, to](const std::vector<PrimExpr>& o) {
    return SourceIndex<PrimExpr>(
        from, to, o, [](const PrimExpr& a, int64_t b) { return loop::FloorDiv(a, b); },
        [](const PrimExpr& a, int64_t b) { return loop::FloorMod(a, b); });
  };
}

IndexMap StridedSlice(const ComputeInput& in, const compute::ResultTensor&) {
  const std::vector<int64_t>& shape = in.inputs[0].shape();
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> begin = IntArrayAttr(in.attrs, "begin");
  std::vector<int64_t> end = IntArrayAttr(in.attrs, "end");
  std::vector<int64_t> strides = IntArrayAttr(in.attrs, "strides");
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axes");
  if (strides.empty()) strides.assign(begin.size(), 1);
  if (axes.empty()) {
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < begin.size(); ++i) {
    int64_t axis = compute::NormalizedAxis(axes[i], rank);
    first[axis] = ClampSlice(shape[axis], begin[i], end[i], strides[i]).begin;
    step[axis] = strides[i];
  }
  return [first, step](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < o.size(); ++d) {
      PrimExpr i = step[d] == 1 ? o[d] : o[d] * step[d];
      idx.push_back(first[d] == 0 ? i : i + first[d]);
    }
    return idx;
  };
}

IndexMap Reverse(const ComputeInput& in, const compute::ResultTensor&) {
  int64_t rank = in.inputs[0].ndim();
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), rank);
  int64_t extent = in.inputs[0].shape()[axis];
  return [axis, extent](const std::vector<PrimExpr>& o) {
    std::vector<PrimExpr> idx = o;
    idx[axis] = Index(extent - 1) - o[axis];
    return idx;
  };
}

ComputeResult ConcatenateCompute(const ComputeInput& in) {
  if (in.inputs.empty()) {
    return absl::InvalidArgumentError("concatenate: expected at least one input tensor");
  }
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "concatenate"));
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), in.inputs[0].ndim());
  // The non-empty pieces and where each begins along the axis.
  std::vector<Tensor> pieces;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const Tensor& t : in.inputs) {
    int64_t extent = t.shape()[axis];
    if (extent > 0) {
      pieces.push_back(t);
      offsets.push_back(offset);
    }
    offset += extent;
  }
  if (pieces.empty()) pieces.push_back(in.inputs[0]), offsets.push_back(0);
  return compute::One(te::Compute(
      "T_concatenate", result.shape, pieces,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> o = AsExprs(i);
        // A balanced tree of selects on the index's piece: its depth grows
        // with log2 of the input count, so a Concat of 100,000 inputs does not
        // nest 100,000 deep in the recursive loop-IR passes. Each load's axis
        // index is clamped into its piece.
        std::function<PrimExpr(size_t, size_t)> select = [&](size_t lo, size_t hi) -> PrimExpr {
          if (hi - lo == 1) {
            std::vector<PrimExpr> idx = o;
            idx[axis] = compute::ClampIndex(o[axis] - offsets[lo], pieces[lo].shape()[axis]);
            return pieces[lo](idx);
          }
          size_t mid = lo + (hi - lo + 1) / 2;
          return loop::MakeSelect(o[axis] >= Index(offsets[mid]), select(mid, hi), select(lo, mid));
        };
        return select(0, pieces.size());
      },
      "injective"));
}

ComputeResult SplitCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "split"));
  KILN_ASSIGN_OR_RETURN(std::vector<compute::ResultTensor> results,
                        compute::TupleResult(in, "split"));
  const Tensor& x = in.inputs[0];
  int64_t axis = compute::NormalizedAxis(IntAttr(in.attrs, "axis"), x.ndim());
  std::vector<Tensor> out;
  int64_t begin = 0;
  for (size_t p = 0; p < results.size(); ++p) {
    int64_t start = begin;
    out.push_back(compute::Gather(absl::StrCat("T_split_", p), results[p].shape, x,
                                  [&](const std::vector<PrimExpr>& o) {
                                    std::vector<PrimExpr> idx = o;
                                    if (start != 0) idx[axis] = o[axis] + start;
                                    return idx;
                                  }));
    begin += results[p].shape[axis];
  }
  return out;
}

// The first seq_lengths[b] elements along seq_axis reversed for batch b.
ComputeResult ReverseSequenceCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "reverse_sequence"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "reverse_sequence"));
  const Tensor& x = in.inputs[0];
  const Tensor& lengths = in.inputs[1];
  int64_t seq = compute::NormalizedAxis(IntAttr(in.attrs, "seq_axis"), x.ndim());
  int64_t batch = compute::NormalizedAxis(IntAttr(in.attrs, "batch_axis"), x.ndim());
  int64_t extent = x.shape()[seq];
  return compute::One(te::Compute(
      "T_reverse_sequence", result.shape, {x, lengths},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> idx = AsExprs(i);
        PrimExpr length = compute::Cast(DataType::kInt64, lengths(i[batch]));
        PrimExpr t = idx[seq];
        idx[seq] = compute::ClampIndex(loop::MakeSelect(t < length, length - 1 - t, t), extent);
        return x(idx);
      },
      "injective"));
}

ComputeResult ShapeOfCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "shape_of"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "shape_of"));
  std::vector<int64_t> shape = in.inputs[0].shape();
  return compute::One(te::Compute(
      "T_shape_of", result.shape, {},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr value = compute::Const(result.dtype, 0);
        for (size_t d = shape.size(); d-- > 0;) {
          value =
              loop::MakeSelect(loop::Equal(i[0], Index(static_cast<int64_t>(d))),
                               compute::Const(result.dtype, static_cast<double>(shape[d])), value);
        }
        return value;
      },
      "injective"));
}

ComputeResult SizeCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "size"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "size"));
  int64_t count = compute::Product(in.inputs[0].shape());
  return compute::One(te::Compute(
      "T_size", result.shape, {},
      [&](const std::vector<Var>&) -> te::ComputeBody {
        return loop::IntImm(count, loop::PrimType{result.dtype, 1});
      },
      "injective"));
}

}  // namespace

void RegisterTransformComputes(OpRegistry& registry) {
  Injective(registry, "reshape", RowMajor, /*symbolic=*/true);
  Injective(registry, "transpose", Transpose, /*symbolic=*/true);
  // Without axes, which dims a squeeze drops would depend on the run (a symbolic dim of 1).
  Injective(registry, "squeeze", Squeeze, /*symbolic=*/true, [](const ComputeInput& in) {
    if (!IntArrayAttr(in.attrs, "axis").empty() || !in.inputs[0].is_symbolic()) {
      return absl::OkStatus();
    }
    return absl::UnimplementedError(
        "a squeeze without axes of dimensions known only at run time (which axes it drops would "
        "depend on the run); give its axes");
  });
  Injective(registry, "expand_dims", ExpandDims, /*symbolic=*/true);
  Injective(registry, "broadcast_to", BroadcastTo, /*symbolic=*/true);
  Injective(registry, "tile", Tile);
  Injective(registry, "strided_slice", StridedSlice);
  Injective(registry, "reverse", Reverse);
  Injective(registry, "layout_transform", LayoutTransform);
  registry.SetCompute("concatenate", ConcatenateCompute);
  registry.SetCompute("split", SplitCompute);
  registry.SetCompute("reverse_sequence", ReverseSequenceCompute);
  registry.SetCompute("shape_of", ShapeOfCompute);
  registry.SetCompute("size", SizeCompute);
}

}  // namespace kiln
