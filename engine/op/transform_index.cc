// Indexing, scattering, sorting and data-dependent operators of the transform
// family: take, gather_elements, gather_nd, scatter_elements, scatter_nd,
// one_hot, topk, cumsum, trilu, eye_like, and the ops whose output extent
// depends on the data (arange, nonzero, unique, compress: symbolic dims,
// never fused). Index arguments may hold negative indices, counting from the
// end of the indexed axis; indices out of range are a run-time error.
#include "absl/strings/str_cat.h"
#include "engine/op/transform_ops.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

OpEntry Entry(const char* name, OpPattern pattern, int num_args, const char* summary) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.pattern = pattern;
  entry.min_args = entry.max_args = num_args;
  return entry;
}

int64_t Rank(const TensorTypeNode* t) { return static_cast<int64_t>(t->shape.size()); }

// Dims that must agree (static ones must be equal; symbolic ones are trusted).
bool Compatible(const Dim& a, const Dim& b) {
  return !a.is_static() || !b.is_static() || a.value == b.value;
}

bool CompatibleShapes(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Compatible(a[i], b[i])) return false;
  }
  return true;
}

// ---- gathers -------------------------------------------------------------------

// out = data[:axis] + indices.shape + data[axis+1:]
absl::StatusOr<Type> TakeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  if (data->shape.empty()) return absl::InvalidArgumentError("cannot index a rank-0 tensor");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)));
  std::vector<Dim> out(data->shape.begin(), data->shape.begin() + axis);
  out.insert(out.end(), indices->shape.begin(), indices->shape.end());
  out.insert(out.end(), data->shape.begin() + axis + 1, data->shape.end());
  return Type(MakeTensorType(std::move(out), data->dtype));
}

absl::StatusOr<Type> GatherElementsRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  if (Rank(indices) != Rank(data)) {
    return absl::InvalidArgumentError(absl::StrCat("indices has rank ", Rank(indices),
                                                   ", expected the data's rank ", Rank(data)));
  }
  if (data->shape.empty()) return absl::InvalidArgumentError("cannot index a rank-0 tensor");
  KILN_RETURN_IF_ERROR(NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)).status());
  return Type(MakeTensorType(indices->shape, data->dtype));
}

// ONNX GatherND layout: the last axis of indices (static extent m) indexes
// data's axes [batch_dims, batch_dims + m); out = indices.shape[:-1] +
// data.shape[batch_dims + m:].
absl::StatusOr<Type> GatherNdRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  int64_t b = IntAttr(in.attrs, "batch_dims");
  int64_t r = Rank(data), q = Rank(indices);
  if (q < 1 || r < 1) return absl::InvalidArgumentError("data and indices must have rank >= 1");
  if (b >= std::min(q, r)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims ", b, " must be less than both ranks (data ", r, ", indices ", q, ")"));
  }
  const Dim& last = indices->shape.back();
  if (!last.is_static()) {
    return absl::InvalidArgumentError("the last axis of indices must have a static extent");
  }
  int64_t m = last.value;
  if (m < 1 || m > r - b) {
    return absl::InvalidArgumentError(absl::StrCat("the last axis of indices has extent ", m,
                                                   ", expected 1 to ", r - b,
                                                   " (data rank minus batch_dims)"));
  }
  for (int64_t i = 0; i < b; ++i) {
    if (!Compatible(data->shape[i], indices->shape[i])) {
      return absl::InvalidArgumentError(absl::StrCat("batch axis ", i, " differs: data ",
                                                     DimToString(data->shape[i]), ", indices ",
                                                     DimToString(indices->shape[i])));
    }
  }
  std::vector<Dim> out(indices->shape.begin(), indices->shape.end() - 1);
  out.insert(out.end(), data->shape.begin() + b + m, data->shape.end());
  return Type(MakeTensorType(std::move(out), data->dtype));
}

// ---- scatters ------------------------------------------------------------------

// How a scatter's updates combine with the data they land on (ONNX's `reduction`).
std::string CheckScatterReduction(const AttrValue& value) {
  const std::string& r = value.get<std::string>();
  return r == "none" || r == "add" || r == "mul" || r == "max" || r == "min"
             ? ""
             : "must be none, add, mul, max or min";
}

