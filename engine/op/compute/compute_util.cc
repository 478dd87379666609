// Shared helpers of the op compute definitions.
#include "engine/op/compute/compute_util.h"

#include "absl/strings/str_cat.h"
#include "engine/loop/arith/analyzer.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::compute {

absl::StatusOr<std::vector<int64_t>> StaticShape(const Type& type, std::string_view op) {
  const auto* tensor = type.as<TensorTypeNode>();
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(op), ": expected a tensor type, got ", TypeToString(type)));
  }
  std::vector<int64_t> shape;
  for (const Dim& d : tensor->shape) {
    if (!d.is_static()) {
      return absl::UnimplementedError(absl::StrCat(
          std::string(op), ": the shape ", ShapeToString(tensor->shape),
          " has a symbolic dim; code generation needs static shapes (give static input shapes)"));
    }
    shape.push_back(d.value);
  }
  return shape;
}

absl::StatusOr<ResultTensor> TensorResult(const ComputeInput& in, std::string_view op) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape(in.result_type, op));
  std::vector<PrimExpr> dims;
  for (int64_t extent : shape) dims.push_back(Index(extent));
  return ResultTensor{in.result_type.as<TensorTypeNode>()->dtype, std::move(shape),
                      std::move(dims)};
}

absl::StatusOr<std::vector<PrimExpr>> SymbolicShape(const Type& type, std::string_view op) {
  const auto* tensor = type.as<TensorTypeNode>();
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(op), ": expected a tensor type, got ", TypeToString(type)));
  }
  std::vector<PrimExpr> dims;
  for (const Dim& d : tensor->shape) {
    if (d.is_static()) {
      dims.push_back(Index(d.value));
      continue;
    }
    loop::Var var = d.symbol.empty() ? loop::Var() : te::SymbolScope::Lookup(d.symbol);
    if (!var.defined()) {
      return absl::UnimplementedError(absl::StrCat(
          std::string(op), ": the shape ", ShapeToString(tensor->shape),
          " has a dimension computed from symbolic ones; code generation needs each dimension "
          "to be a constant or a symbol of the model's inputs"));
    }
    dims.push_back(var);
  }
  return dims;
}

absl::StatusOr<ResultTensor> SymbolicResult(const ComputeInput& in, std::string_view op) {
  KILN_ASSIGN_OR_RETURN(std::vector<PrimExpr> dims, SymbolicShape(in.result_type, op));
  std::vector<int64_t> shape;
  for (const PrimExpr& dim : dims) {
    int64_t value;
    shape.push_back(loop::AsConstInt(dim, &value) ? value : -1);
  }
  return ResultTensor{in.result_type.as<TensorTypeNode>()->dtype, std::move(shape),
                      std::move(dims)};
}

absl::StatusOr<std::vector<ResultTensor>> TupleResult(const ComputeInput& in, std::string_view op) {
  const auto* tuple = in.result_type.as<TupleTypeNode>();
  if (tuple == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(op), ": expected a tuple result, got ", TypeToString(in.result_type)));
  }
  std::vector<ResultTensor> out;
  for (const Type& field : tuple->fields) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape(field, op));
    out.push_back(ResultTensor{field.as<TensorTypeNode>()->dtype, std::move(shape)});
  }
  return out;
}

absl::Status ExpectInputs(const ComputeInput& in, size_t count, std::string_view op) {
  if (in.inputs.size() == count) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(op), ": expected ", count,
                                                 " input tensors, got ", in.inputs.size()));
}

std::string ComputeName(std::string_view op) {
  size_t dot = op.rfind('.');
  std::string_view base = dot == std::string_view::npos ? op : op.substr(dot + 1);
  return absl::StrCat("T_", std::string(base));
}

std::vector<PrimExpr> AsExprs(const std::vector<Var>& vars) {
  return std::vector<PrimExpr>(vars.begin(), vars.end());
}

PrimExpr Index(int64_t value) { return loop::IntImm(value); }

PrimExpr Const(DataType dtype, double value) {
  return loop::MakeConst(loop::PrimType{dtype, 1}, value);
}

PrimExpr HighestValue(DataType dtype) {
  return te::ReduceIdentity(te::ReduceKind::kMin, loop::PrimType{dtype, 1});
}

PrimExpr LowestValue(DataType dtype) {
  return te::ReduceIdentity(te::ReduceKind::kMax, loop::PrimType{dtype, 1});
}

PrimExpr Cast(DataType dtype, const PrimExpr& value) {
  return loop::MakeCast(loop::PrimType{dtype, value->type.lanes}, value);
}

PrimExpr ConvertTo(DataType dtype, const PrimExpr& value) {
  if (dtype == DataType::kBool && value->type.dtype != DataType::kBool) {
    return loop::NotEqual(value, Const(value->type.dtype, 0));
  }
  return Cast(dtype, value);
}

DataType ComputeType(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 ? DataType::kFloat32 : dtype;
}

PrimExpr Widen(const PrimExpr& value) { return Cast(ComputeType(value->type.dtype), value); }

