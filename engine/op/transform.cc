// Layout and shape operators: reshape, transpose, squeeze, expand_dims,
// broadcast_to, tile, concatenate, split, strided_slice, reverse,
// reverse_sequence, shape_of and size. All are injective (each output element
// reads one computable input element); their relations keep symbolic dims
// symbolic, preserving a dim's name wherever the output dim is provably the
// same extent. Indexing and data-dependent ops are in transform_index.cc.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/op/layout.h"
#include "engine/op/op_families.h"
#include "engine/op/transform_ops.h"
#include "engine/op/type_relations.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln {

absl::Status ExpectIntegerDType(const TensorTypeNode* t, const char* what) {
  if (IsSignedInt(t->dtype) || IsUnsignedInt(t->dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype ", DataTypeName(t->dtype), ", expected an integer dtype"));
}

absl::Status ExpectSameDType(const TensorTypeNode* a, const TensorTypeNode* b, const char* what) {
  if (a->dtype == b->dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " has dtype ", DataTypeName(b->dtype),
                                                 ", expected ", DataTypeName(a->dtype)));
}

std::string DimToString(const Dim& dim) {
  if (dim.is_static()) return absl::StrCat(dim.value);
  return dim.symbol.empty() ? "?" : dim.symbol;
}

SliceBounds ClampSlice(int64_t d, int64_t begin, int64_t end, int64_t stride) {
  if (d == 0) return {};
  if (begin < 0) begin += d;
  if (end < 0) end += d;
  if (stride > 0) {
    begin = std::clamp<int64_t>(begin, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    if (end <= begin) return {begin, 0};
    return {begin, (end - begin - 1) / stride + 1};
  }
  begin = std::clamp<int64_t>(begin, 0, d - 1);
  end = std::clamp<int64_t>(end, -1, d - 1);
  if (begin <= end) return {begin, 0};
  // -(stride + 1) + 1 avoids overflowing on INT64_MIN.
  uint64_t step = static_cast<uint64_t>(-(stride + 1)) + 1;
  return {begin, static_cast<int64_t>(static_cast<uint64_t>(begin - end - 1) / step + 1)};
}

namespace {

OpEntry Injective(const char* name, const char* summary) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.pattern = OpPattern::kInjective;
  return entry;
}

// The extent of two dims that must agree: equal dims stay; a static dim wins
// over a symbolic one (it must be that extent at run time); two different
// symbols give an unnamed symbol.
absl::StatusOr<Dim> MergeDims(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static() && b.is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat("extents ", a.value, " and ", b.value, " differ"));
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return Dim::Symbolic();
}

// ---- reshape ----------------------------------------------------------------

std::string CheckNewShape(const AttrValue& value) {
  int inferred = 0;
  for (const AttrValue& v : value.get<AttrValue::Array>()) {
    int64_t d = v.get<int64_t>();
    if (d < -1) return absl::StrCat("extent ", d, " is invalid (expected >= 0, or -1 to infer)");
    inferred += d == -1;
  }
  return inferred > 1 ? "at most one extent may be -1" : "";
}

// newshape holds the final extents, with at most one -1 whose extent follows
// from the element count. With a symbolic input, a -1 that stands for exactly
// the input's one symbolic dim keeps its name ((N, 3, 4) -> (-1, 12) gives
// (N, 12)); otherwise it is an unnamed symbol.
absl::StatusOr<Type> ReshapeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  std::vector<int64_t> newshape = IntArrayAttr(in.attrs, "newshape");
  std::vector<Dim> out;
  std::vector<Dim> known_dims;
  int infer = -1;
  for (size_t i = 0; i < newshape.size(); ++i) {
    if (newshape[i] == -1) {
      infer = static_cast<int>(i);
      out.push_back(Dim::Symbolic());
    } else {
      out.push_back(Dim::Static(newshape[i]));
      known_dims.push_back(out.back());
    }
  }
  KILN_ASSIGN_OR_RETURN(int64_t known, NumElements(known_dims));
  std::vector<Dim> static_in;
  std::vector<Dim> symbolic_in;
  for (const Dim& d : t->shape) (d.is_static() ? static_in : symbolic_in).push_back(d);
  KILN_ASSIGN_OR_RETURN(int64_t in_static, NumElements(static_in));
  if (symbolic_in.empty()) {
    if (infer < 0) {
      if (known != in_static) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot reshape ", ShapeToString(t->shape), " (", in_static,
                         " elements) to ", ShapeToString(out), " (", known, " elements)"));
      }
    } else {
      if (known == 0 || in_static % known != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot reshape ", ShapeToString(t->shape), " (", in_static, " elements) to ",
            ShapeToString(out), ": the -1 extent cannot be inferred from the other extents (",
            known, " elements)"));
      }
      out[infer] = Dim::Static(in_static / known);
    }
  } else if (infer >= 0 && symbolic_in.size() == 1 && known == in_static) {
    out[infer] = symbolic_in[0];
  }
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- transpose --------------------------------------------------------------

