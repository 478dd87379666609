// Shared helpers of the op compute definitions.
#include "engine/op/compute/compute_util.h"

#include "absl/strings/str_cat.h"
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
  return ResultTensor{in.result_type.as<TensorTypeNode>()->dtype, std::move(shape)};
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

PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape) {
  PrimExpr flat = Index(0);
  for (size_t d = 0; d < shape.size(); ++d) {
    flat = d == 0 ? indices[0] : flat * shape[d] + indices[d];
  }
  return flat;
}

std::vector<PrimExpr> Unravel(const PrimExpr& flat, const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> indices(shape.size());
  PrimExpr rest = flat;
  for (size_t i = shape.size(); i-- > 0;) {
    // Extent-1 dims read 0; an extent-0 dim means there are no points at
    // all, and dividing by it is never wanted.
    if (shape[i] <= 1) {
      indices[i] = Index(0);
    } else if (i == 0) {
      indices[i] = rest;
    } else {
      indices[i] = loop::FloorMod(rest, shape[i]);
      rest = loop::FloorDiv(rest, shape[i]);
    }
  }
  return indices;
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
  return te::Compute(
      name, shape, {input},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return input(index_of(AsExprs(i))); },
      tag);
}

Tensor CastStage(const Tensor& t, DataType dtype, const std::string& name) {
  if (t.dtype() == dtype) return t;
  return te::Compute(
      name, t.shape(), {t},
      [&](const std::vector<Var>& i) -> te::ComputeBody { return Cast(dtype, t(AsExprs(i))); },
      "elemwise");
}

std::string AccumulatorName(const std::string& name, DataType acc, DataType result) {
  return acc == result ? name : name + "_acc";
}

}  // namespace kiln::compute
