// Image operators: resizing the spatial dims of NC[D]HW tensors with nearest,
// linear or cubic interpolation under ONNX's coordinate transformations.
// The attributes say everything the compute needs: the output size, the
// scales the coordinate transformation uses (they may differ from
// size / input when the output size was rounded), and the region of interest;
// or the scales are a second, float operand known only at run time (one per
// spatial dim), and the output size is the attribute's.
#include "absl/strings/str_cat.h"
#include "engine/op/nn_registration.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using AttrCheck = std::function<std::string(const AttrValue&)>;

AttrCheck OneOf(std::vector<std::string> allowed) {
  return [allowed = std::move(allowed)](const AttrValue& value) -> std::string {
    const std::string& s = value.get<std::string>();
    std::string list;
    for (const std::string& a : allowed) {
      if (a == s) return "";
      absl::StrAppend(&list, list.empty() ? "" : ", ", a);
    }
    return absl::StrCat("'", s, "' is not one of ", list);
  };
}

// size: n values, each >= 0 or -1 ("floor(input * scale)", for symbolic inputs).
AttrCheck SizeCheck(size_t n) {
  return [n](const AttrValue& value) -> std::string {
    const auto& values = value.get<AttrValue::Array>();
    if (values.size() != n) return absl::StrCat("must have ", n, " elements, got ", values.size());
    for (const AttrValue& v : values) {
      if (v.get<int64_t>() < -1) return "every element must be >= 0 (or -1: from scales)";
    }
    return "";
  };
}

// An optional float array: empty or `n` values (positive when `positive`).
AttrCheck FloatsCheck(size_t n, bool positive) {
  return [n, positive](const AttrValue& value) -> std::string {
    const auto& values = value.get<AttrValue::Array>();
    if (values.empty()) return "";
    if (values.size() != n) {
      return absl::StrCat("must be empty or have ", n, " elements, got ", values.size());
    }
    for (const AttrValue& v : values) {
      if (positive && !(v.get<double>() > 0)) return "every element must be > 0";
    }
    return "";
  };
}

absl::StatusOr<Type> ResizeRelation(const TypeRelationInput& in, int n) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->shape.size() != static_cast<size_t>(n + 2)) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", n + 2, "-D input (N, C and ", n,
                                                   " spatial dims), got ",
                                                   ShapeToString(data->shape)));
  }
  const std::string& method = StringAttr(in.attrs, "method");
  if (method != "nearest_neighbor" && data->dtype == DataType::kBool) {
    return absl::InvalidArgumentError(absl::StrCat(method,
                                                   " interpolation needs a numeric dtype, got "
                                                   "bool"));
  }
  std::vector<int64_t> size = IntArrayAttr(in.attrs, "size");
  const AttrValue::Array& scales = in.attrs.Find("scales")->get<AttrValue::Array>();
  const bool crop = StringAttr(in.attrs, "coordinate_transformation_mode") == "tf_crop_and_resize";
  const bool roi_attr = !in.attrs.Find("roi")->get<AttrValue::Array>().empty();
  bool roi_operand = false;
  if (in.args.size() == 2) {
    // The operand known only at run time: n scales, or (tf_crop_and_resize) the roi's n starts
    // then n ends.
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* run_time, TensorArg(in, 1));
    roi_operand = crop && !roi_attr && run_time->shape.size() == 1 &&
                  run_time->shape[0] == Dim::Static(2 * n);
    if (!IsFloat(run_time->dtype) || run_time->shape.size() != 1 ||
        (run_time->shape[0] != Dim::Static(n) && !roi_operand)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the operand must be ", n, " scales", crop ? absl::StrCat(" or ", 2 * n, " roi values") : "",
          " (floats, per spatial dim), got ", TypeToString(in.args[1])));
    }
    if (!scales.empty() && !roi_operand) {
      return absl::InvalidArgumentError("scales are given both as an attribute and an operand");
    }
    for (int64_t extent : size) {
      if (extent < 0) {
        return absl::InvalidArgumentError(
            "with scales or a roi as an operand, the size must be given");
      }
    }
  }
  if (crop && !roi_attr && !roi_operand) {
    return absl::InvalidArgumentError("tf_crop_and_resize needs a roi");
  }
  std::vector<Dim> shape = {data->shape[0], data->shape[1]};
  for (int d = 0; d < n; ++d) {
    if (size[d] >= 0) {
      shape.push_back(Dim::Static(size[d]));
      continue;
    }
    if (scales.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("size of spatial dim ", d, " is -1 (from scales) but scales are empty"));
    }
    const Dim& x = data->shape[2 + d];
    shape.push_back(x.is_static() ? Dim::Static(static_cast<int64_t>(static_cast<double>(x.value) *
                                                                     scales[d].get<double>()))
                                  : Dim::Symbolic());
  }
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

}  // namespace

void RegisterImageOps(OpRegistry& registry) {
  for (int n = 1; n <= 3; ++n) {
    OpEntry entry;
    entry.name = absl::StrCat("image.resize", n, "d");
    entry.summary = absl::StrCat("resizes the ", n, " spatial dims of an NC",
                                 n == 1   ? "W"
                                 : n == 2 ? "HW"
                                          : "DHW",
                                 " tensor by interpolation");
    entry.attrs = {
        {"size", AttrKind::kIntArray, std::nullopt,
         "output spatial extents; -1: floor(input * scale), for symbolic inputs", SizeCheck(n)},
        {"scales", AttrKind::kFloatArray, AttrValue(AttrValue::Array{}),
         "output / input per spatial dim as the coordinate transformation uses it (empty: "
         "size / input)",
         FloatsCheck(n, true)},
        {"roi", AttrKind::kFloatArray, AttrValue(AttrValue::Array{}),
         "tf_crop_and_resize only: normalized starts of the spatial dims, then their ends",
         FloatsCheck(2 * n, false)},
        {"method", AttrKind::kString, AttrValue("nearest_neighbor"),
         "nearest_neighbor, linear or cubic", OneOf({"nearest_neighbor", "linear", "cubic"})},
        {"coordinate_transformation_mode", AttrKind::kString, AttrValue("half_pixel"),
         "how an output coordinate maps to an input coordinate",
         OneOf({"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                "tf_half_pixel_for_nn", "tf_crop_and_resize"})},
        {"rounding_method", AttrKind::kString, AttrValue("round_prefer_floor"),
         "nearest_neighbor only: how the input coordinate rounds",
         OneOf({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})},
        {"cubic_alpha", AttrKind::kFloat, AttrValue(-0.75), "cubic only: the coefficient a",
         nullptr},
        {"cubic_exclude", AttrKind::kBool, AttrValue(false),
         "cubic only: weights of samples outside the input are zeroed and renormalized", nullptr},
        {"extrapolation_value", AttrKind::kFloat, AttrValue(0.0),
         "tf_crop_and_resize only: the value outside the input", nullptr},
    };
    entry.max_args = 2;  // data, and optionally the scales (or roi) known only at run time
    entry.relation = [n](const TypeRelationInput& in) { return ResizeRelation(in, n); };
    entry.pattern = OpPattern::kInjective;
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