absl::StatusOr<Type> TransposeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axes");
  if (axes.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axes has ", axes.size(), " entries for an input of rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  std::vector<Dim> out;
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, rank));
    if (seen[n]) {
      return absl::InvalidArgumentError(
          absl::StrCat("axes is not a permutation: axis ", a, " appears twice"));
    }
    seen[n] = true;
    out.push_back(t->shape[n]);
  }
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- squeeze / expand_dims ----------------------------------------------------

// An empty axis list removes every static extent-1 dim; symbolic dims stay
// (they cannot be known to be 1). A listed symbolic dim must be 1 at run time.
absl::StatusOr<Type> SqueezeRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axis");
  std::vector<bool> remove(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) remove[i] = t->shape[i] == Dim::Static(1);
  }
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, rank));
    if (remove[n]) return absl::InvalidArgumentError(absl::StrCat("axis ", a, " listed twice"));
    if (t->shape[n].is_static() && t->shape[n].value != 1) {
      return absl::InvalidArgumentError(absl::StrCat("cannot squeeze axis ", a, " of extent ",
                                                     t->shape[n].value, " (must be 1)"));
    }
    remove[n] = true;
  }
  std::vector<Dim> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!remove[i]) out.push_back(t->shape[i]);
  }
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- layout_transform ---------------------------------------------------------

// The input's static shape in src_layout, re-blocked to dst_layout (layout.h).
absl::StatusOr<Type> LayoutTransformRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(Layout from, Layout::Parse(StringAttr(in.attrs, "src_layout")));
  KILN_ASSIGN_OR_RETURN(Layout to, Layout::Parse(StringAttr(in.attrs, "dst_layout")));
  std::vector<int64_t> shape;
  for (const Dim& d : t->shape) {
    if (!d.is_static()) {
      return absl::InvalidArgumentError(absl::StrCat("layout_transform needs a static shape, got ",
                                                     ShapeToString(t->shape)));
    }
    shape.push_back(d.value);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> result, TransformShape(from, to, shape));
  std::vector<Dim> dims;
  for (int64_t extent : result) dims.push_back(Dim::Static(extent));
  return Type(MakeTensorType(std::move(dims), t->dtype));
}

absl::StatusOr<Type> ExpandDimsRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), rank + 1));
  const int64_t new_axes = IntAttr(in.attrs, "num_newaxis");
  // Refused before the dims are made: four billion of them would not fit.
  if (new_axes > kMaxTensorRank - rank) {
    return absl::InvalidArgumentError(absl::StrCat("expand_dims by ", new_axes,
                                                   " axes would give a rank over the limit of ",
                                                   kMaxTensorRank));
  }
  std::vector<Dim> out(t->shape.begin(), t->shape.begin() + axis);
  for (int64_t i = 0; i < new_axes; ++i) out.push_back(Dim::Static(1));
  out.insert(out.end(), t->shape.begin() + axis, t->shape.end());
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- broadcast_to / tile ------------------------------------------------------

absl::StatusOr<Type> BroadcastToRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  std::vector<Dim> target = ShapeAttr(in.attrs, "shape");
  if (t->shape.size() > target.size()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot broadcast ", ShapeToString(t->shape),
                                                   " to the lower-rank shape ",
                                                   ShapeToString(target)));
  }
  size_t offset = target.size() - t->shape.size();
  for (size_t i = 0; i < t->shape.size(); ++i) {
    const Dim& from = t->shape[i];
    const Dim& to = target[offset + i];
    if (from == to || !from.is_static() || from.value == 1 || !to.is_static()) continue;
    return absl::InvalidArgumentError(
        absl::StrCat("cannot broadcast ", ShapeToString(t->shape), " to ", ShapeToString(target),
                     " (dim ", offset + i, ": ", from.value, " vs ", to.value, ")"));
  }
  KILN_RETURN_IF_ERROR(NumElements(target).status());
  return Type(MakeTensorType(std::move(target), t->dtype));
}

