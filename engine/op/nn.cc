// Neural-network operators: dense and matmul, bias_add, the normalizations
// (batch, instance, layer, local response), softmax and its relatives, pad,
// and depth/space rearrangement. Window ops (convolution, pooling) live in
// nn_window.cc and image resizing in image.cc; RegisterNnOps registers all.
#include "absl/strings/str_cat.h"
#include "engine/op/nn_registration.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

absl::Status RequireFloat(const TensorTypeNode* t, const std::string& what) {
  if (IsFloat(t->dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype ", DataTypeName(t->dtype), ", expected a float dtype"));
}

absl::Status RequireNumeric(const TensorTypeNode* t, const std::string& what) {
  if (t->dtype != DataType::kBool) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype bool, expected a numeric dtype"));
}

absl::Status RequireSameDType(const TensorTypeNode* t, const TensorTypeNode* like,
                              const std::string& what) {
  if (t->dtype == like->dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " has dtype ", DataTypeName(t->dtype),
                                                 ", expected ", DataTypeName(like->dtype),
                                                 " like the input"));
}

absl::Status RequireMinRank(const TensorTypeNode* t, size_t rank, const std::string& what) {
  if (t->shape.size() >= rank) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must have rank >= ", rank, ", got ", ShapeToString(t->shape)));
}

// Static dims that differ; a symbolic dim matches anything.
bool Conflict(const Dim& a, const Dim& b) {
  return a.is_static() && b.is_static() && a.value != b.value;
}

// Argument `index` is a 1-D vector of `size` elements with the data's dtype.
absl::Status RequireChannelVector(const TypeRelationInput& in, size_t index, const char* name,
                                  const TensorTypeNode* data, int64_t axis) {
  const Dim& size = data->shape[axis];
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, index));
  KILN_RETURN_IF_ERROR(RequireSameDType(t, data, name));
  if (t->shape.size() != 1 || Conflict(t->shape[0], size)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must have shape ", ShapeToString({size}), " (the extent of axis ",
                     axis, " of the input), got ", ShapeToString(t->shape)));
  }
  return absl::OkStatus();
}

std::string CheckNonNegativeFloat(const AttrValue& value) {
  return value.get<double>() < 0 ? "must be >= 0" : "";
}

// x (..., K), weight (N, K) -> (..., N).
absl::StatusOr<Type> DenseRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* weight, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(RequireNumeric(data, "input"));
  KILN_RETURN_IF_ERROR(RequireSameDType(weight, data, "weight"));
  KILN_RETURN_IF_ERROR(RequireMinRank(data, 1, "input"));
  if (weight->shape.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight must be 2-D (units, features), got ", ShapeToString(weight->shape)));
  }
  if (Conflict(data->shape.back(), weight->shape[1])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input has ", data->shape.back().value, " features (last dim), the weight expects ",
        weight->shape[1].value, " (dim 1 of ", ShapeToString(weight->shape), ")"));
  }
  int64_t units = IntAttr(in.attrs, "units");
  if (units > 0 && Conflict(Dim::Static(units), weight->shape[0])) {
    return absl::InvalidArgumentError(absl::StrCat("attribute units ", units,
                                                   " does not match the weight's ",
                                                   weight->shape[0].value, " units"));
  }
  std::vector<Dim> shape(data->shape.begin(), data->shape.end() - 1);
  shape.push_back(weight->shape[0]);
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

// numpy.matmul: 1-D operands are promoted (and the added dim removed after),
// batch dims broadcast; transpose_a/b swap the last two dims of a 2-D+ operand.
absl::StatusOr<Type> MatmulRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* a, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* b, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(RequireNumeric(a, "a"));
  KILN_RETURN_IF_ERROR(RequireSameDType(b, a, "b"));
  KILN_RETURN_IF_ERROR(RequireMinRank(a, 1, "a"));
  KILN_RETURN_IF_ERROR(RequireMinRank(b, 1, "b"));
  bool a_vector = a->shape.size() == 1, b_vector = b->shape.size() == 1;
  std::vector<Dim> sa = a->shape, sb = b->shape;
  if (a_vector) sa.insert(sa.begin(), Dim::Static(1));
  if (b_vector) sb.push_back(Dim::Static(1));
  if (!a_vector && BoolAttr(in.attrs, "transpose_a"))
    std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
  if (!b_vector && BoolAttr(in.attrs, "transpose_b"))
    std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  const Dim& ka = sa.back();
  const Dim& kb = sb[sb.size() - 2];
  if (Conflict(ka, kb)) {
    return absl::InvalidArgumentError(absl::StrCat("inner dims differ: a ", ShapeToString(a->shape),
                                                   " and b ", ShapeToString(b->shape), " contract ",
                                                   ka.value, " with ", kb.value));
  }
  std::vector<Dim> batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  auto batch = BroadcastShapes(batch_a, batch_b);
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("batch dims: ", batch.status().message()));
  }
  std::vector<Dim> shape = *batch;
  if (!a_vector) shape.push_back(sa[sa.size() - 2]);
  if (!b_vector) shape.push_back(sb.back());
  return Type(MakeTensorType(std::move(shape), a->dtype));
}