PrimExpr AllOf(const std::vector<PrimExpr>& terms) {
  PrimExpr out;
  for (const PrimExpr& term : terms) out = out.defined() ? (out && term) : term;
  return out.defined() ? out : loop::BoolImm(true);
}

PrimExpr InRange(const PrimExpr& index, int64_t extent) {
  return index >= Index(0) && index < Index(extent);
}

PrimExpr ClampIndex(const PrimExpr& index, int64_t extent) {
  return loop::Max(loop::Min(index, Index(extent - 1)), Index(0));
}

PrimExpr NormalizeIndex(const PrimExpr& index, int64_t extent) {
  PrimExpr i = Cast(DataType::kInt64, index);
  if (!IsUnsignedInt(index->type.dtype)) {
    i = loop::MakeSelect(i < Index(0), i + extent, i);
  }
  return ClampIndex(i, extent);
}

std::vector<PrimExpr> BroadcastIndices(const Tensor& input,
                                       const std::vector<PrimExpr>& out_indices) {
  const std::vector<int64_t>& shape = input.shape();
  size_t offset = out_indices.size() - shape.size();
  std::vector<PrimExpr> indices;
  for (size_t d = 0; d < shape.size(); ++d) {
    indices.push_back(shape[d] == 1 ? Index(0) : out_indices[offset + d]);
  }
  return indices;
}

void RequireBroadcastable(const Tensor& input, const std::vector<PrimExpr>& out_dims) {
  size_t offset = out_dims.size() - static_cast<size_t>(input.ndim());
  for (int d = 0; d < input.ndim(); ++d) {
    if (input.shape()[d] != 1) te::SymbolScope::RequireEqual(input.dim(d), out_dims[offset + d]);
  }
}

void RequireDims(const Tensor& input, const std::vector<PrimExpr>& dims) {
  for (int d = 0; d < input.ndim() && d < static_cast<int>(dims.size()); ++d) {
    te::SymbolScope::RequireEqual(input.dim(d), dims[d]);
  }
}

PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<PrimExpr>& shape) {
  PrimExpr flat = Index(0);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t extent;
    // A static extent takes the index's type (the int64_t overloads).
    PrimExpr scaled = d == 0 ? PrimExpr() : loop::AsConstInt(shape[d], &extent) ? flat * extent
                                                                                : flat * shape[d];
    flat = d == 0 ? indices[0] : scaled + indices[d];
  }
  return flat;
}

std::vector<PrimExpr> Unravel(const PrimExpr& flat, const std::vector<PrimExpr>& shape) {
  std::vector<PrimExpr> indices(shape.size());
  PrimExpr rest = flat;
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t extent;
    bool known = loop::AsConstInt(shape[i], &extent);
    // Extent-1 dims read 0; an extent-0 dim means there are no points at all, and dividing by
    // it is never wanted.
    if (known && extent <= 1) {
      indices[i] = Index(0);
    } else if (i == 0) {
      indices[i] = rest;
    } else if (known) {
      indices[i] = loop::FloorMod(rest, extent);
      rest = loop::FloorDiv(rest, extent);
    } else {
      indices[i] = loop::FloorMod(rest, shape[i]);
      rest = loop::FloorDiv(rest, shape[i]);
    }
  }
  return indices;
}

PrimExpr Product(const std::vector<PrimExpr>& values) {
  PrimExpr product = Index(1);
  for (const PrimExpr& value : values) product = product * value;
  return loop::arith::Simplify(product);
}

namespace {
std::vector<PrimExpr> Extents(const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> extents;
  for (int64_t extent : shape) extents.push_back(Index(extent));
  return extents;
}
}  // namespace

PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape) {
  return Ravel(indices, Extents(shape));
}

std::vector<PrimExpr> Unravel(const PrimExpr& flat, const std::vector<int64_t>& shape) {
  return Unravel(flat, Extents(shape));
}

int64_t Product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

int64_t NormalizedAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

Tensor Gather(const std::string& name, const std::vector<int64_t>& shape, const Tensor& input,
              const std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)>& index_of,
              const std::string& tag) {
  std::vector<PrimExpr> dims;
  for (int64_t extent : shape) dims.push_back(Index(extent));
  return Gather(name, dims, input, index_of, tag);
}

Tensor Gather(const std::string& name, const std::vector<PrimExpr>& shape, const Tensor& input,
              const std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)>& index_of,
              const std::string& tag) {
  return te::ComputeOver(
      name, shape, {input},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return input(index_of(AsExprs(i))); },
      tag);
}

Tensor CastStage(const Tensor& t, DataType dtype, const std::string& name) {
  if (t.dtype() == dtype) return t;
  return te::ComputeOver(
      name, t.dims(), {t},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return Cast(dtype, t(AsExprs(i))); },
      "elemwise");
}

std::string AccumulatorName(const std::string& name, DataType acc, DataType result) {
  return acc == result ? name : name + "_acc";
}

}  // namespace kiln::compute