// numpy.tile: a shorter reps is padded with leading 1s; a longer one gives the
// input leading extent-1 dims.
absl::StatusOr<Type> TileRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  std::vector<int64_t> reps = IntArrayAttr(in.attrs, "reps");
  std::vector<Dim> shape = t->shape;
  while (shape.size() < reps.size()) shape.insert(shape.begin(), Dim::Static(1));
  while (reps.size() < shape.size()) reps.insert(reps.begin(), 1);
  std::vector<Dim> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reps[i] == 1) {
      out.push_back(shape[i]);
    } else if (reps[i] == 0) {
      out.push_back(Dim::Static(0));
    } else if (!shape[i].is_static()) {
      out.push_back(Dim::Symbolic());
    } else if (shape[i].value > INT64_MAX / reps[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tiling dim ", i, " of extent ", shape[i].value, " by ", reps[i], " overflows int64"));
    } else {
      out.push_back(Dim::Static(shape[i].value * reps[i]));
    }
  }
  KILN_RETURN_IF_ERROR(NumElements(out).status());
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- concatenate / split ------------------------------------------------------

// Variadic arguments rather than Relay's one tuple argument: the frontend
// never needs to build a tuple just to take it apart, and fusion sees the
// inputs directly.
absl::StatusOr<Type> ConcatenateRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* first, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(first->shape.size());
  if (rank == 0) return absl::InvalidArgumentError("cannot concatenate rank-0 tensors");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), rank));
  std::vector<Dim> out = first->shape;
  int64_t total = 0;
  bool symbolic = !out[axis].is_static();
  if (!symbolic) total = out[axis].value;
  for (size_t i = 1; i < in.args.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, i));
    std::string what = absl::StrCat("argument ", i);
    KILN_RETURN_IF_ERROR(ExpectSameDType(first, t, what.c_str()));
    if (static_cast<int64_t>(t->shape.size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has rank ", t->shape.size(),
                                                     ", expected ", rank, " like argument 0"));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) continue;
      auto merged = MergeDims(out[d], t->shape[d]);
      if (!merged.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " has shape ", ShapeToString(t->shape), ", which differs from ",
                         ShapeToString(first->shape), " outside the concatenation axis ", axis));
      }
      out[d] = *merged;
    }
    if (!t->shape[axis].is_static()) {
      symbolic = true;
    } else if (!symbolic) {
      total += t->shape[axis].value;
    }
  }
  if (in.args.size() > 1) out[axis] = symbolic ? Dim::Symbolic() : Dim::Static(total);
  return Type(MakeTensorType(std::move(out), first->dtype));
}

std::string CheckIndicesOrSections(const AttrValue& value) {
  if (value.is<int64_t>()) return value.get<int64_t>() >= 1 ? "" : "sections must be >= 1";
  if (!value.is<AttrValue::Array>()) return "must be an int (sections) or an int array (indices)";
  int64_t previous = 0;
  for (const AttrValue& v : value.get<AttrValue::Array>()) {
    if (!v.is<int64_t>()) return "must be an int (sections) or an int array (indices)";
    if (v.get<int64_t>() < previous) return "indices must be non-decreasing and >= 0";
    previous = v.get<int64_t>();
  }
  return "";
}

// An int n splits into n equal parts; an array of indices splits before each.
absl::StatusOr<Type> SplitRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), rank));
  const Dim& dim = t->shape[axis];
  const AttrValue* split = in.attrs.Find("indices_or_sections");
  std::vector<Dim> pieces;
  if (split->is<int64_t>()) {
    int64_t sections = split->get<int64_t>();
    if (dim.is_static() && dim.value % sections != 0) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " of extent ", dim.value,
                                                     " does not split into ", sections,
                                                     " equal parts"));
    }
    Dim piece = sections == 1     ? dim
                : dim.is_static() ? Dim::Static(dim.value / sections)
                                  : Dim::Symbolic();
    pieces.assign(sections, piece);
  } else {
    int64_t begin = 0;
    for (const AttrValue& v : split->get<AttrValue::Array>()) {
      int64_t index = v.get<int64_t>();
      if (dim.is_static() && index > dim.value) {
        return absl::InvalidArgumentError(absl::StrCat(
            "split index ", index, " is past the extent ", dim.value, " of axis ", axis));
      }
      pieces.push_back(Dim::Static(index - begin));
      begin = index;
    }
    pieces.push_back(dim.is_static() ? Dim::Static(dim.value - begin)
                     : begin == 0    ? dim
                                     : Dim::Symbolic());
  }
  std::vector<Type> fields;
  for (const Dim& piece : pieces) {
    std::vector<Dim> shape = t->shape;
    shape[axis] = piece;
    fields.push_back(MakeTensorType(std::move(shape), t->dtype));
  }
  return Type(MakeTupleType(std::move(fields)));
}