// data + bias along `axis` (bias has data.shape[axis] elements).
absl::StatusOr<Type> BiasAddRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(RequireNumeric(data, "input"));
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"),
                                                    static_cast<int64_t>(data->shape.size())));
  KILN_RETURN_IF_ERROR(RequireChannelVector(in, 1, "bias", data, axis));
  return in.args[0];
}

// data, then 1-D per-channel parameters along `axis`; result: data's type.
absl::StatusOr<Type> ChannelNormRelation(const TypeRelationInput& in,
                                         const std::vector<const char*>& params, size_t min_rank) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(RequireFloat(data, "input"));
  KILN_RETURN_IF_ERROR(RequireMinRank(data, min_rank, "input"));
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"),
                                                    static_cast<int64_t>(data->shape.size())));
  for (size_t i = 0; i < params.size(); ++i) {
    KILN_RETURN_IF_ERROR(RequireChannelVector(in, i + 1, params[i], data, axis));
  }
  return in.args[0];
}

// data; gamma (and beta) broadcast to data.shape[axis:], the normalized dims.
absl::StatusOr<Type> LayerNormRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(RequireFloat(data, "input"));
  int64_t rank = static_cast<int64_t>(data->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), rank));
  std::vector<Dim> normalized(data->shape.begin() + axis, data->shape.end());
  const char* names[] = {"gamma", "beta"};
  for (size_t i = 1; i < in.args.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, i));
    KILN_RETURN_IF_ERROR(RequireSameDType(t, data, names[i - 1]));
    bool fits = t->shape.size() <= normalized.size();
    for (size_t d = 0; fits && d < t->shape.size(); ++d) {
      const Dim& p = t->shape[t->shape.size() - 1 - d];
      const Dim& x = normalized[normalized.size() - 1 - d];
      fits = !(p.is_static() && p.value != 1 && Conflict(p, x));
    }
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[i - 1], " of shape ", ShapeToString(t->shape),
                       " does not broadcast to the normalized dims ", ShapeToString(normalized)));
    }
  }
  return in.args[0];
}

absl::StatusOr<Type> LrnRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(RequireFloat(data, "input"));
  KILN_RETURN_IF_ERROR(
      NormalizeAxis(IntAttr(in.attrs, "axis"), static_cast<int64_t>(data->shape.size())).status());
  return in.args[0];
}

// softmax, log_softmax, hardmax: float input, axis in range; data's type.
absl::StatusOr<Type> AxisFloatRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(RequireFloat(data, "input"));
  KILN_RETURN_IF_ERROR(RequireMinRank(data, 1, "input"));
  KILN_RETURN_IF_ERROR(
      NormalizeAxis(IntAttr(in.attrs, "axis"), static_cast<int64_t>(data->shape.size())).status());
  return in.args[0];
}

std::string CheckPadMode(const AttrValue& value) {
  const std::string& mode = value.get<std::string>();
  if (mode == "constant" || mode == "edge" || mode == "reflect") return "";
  return absl::StrCat("'", mode, "' is not one of constant, edge, reflect");
}