AttrField ScatterReductionAttr() {
  return {"reduction", AttrKind::kString, AttrValue(std::string("none")),
          "none: the last update wins; add, mul, max, min: every update landing on an element "
          "combined with it",
          CheckScatterReduction};
}

absl::StatusOr<Type> ScatterElementsRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* updates, TensorArg(in, 2));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  KILN_RETURN_IF_ERROR(ExpectSameDType(data, updates, "updates"));
  if (data->shape.empty()) return absl::InvalidArgumentError("cannot index a rank-0 tensor");
  if (Rank(indices) != Rank(data)) {
    return absl::InvalidArgumentError(absl::StrCat("indices has rank ", Rank(indices),
                                                   ", expected the data's rank ", Rank(data)));
  }
  if (!CompatibleShapes(indices->shape, updates->shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("updates has shape ", ShapeToString(updates->shape),
                     ", expected the shape of indices ", ShapeToString(indices->shape)));
  }
  KILN_RETURN_IF_ERROR(NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)).status());
  return in.args[0];
}

// updates.shape must be indices.shape[:-1] + data.shape[m:], m = indices.shape[-1].
absl::StatusOr<Type> ScatterNdRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* updates, TensorArg(in, 2));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  KILN_RETURN_IF_ERROR(ExpectSameDType(data, updates, "updates"));
  if (indices->shape.empty() || !indices->shape.back().is_static()) {
    return absl::InvalidArgumentError("indices needs rank >= 1 and a static last extent");
  }
  int64_t m = indices->shape.back().value;
  if (m < 1 || m > Rank(data)) {
    return absl::InvalidArgumentError(absl::StrCat("the last axis of indices has extent ", m,
                                                   ", expected 1 to the data rank ", Rank(data)));
  }
  std::vector<Dim> expected(indices->shape.begin(), indices->shape.end() - 1);
  expected.insert(expected.end(), data->shape.begin() + m, data->shape.end());
  if (!CompatibleShapes(expected, updates->shape)) {
    return absl::InvalidArgumentError(absl::StrCat("updates has shape ",
                                                   ShapeToString(updates->shape), ", expected ",
                                                   ShapeToString(expected)));
  }
  return in.args[0];
}

// ---- one_hot, topk, cumsum, trilu, eye_like -------------------------------------------

absl::StatusOr<Type> OneHotRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* on, TensorArg(in, 1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* off, TensorArg(in, 2));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(indices, "indices"));
  KILN_RETURN_IF_ERROR(ExpectSameDType(on, off, "off_value"));
  if (!on->shape.empty() || !off->shape.empty()) {
    return absl::InvalidArgumentError("on_value and off_value must be scalars");
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(indices) + 1));
  std::vector<Dim> out = indices->shape;
  out.insert(out.begin() + axis, Dim::Static(IntAttr(in.attrs, "depth")));
  return Type(MakeTensorType(std::move(out), on->dtype));
}

absl::StatusOr<Type> TopKRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->dtype == DataType::kBool) {
    return absl::InvalidArgumentError("argument 0 has dtype bool, expected a numeric dtype");
  }
  if (data->shape.empty()) return absl::InvalidArgumentError("cannot sort a rank-0 tensor");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)));
  int64_t k = IntAttr(in.attrs, "k");
  const Dim& dim = data->shape[axis];
  if (dim.is_static() && k > dim.value) {
    return absl::InvalidArgumentError(
        absl::StrCat("k = ", k, " exceeds the extent ", dim.value, " of axis ", axis));
  }
  std::vector<Dim> shape = data->shape;
  shape[axis] = Dim::Static(k);
  return Type(
      MakeTupleType({MakeTensorType(shape, data->dtype), MakeTensorType(shape, DataType::kInt64)}));
}

absl::StatusOr<Type> CumsumRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->dtype == DataType::kBool) {
    return absl::InvalidArgumentError("argument 0 has dtype bool, expected a numeric dtype");
  }
  KILN_RETURN_IF_ERROR(NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)).status());
  return in.args[0];
}