// ---- strided_slice ------------------------------------------------------------

absl::StatusOr<Type> StridedSliceRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  std::vector<int64_t> begin = IntArrayAttr(in.attrs, "begin");
  std::vector<int64_t> end = IntArrayAttr(in.attrs, "end");
  std::vector<int64_t> strides = IntArrayAttr(in.attrs, "strides");
  std::vector<int64_t> axes = IntArrayAttr(in.attrs, "axes");
  size_t n = begin.size();
  if (end.size() != n || (!strides.empty() && strides.size() != n) ||
      (!axes.empty() && axes.size() != n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("begin, end, strides and axes must have one entry per sliced axis (got ", n,
                     ", ", end.size(), ", ", strides.size(), ", ", axes.size(), ")"));
  }
  if (axes.empty()) {
    if (static_cast<int64_t>(n) > rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("slicing ", n, " axes of a rank-", rank, " input"));
    }
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (strides.empty()) strides.assign(n, 1);
  std::vector<Dim> out = t->shape;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axes[i], rank));
    if (seen[axis]) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", axes[i], " is sliced twice"));
    }
    seen[axis] = true;
    if (strides[i] == 0) return absl::InvalidArgumentError("strides must not be 0");
    const Dim& d = t->shape[axis];
    if (d.is_static()) {
      out[axis] = Dim::Static(ClampSlice(d.value, begin[i], end[i], strides[i]).count);
    } else if (!(strides[i] == 1 && begin[i] == 0 && end[i] >= INT32_MAX)) {
      // Anything but a full slice of a symbolic dim has an unknown extent.
      out[axis] = Dim::Symbolic();
    }
  }
  return Type(MakeTensorType(std::move(out), t->dtype));
}

// ---- reverse, reverse_sequence, shape_of, size -------------------------------------

absl::StatusOr<Type> ReverseRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(
      NormalizeAxis(IntAttr(in.attrs, "axis"), static_cast<int64_t>(t->shape.size())).status());
  return in.args[0];
}

absl::StatusOr<Type> ReverseSequenceRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* lengths, TensorArg(in, 1));
  int64_t rank = static_cast<int64_t>(t->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t seq_axis,
                        NormalizeAxis(IntAttr(in.attrs, "seq_axis"), rank, "seq_axis"));
  KILN_ASSIGN_OR_RETURN(int64_t batch_axis,
                        NormalizeAxis(IntAttr(in.attrs, "batch_axis"), rank, "batch_axis"));
  if (seq_axis == batch_axis) {
    return absl::InvalidArgumentError("seq_axis and batch_axis must differ");
  }
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(lengths, "seq_lengths"));
  if (lengths->shape.size() != 1 || !MergeDims(lengths->shape[0], t->shape[batch_axis]).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("seq_lengths has shape ", ShapeToString(lengths->shape), ", expected (",
                     DimToString(t->shape[batch_axis]), ") (one length per batch entry)"));
  }
  return in.args[0];
}

absl::StatusOr<Type> ShapeOfRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  return Type(MakeTensorType({static_cast<int64_t>(t->shape.size())}, DataType::kInt64));
}

absl::StatusOr<Type> SizeRelation(const TypeRelationInput& in) {
  KILN_RETURN_IF_ERROR(TensorArg(in, 0).status());
  return Type(MakeTensorType(std::vector<Dim>{}, DataType::kInt64));
}

}  // namespace