// data, pad_value (a scalar of data's dtype); pad_width = all begins, then
// all ends (negative values crop).
absl::StatusOr<Type> PadRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* value, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(RequireSameDType(value, data, "pad_value"));
  auto count = NumElements(value->shape);
  if (!count.ok() || *count != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad_value must hold one element, got shape ", ShapeToString(value->shape)));
  }
  size_t rank = data->shape.size();
  std::vector<int64_t> width = IntArrayAttr(in.attrs, "pad_width");
  if (width.size() != 2 * rank) {
    return absl::InvalidArgumentError(absl::StrCat("pad_width has ", width.size(),
                                                   " values, expected ", 2 * rank,
                                                   " (begin and end for each of ", rank, " dims)"));
  }
  const std::string& mode = StringAttr(in.attrs, "pad_mode");
  std::vector<Dim> shape;
  for (size_t d = 0; d < rank; ++d) {
    int64_t begin = width[d], end = width[d + rank];
    const Dim& x = data->shape[d];
    if (!x.is_static()) {
      shape.push_back(begin == 0 && end == 0 ? x : Dim::Symbolic());
      continue;
    }
    if (x.value + begin + end < 0) {
      return absl::InvalidArgumentError(absl::StrCat("padding ", begin, "+", end, " of dim ", d,
                                                     " crops more than its ", x.value,
                                                     " elements"));
    }
    if (mode == "reflect" && (begin >= x.value || end >= x.value) && (begin > 0 || end > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("reflect padding ", begin, "+", end,
                                                     " of dim ", d, " must be smaller than its ",
                                                     x.value, " elements"));
    }
    if (mode == "edge" && x.value == 0 && (begin > 0 || end > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("edge padding of empty dim ", d));
    }
    shape.push_back(Dim::Static(x.value + begin + end));
  }
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

std::string CheckDepthToSpaceMode(const AttrValue& value) {
  const std::string& mode = value.get<std::string>();
  return mode == "DCR" || mode == "CRD" ? "" : absl::StrCat("'", mode, "' is not DCR or CRD");
}

Dim Scale(const Dim& d, int64_t factor) {
  return d.is_static() ? Dim::Static(d.value * factor) : Dim::Symbolic();
}

// (N, C, H, W) -> (N, C / b^2, H * b, W * b), or the inverse for space_to_depth.
absl::StatusOr<Type> BlockRearrangeRelation(const TypeRelationInput& in, bool to_space) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->shape.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a 4-D input (N, C, H, W), got ", ShapeToString(data->shape)));
  }
  int64_t b = IntAttr(in.attrs, "block_size");
  const std::vector<Dim>& s = data->shape;
  if (to_space) {
    if (s[1].is_static() && s[1].value % (b * b) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("channels ", s[1].value, " are not divisible by block_size^2 = ", b * b));
    }
    Dim c = s[1].is_static() ? Dim::Static(s[1].value / (b * b)) : Dim::Symbolic();
    return Type(MakeTensorType({s[0], c, Scale(s[2], b), Scale(s[3], b)}, data->dtype));
  }
  std::vector<Dim> shape = {s[0], Scale(s[1], b * b)};
  for (int d = 2; d < 4; ++d) {
    if (s[d].is_static() && s[d].value % b != 0) {
      return absl::InvalidArgumentError(absl::StrCat("spatial dim ", d, " (", s[d].value,
                                                     ") is not divisible by block_size ", b));
    }
    shape.push_back(s[d].is_static() ? Dim::Static(s[d].value / b) : Dim::Symbolic());
  }
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

OpEntry Entry(const char* name, const char* summary, int min_args, int max_args,
              OpPattern pattern) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.min_args = min_args;
  entry.max_args = max_args;
  entry.pattern = pattern;
  return entry;
}

AttrField EpsilonField() {
  return {"epsilon", AttrKind::kFloat, AttrValue(1e-5), "added to the variance",
          CheckNonNegativeFloat};
}

}  // namespace

