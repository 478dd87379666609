// Reduction operators: sum, mean, max, min and prod over a set of axes, and
// argmax / argmin along one axis. ONNX's ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp and ReduceSumSquare have no op of their own: the frontend
// expands them into these and elementwise ops (reduce_converters.cc).
#include "absl/strings/str_cat.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

// Which axes of a rank-`rank` input (axis, exclude) reduces. An empty list
// reduces every axis (with or without exclude: "all but none" is all).
absl::StatusOr<std::vector<bool>> ReducedAxes(const std::vector<int64_t>& axis, bool exclude,
                                              int64_t rank) {
  if (axis.empty()) return std::vector<bool>(rank, true);
  std::vector<bool> listed(rank, false);
  for (int64_t a : axis) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, rank));
    if (listed[n]) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is listed twice"));
    }
    listed[n] = true;
  }
  if (exclude) {
    for (size_t i = 0; i < listed.size(); ++i) listed[i] = !listed[i];
  }
  return listed;
}

// The shape left after reducing `reduced`: kept as extent 1 or dropped.
std::vector<Dim> ReducedShape(const std::vector<Dim>& shape, const std::vector<bool>& reduced,
                              bool keepdims) {
  std::vector<Dim> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(shape[i]);
    } else if (keepdims) {
      out.push_back(Dim::Static(1));
    }
  }
  return out;
}

absl::StatusOr<Type> ReduceRelation(const TypeRelationInput& in, bool numeric_only) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  if (numeric_only && t->dtype == DataType::kBool) {
    return absl::InvalidArgumentError("argument 0 has dtype bool, expected a numeric dtype");
  }
  int64_t rank = static_cast<int64_t>(t->shape.size());
  KILN_ASSIGN_OR_RETURN(
      std::vector<bool> reduced,
      ReducedAxes(IntArrayAttr(in.attrs, "axis"), BoolAttr(in.attrs, "exclude"), rank));
  // Reducing an empty axis has no identity for max and min; the runtime
  // reports it (the extent may be symbolic here).
  return Type(
      MakeTensorType(ReducedShape(t->shape, reduced, BoolAttr(in.attrs, "keepdims")), t->dtype));
}

absl::StatusOr<Type> ArgReduceRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  if (t->dtype == DataType::kBool) {
    return absl::InvalidArgumentError("argument 0 has dtype bool, expected a numeric dtype");
  }
  int64_t rank = static_cast<int64_t>(t->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(in.attrs, "axis"), rank));
  if (t->shape[axis].is_static() && t->shape[axis].value == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot take the index of an extreme along axis ", axis, " of extent 0"));
  }
  std::vector<bool> reduced(rank, false);
  reduced[axis] = true;
  return Type(MakeTensorType(ReducedShape(t->shape, reduced, BoolAttr(in.attrs, "keepdims")),
                             DataType::kInt64));
}

void Reduce(OpRegistry& registry, const char* name, bool numeric_only, const char* summary) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.attrs = {
      {"axis", AttrKind::kIntArray, IntArray({}), "axes to reduce; empty reduces all", nullptr},
      {"keepdims", AttrKind::kBool, AttrValue(false), "keep reduced axes with extent 1", nullptr},
      {"exclude", AttrKind::kBool, AttrValue(false), "reduce the axes not listed instead", nullptr},
  };
  entry.relation = [numeric_only](const TypeRelationInput& in) {
    return ReduceRelation(in, numeric_only);
  };
  entry.pattern = OpPattern::kReduction;
  registry.Register(std::move(entry));
}

void ArgReduce(OpRegistry& registry, const char* name, const char* summary) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.attrs = {
      {"axis", AttrKind::kInt, AttrValue(0), "the axis to search", nullptr},
      {"keepdims", AttrKind::kBool, AttrValue(false), "keep the axis with extent 1", nullptr},
      {"select_last_index", AttrKind::kBool, AttrValue(false),
       "on ties, the last index instead of the first", nullptr},
  };
  entry.relation = ArgReduceRelation;
  entry.pattern = OpPattern::kReduction;
  registry.Register(std::move(entry));
}

}  // namespace

void RegisterReduceOps(OpRegistry& registry) {
  Reduce(registry, "sum", true, "sum over axes");
  Reduce(registry, "mean", true, "arithmetic mean over axes (integers truncate)");
  Reduce(registry, "prod", true, "product over axes");
  Reduce(registry, "max", false, "maximum over axes");
  Reduce(registry, "min", false, "minimum over axes");
  ArgReduce(registry, "argmax", "int64 index of the maximum along an axis");
  ArgReduce(registry, "argmin", "int64 index of the minimum along an axis");
}

}  // namespace kiln