absl::StatusOr<Type> TriluRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (Rank(data) < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected rank >= 2 (matrices), got rank ", Rank(data)));
  }
  return in.args[0];
}

absl::StatusOr<Type> EyeLikeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (Rank(data) != 2) {
    return absl::InvalidArgumentError(absl::StrCat("expected rank 2, got rank ", Rank(data)));
  }
  return Type(MakeTensorType(data->shape, DataTypeAttr(in.attrs, "dtype")));
}

// ---- data-dependent extents ------------------------------------------------------------

// The data-dependent extent: `count` when the caller knows it (a shape the model declares, checked
// at run time by a shape guard), else symbolic.
Dim CountDim(const TypeRelationInput& in) {
  int64_t count = IntAttr(in.attrs, "count");
  return count >= 0 ? Dim::Static(count) : Dim::Symbolic();
}

AttrField CountAttr() {
  return {"count", AttrKind::kInt, AttrValue(-1),
          "the data-dependent extent when known before the run (checked then); -1: symbolic",
          [](const AttrValue& v) {
            return v.get<int64_t>() < -1 ? std::string("count must be -1 or a non-negative extent")
                                  : std::string();
          }};
}

absl::StatusOr<Type> ArangeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* start, TensorArg(in, 0));
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, i));
    const char* what = i == 0 ? "start" : i == 1 ? "limit" : "delta";
    if (!t->shape.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be a scalar, got shape ", ShapeToString(t->shape)));
    }
    KILN_RETURN_IF_ERROR(ExpectSameDType(start, t, what));
  }
  if (start->dtype == DataType::kBool) {
    return absl::InvalidArgumentError("start has dtype bool, expected a numeric dtype");
  }
  return Type(MakeTensorType({CountDim(in)}, start->dtype));
}

absl::StatusOr<Type> NonzeroRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  return Type(MakeTensorType({Dim::Static(Rank(data)), CountDim(in)}, DataType::kInt64));
}

// (unique slices along axis, index of each one's first occurrence, for each
// input slice the index of its unique slice, count of each unique slice).
absl::StatusOr<Type> UniqueRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->shape.empty()) return absl::InvalidArgumentError("expected rank >= 1, got rank 0");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)));
  std::vector<Dim> unique = data->shape;
  unique[axis] = CountDim(in);
  TensorType per_unique = MakeTensorType({CountDim(in)}, DataType::kInt64);
  return Type(MakeTupleType({MakeTensorType(std::move(unique), data->dtype), per_unique,
                             MakeTensorType({data->shape[axis]}, DataType::kInt64), per_unique}));
}

absl::StatusOr<Type> CompressRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* condition, TensorArg(in, 1));
  if (condition->dtype != DataType::kBool || Rank(condition) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("condition must be a 1-D bool tensor, got ", TypeToString(in.args[1])));
  }
  if (data->shape.empty()) return absl::InvalidArgumentError("expected rank >= 1, got rank 0");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), Rank(data)));
  std::vector<Dim> out = data->shape;
  out[axis] = CountDim(in);
  return Type(MakeTensorType(std::move(out), data->dtype));
}

}  // namespace