void RegisterTransformOps(OpRegistry& registry) {
  {
    OpEntry entry = Injective("reshape", "same elements in row-major order, new shape");
    entry.attrs = {{"newshape", AttrKind::kIntArray, std::nullopt,
                    "final extents; at most one -1, inferred from the element count",
                    CheckNewShape}};
    entry.relation = ReshapeRelation;
    entry.non_computational = true;
    entry.scale_axis = ScaleAxisRule::kRearrange;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("transpose", "permute axes: out dim i is input dim axes[i]");
    entry.attrs = {{"axes", AttrKind::kIntArray, IntArray({}),
                    "the permutation; empty reverses the axes", nullptr}};
    entry.relation = TransposeRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("squeeze", "remove extent-1 axes");
    entry.attrs = {{"axis", AttrKind::kIntArray, IntArray({}),
                    "axes to remove; empty removes every static extent-1 axis", nullptr}};
    entry.relation = SqueezeRelation;
    entry.non_computational = true;
    entry.scale_axis = ScaleAxisRule::kRearrange;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("expand_dims", "insert extent-1 axes");
    entry.attrs = {
        {"axis", AttrKind::kInt, std::nullopt, "position of the first new axis, in [-r-1, r]",
         nullptr},
        {"num_newaxis", AttrKind::kInt, AttrValue(1), "how many axes to insert", CheckNonNegative}};
    entry.relation = ExpandDimsRelation;
    entry.non_computational = true;
    entry.scale_axis = ScaleAxisRule::kRearrange;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("layout_transform",
                              "re-block a tensor between layouts (NCHW <-> NCHW8c, OIHW -> OIHW8i8o)");
    entry.attrs = {
        {"src_layout", AttrKind::kString, std::nullopt, "the input's layout (layout.h notation)",
         nullptr},
        {"dst_layout", AttrKind::kString, std::nullopt, "the result's layout", nullptr}};
    entry.relation = LayoutTransformRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("broadcast_to", "numpy-broadcast to a given shape");
    entry.attrs = {{"shape", AttrKind::kShape, std::nullopt,
                    "the result shape (static or symbolic dims)", nullptr}};
    entry.relation = BroadcastToRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("tile", "repeat the input reps[i] times along axis i (numpy.tile)");
    entry.attrs = {
        {"reps", AttrKind::kIntArray, std::nullopt, "repetitions per axis", CheckAllNonNegative}};
    entry.relation = TileRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("concatenate", "join the arguments along an axis");
    entry.max_args = -1;
    entry.attrs = {{"axis", AttrKind::kInt, AttrValue(0), "the joining axis", nullptr}};
    entry.relation = ConcatenateRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("split", "split along an axis into a tuple of tensors");
    entry.attrs = {
        {"indices_or_sections", AttrKind::kAny, std::nullopt,
         "int n: n equal parts; int array: split before each index", CheckIndicesOrSections},
        {"axis", AttrKind::kInt, AttrValue(0), "the axis to split", nullptr}};
    entry.relation = SplitRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry =
        Injective("strided_slice", "slice with strides, bounds clamped like ONNX Slice");
    entry.attrs = {
        {"begin", AttrKind::kIntArray, std::nullopt, "first index per sliced axis", nullptr},
        {"end", AttrKind::kIntArray, std::nullopt, "end (exclusive) per sliced axis", nullptr},
        {"strides", AttrKind::kIntArray, IntArray({}), "step per sliced axis; empty: all 1",
         nullptr},
        {"axes", AttrKind::kIntArray, IntArray({}),
         "the sliced axes; empty: the first len(begin) axes", nullptr}};
    entry.relation = StridedSliceRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("reverse", "reverse the order of elements along an axis");
    entry.attrs = {{"axis", AttrKind::kInt, std::nullopt, "the reversed axis", nullptr}};
    entry.relation = ReverseRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("reverse_sequence",
                              "reverse the first seq_lengths[b] elements along seq_axis for "
                              "each batch entry b");
    entry.min_args = entry.max_args = 2;
    entry.attrs = {{"seq_axis", AttrKind::kInt, AttrValue(0), "the time axis", nullptr},
                   {"batch_axis", AttrKind::kInt, AttrValue(1), "the batch axis", nullptr}};
    entry.relation = ReverseSequenceRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("shape_of", "the shape as a 1-D int64 tensor");
    entry.relation = ShapeOfRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry = Injective("size", "the element count as an int64 scalar");
    entry.relation = SizeRelation;
    registry.Register(std::move(entry));
  }
  RegisterIndexOps(registry);
}

}  // namespace kiln