void RegisterNnOps(OpRegistry& registry) {
  RegisterWindowOps(registry);
  RegisterImageOps(registry);
  {
    OpEntry e = Entry("nn.dense", "x (..., K) times weight (N, K) transposed: (..., N)", 2, 2,
                      OpPattern::kOutElementwiseFusable);
    e.attrs = {{"units", AttrKind::kInt, AttrValue(0),
                "output features when known (0: from the weight)", CheckNonNegative}};
    e.relation = DenseRelation;
    e.scale_axis = ScaleAxisRule::kDenseLayer;
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.matmul", "numpy.matmul: batch dims broadcast, 1-D operands promoted", 2,
                      2, OpPattern::kOutElementwiseFusable);
    e.attrs = {{"transpose_a", AttrKind::kBool, AttrValue(false), "use a's last two dims swapped",
                nullptr},
               {"transpose_b", AttrKind::kBool, AttrValue(false), "use b's last two dims swapped",
                nullptr}};
    e.relation = MatmulRelation;
    e.scale_axis = ScaleAxisRule::kMatmulLayer;
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.bias_add", "data + bias, bias a vector along `axis`", 2, 2,
                      OpPattern::kBroadcast);
    e.attrs = {{"axis", AttrKind::kInt, AttrValue(1), "the axis bias runs along", nullptr}};
    e.relation = BiasAddRelation;
    e.scale_axis = ScaleAxisRule::kChannelwise;
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.batch_norm",
                      "inference batch normalization: (x - mean) / sqrt(var + epsilon) * gamma "
                      "+ beta per channel; args data, gamma, beta, moving_mean, moving_var",
                      5, 5, OpPattern::kOpaque);
    e.attrs = {{"axis", AttrKind::kInt, AttrValue(1), "the channel axis", nullptr}, EpsilonField()};
    e.relation = [](const TypeRelationInput& in) {
      return ChannelNormRelation(in, {"gamma", "beta", "moving_mean", "moving_var"}, 2);
    };
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.instance_norm",
                      "normalizes each (sample, channel) over the spatial dims, then scales by "
                      "gamma and shifts by beta per channel",
                      3, 3, OpPattern::kOpaque);
    e.attrs = {{"axis", AttrKind::kInt, AttrValue(1), "the channel axis", nullptr}, EpsilonField()};
    e.relation = [](const TypeRelationInput& in) {
      return ChannelNormRelation(in, {"gamma", "beta"}, 3);
    };
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.layer_norm",
                      "normalizes over dims axis..rank-1 together, then scales by gamma and "
                      "shifts by the optional beta (both broadcast to those dims)",
                      2, 3, OpPattern::kOpaque);
    e.attrs = {{"axis", AttrKind::kInt, AttrValue(-1), "the first normalized dim", nullptr},
               EpsilonField()};
    e.relation = LayerNormRelation;
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.lrn",
                      "local response normalization across channels: x / (bias + alpha / size * "
                      "sum of squares over `size` neighbours) ^ beta",
                      1, 1, OpPattern::kOpaque);
    e.attrs = {{"size", AttrKind::kInt, std::nullopt, "channels in the window", CheckPositive},
               {"axis", AttrKind::kInt, AttrValue(1), "the channel axis", nullptr},
               {"alpha", AttrKind::kFloat, AttrValue(1e-4), "scale", nullptr},
               {"beta", AttrKind::kFloat, AttrValue(0.75), "exponent", nullptr},
               {"bias", AttrKind::kFloat, AttrValue(1.0), "offset", nullptr}};
    e.relation = LrnRelation;
    registry.Register(std::move(e));
  }
  for (const char* name : {"nn.softmax", "nn.log_softmax", "nn.hardmax"}) {
    const char* summary = std::string_view(name) == "nn.softmax" ? "exp(x) / sum(exp(x)) along axis"
                          : std::string_view(name) == "nn.log_softmax"
                              ? "log(softmax(x)) along axis"
                              : "1 at the first maximum along axis, 0 elsewhere";
    OpEntry e = Entry(name, summary, 1, 1, OpPattern::kOpaque);
    e.attrs = {{"axis", AttrKind::kInt, AttrValue(-1), "the axis", nullptr}};
    e.relation = AxisFloatRelation;
    registry.Register(std::move(e));
  }
  {
    OpEntry e = Entry("nn.pad", "pads data with pad_value (constant), the edge or a reflection", 2,
                      2, OpPattern::kInjective);
    e.attrs = {{"pad_width", AttrKind::kIntArray, std::nullopt,
                "2 * rank values: all begins, then all ends (negative crops)", nullptr},
               {"pad_mode", AttrKind::kString, AttrValue("constant"), "constant, edge or reflect",
                CheckPadMode}};
    e.relation = PadRelation;
    registry.Register(std::move(e));
  }
  for (bool to_space : {true, false}) {
    OpEntry e = Entry(to_space ? "nn.depth_to_space" : "nn.space_to_depth",
                      to_space ? "moves channel blocks into block_size x block_size spatial tiles"
                               : "moves block_size x block_size spatial tiles into channels",
                      1, 1, OpPattern::kInjective);
    e.attrs = {{"block_size", AttrKind::kInt, std::nullopt, "tile extent", CheckPositive}};
    if (to_space) {
      e.attrs.push_back({"mode", AttrKind::kString, AttrValue("DCR"),
                         "channel order: DCR (depth-column-row) or CRD", CheckDepthToSpaceMode});
    }
    e.relation = [to_space](const TypeRelationInput& in) {
      return BlockRearrangeRelation(in, to_space);
    };
    registry.Register(std::move(e));
  }
}

}  // namespace kiln