void RegisterIndexOps(OpRegistry& registry) {
  using P = OpPattern;
  {
    OpEntry entry = Entry("take", P::kInjective, 2, "data indexed along an axis (ONNX Gather)");
    entry.attrs = {{"axis", AttrKind::kInt, AttrValue(0), "the indexed axis", nullptr}};
    entry.relation = TakeRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("gather_elements", P::kInjective, 2,
                          "out[i][j] = data[indices[i][j]][j] for axis 0, and so on");
    entry.attrs = {{"axis", AttrKind::kInt, AttrValue(0), "the indexed axis", nullptr}};
    entry.relation = GatherElementsRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("gather_nd", P::kInjective, 2,
                          "slices of data addressed by the last axis of indices (ONNX layout)");
    entry.attrs = {{"batch_dims", AttrKind::kInt, AttrValue(0),
                    "leading axes shared by data and indices", CheckNonNegative}};
    entry.relation = GatherNdRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("scatter_elements", P::kOpaque, 3,
                          "data with updates written at indices along an axis (last write "
                          "wins)");
    entry.attrs = {{"axis", AttrKind::kInt, AttrValue(0), "the indexed axis", nullptr},
                   ScatterReductionAttr()};
    entry.relation = ScatterElementsRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry =
        Entry("scatter_nd", P::kOpaque, 3, "data with slices replaced at the addresses in indices");
    entry.attrs = {ScatterReductionAttr()};
    entry.relation = ScatterNdRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("one_hot", P::kInjective, 3,
                          "on_value where the new axis equals the index (negative indices "
                          "count from depth), off_value elsewhere");
    entry.attrs = {{"depth", AttrKind::kInt, std::nullopt, "extent of the new axis", CheckPositive},
                   {"axis", AttrKind::kInt, AttrValue(-1), "position of the new axis", nullptr}};
    entry.relation = OneHotRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("topk", P::kOpaque, 1,
                          "(values, int64 indices) of the k largest or smallest along an axis");
    entry.attrs = {
        {"k", AttrKind::kInt, std::nullopt, "how many elements", CheckNonNegative},
        {"axis", AttrKind::kInt, AttrValue(-1), "the searched axis", nullptr},
        {"largest", AttrKind::kBool, AttrValue(true), "largest (else smallest) elements", nullptr},
        {"sorted", AttrKind::kBool, AttrValue(true), "results in sorted order", nullptr}};
    entry.relation = TopKRelation;
    registry.Register(std::move(entry));
  }
  {
    // A scan: each output depends on a prefix of the input, so it does not fuse.
    OpEntry entry = Entry("cumsum", P::kOpaque, 1, "running sum along an axis");
    entry.attrs = {
        {"axis", AttrKind::kInt, AttrValue(0), "the summed axis", nullptr},
        {"exclusive", AttrKind::kBool, AttrValue(false), "out[i] excludes in[i]", nullptr},
        {"reverse", AttrKind::kBool, AttrValue(false), "sum from the end", nullptr}};
    entry.relation = CumsumRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("trilu", P::kInjective, 1,
                          "keep the upper (j - i >= k) or lower (j - i <= k) triangle of the "
                          "last two axes; zero elsewhere");
    entry.attrs = {{"upper", AttrKind::kBool, AttrValue(true), "keep the upper triangle", nullptr},
                   {"k", AttrKind::kInt, AttrValue(0), "diagonal offset", nullptr}};
    entry.relation = TriluRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("eye_like", P::kInjective, 1,
                          "ones on diagonal k of a matrix shaped like the argument, else 0");
    entry.attrs = {{"k", AttrKind::kInt, AttrValue(0), "diagonal offset", nullptr},
                   {"dtype", AttrKind::kDataType, std::nullopt, "result dtype", nullptr}};
    entry.relation = EyeLikeRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("arange", P::kOpaque, 3,
                          "start, start + delta, ... while before limit (run-time extent)");
    entry.attrs = {CountAttr()};
    entry.relation = ArangeRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("nonzero", P::kOpaque, 1,
                          "int64 coordinates of nonzero elements, one column per element");
    entry.attrs = {CountAttr()};
    entry.relation = NonzeroRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Entry("unique", P::kOpaque, 1,
                          "(unique slices, first indices, inverse indices, counts) along an "
                          "axis");
    entry.attrs = {
        {"sorted", AttrKind::kBool, AttrValue(true), "ascending order, else first occurrence",
         nullptr},
        {"axis", AttrKind::kInt, AttrValue(0), "slices along this axis are compared", nullptr},
        CountAttr()};
    entry.relation = UniqueRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry =
        Entry("compress", P::kOpaque, 2, "the slices along an axis where condition is true");
    entry.attrs = {{"axis", AttrKind::kInt, AttrValue(0), "the selected axis", nullptr},
                   CountAttr()};
    entry.relation = CompressRelation;
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
