// Compute definition of image.resize1d/2d/3d (image.cc), following ONNX
// Resize: each output coordinate maps to an input coordinate by the
// coordinate transformation mode (with the scale the attributes give, which
// may differ from output / input after rounding), then nearest (with the
// rounding method), linear or cubic (coefficient a, optionally excluding
// samples outside the input) interpolation, separable over the spatial dims.
// Samples outside the input read the edge. tf_crop_and_resize gives
// extrapolation_value where a coordinate leaves the input. Coordinates and
// weights are float64; the result is converted to the data's dtype. With the
// scales as a second operand, the same formulas read them when the kernel runs.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::AsExprs;
using compute::Cast;
using compute::Index;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;
using loop::Intrinsic;

constexpr DataType kF64 = DataType::kFloat64;

PrimExpr F(double v) { return compute::Const(kF64, v); }
PrimExpr Floor(const PrimExpr& x) { return loop::MakeIntrinsic(Intrinsic::kFloor, {x}); }
PrimExpr ToIndex(const PrimExpr& x) { return Cast(DataType::kInt64, x); }

std::vector<double> FloatArrayAttr(const AttrsNode& attrs, std::string_view key) {
  std::vector<double> out;
  for (const AttrValue& v : attrs.Find(key)->get<AttrValue::Array>()) {
    out.push_back(v.is<double>() ? v.get<double>() : static_cast<double>(v.get<int64_t>()));
  }
  return out;
}

// One spatial dim: where output coordinate x reads the input.
struct Axis {
  int64_t in_extent = 0;
  double scale = 1;
  double roi_start = 0, roi_end = 1;
  PrimExpr run_time_scale;  // float64, when the scales are an operand
  PrimExpr run_time_roi_start, run_time_roi_end;  // float64, when the roi is an operand

  // The input coordinate of output coordinate `x` (float64).
  PrimExpr Source(const PrimExpr& x, const std::string& mode) const {
    if (run_time_scale.defined()) return RunTimeSource(x, mode);
    double in = static_cast<double>(in_extent);
    // ONNX's "length_resized" is input * scale, not the rounded output size.
    double resized = in * scale;
    if (mode == "asymmetric") return x / F(scale);
    if (mode == "tf_half_pixel_for_nn") return (x + F(0.5)) / F(scale);
    if (mode == "align_corners") {
      if (resized == 1) return F(0);
      return x * F((in - 1) / (resized - 1));
    }
    if (mode == "pytorch_half_pixel") {
      // ONNX's reference implementation (which made the backend test data)
      // maps a length-1 output to -0.5.
      if (resized == 1) return F(-0.5);
      return (x + F(0.5)) / F(scale) - F(0.5);
    }
    if (mode == "tf_crop_and_resize" && run_time_roi_start.defined()) {
      PrimExpr length = (run_time_roi_end - run_time_roi_start) * F(in - 1);
      PrimExpr start = run_time_roi_start * F(in - 1);
      if (resized == 1) return length / F(2) + start;
      return x * (length / F(resized - 1)) + start;
    }
    if (mode == "tf_crop_and_resize") {
      if (resized == 1) return F((roi_end - roi_start) * (in - 1) / 2 + roi_start * (in - 1));
      return x * F((roi_end - roi_start) * (in - 1) / (resized - 1)) + F(roi_start * (in - 1));
    }
    return (x + F(0.5)) / F(scale) - F(0.5);  // half_pixel
  }

  // Source() with the scale read at run time: the same formulas, the special case of a
  // length-1 resized axis a select.
  PrimExpr RunTimeSource(const PrimExpr& x, const std::string& mode) const {
    const PrimExpr& s = run_time_scale;
    PrimExpr in = F(static_cast<double>(in_extent));
    PrimExpr resized = in * s;
    PrimExpr single = loop::Equal(resized, F(1));
    if (mode == "asymmetric") return x / s;
    if (mode == "tf_half_pixel_for_nn") return (x + F(0.5)) / s;
    if (mode == "align_corners") {
      return loop::MakeSelect(single, F(0), x * ((in - F(1)) / (resized - F(1))));
    }
    if (mode == "pytorch_half_pixel") {
      return loop::MakeSelect(single, F(-0.5), (x + F(0.5)) / s - F(0.5));
    }
    if (mode == "tf_crop_and_resize") {
      double length = (roi_end - roi_start) * static_cast<double>(in_extent - 1);
      double start = roi_start * static_cast<double>(in_extent - 1);
      return loop::MakeSelect(single, F(length / 2 + start),
                              x * (F(length) / (resized - F(1))) + F(start));
    }
    return (x + F(0.5)) / s - F(0.5);  // half_pixel
  }
};

// The nearest input index of coordinate `c` under `rounding`, in [0, in).
PrimExpr NearestIndex(const PrimExpr& c, const std::string& rounding, int64_t in_extent) {
  PrimExpr f = Floor(c);
  PrimExpr fraction = c - f;
  PrimExpr index;
  if (rounding == "floor") {
    index = f;
  } else if (rounding == "ceil") {
    index = loop::MakeIntrinsic(Intrinsic::kCeil, {c});
  } else if (rounding == "round_prefer_ceil") {
    index = loop::MakeSelect(fraction < F(0.5), f, f + F(1));
  } else {  // round_prefer_floor
    index = loop::MakeSelect(fraction <= F(0.5), f, f + F(1));
  }
  return compute::ClampIndex(ToIndex(index), in_extent);
}

// The cubic convolution weights of the four samples floor(c) - 1 .. + 2 at
// fraction t (Keys' kernel with coefficient a).
std::vector<PrimExpr> CubicWeights(const PrimExpr& t, double a) {
  auto near = [&](const PrimExpr& d) {  // |d| <= 1
    return ((F(a + 2) * d - F(a + 3)) * d * d) + F(1);
  };
  auto far = [&](const PrimExpr& d) {  // 1 < |d| < 2
    return ((F(a) * d - F(5 * a)) * d + F(8 * a)) * d - F(4 * a);
  };
  PrimExpr s = F(1) - t;
  return {far(t + F(1)), near(t), near(s), far(s + F(1))};
}

// One tap of the separable interpolation along a dim: an input index and
// its weight.
struct Tap {
  PrimExpr index;
  PrimExpr weight;
};

absl::StatusOr<std::vector<Tensor>> ResizeCompute(const ComputeInput& in, const std::string& op,
                                                  int n) {
  if (in.inputs.size() != 2) KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
  const Tensor& data = in.inputs[0];
  std::vector<Tensor> operands = {data};
  if (in.inputs.size() == 2) operands.push_back(in.inputs[1]);
  std::vector<double> scales = FloatArrayAttr(in.attrs, "scales");
  std::vector<double> roi = FloatArrayAttr(in.attrs, "roi");
  const std::string method = StringAttr(in.attrs, "method");
  const std::string mode = StringAttr(in.attrs, "coordinate_transformation_mode");
  const std::string rounding = StringAttr(in.attrs, "rounding_method");
  double cubic_a = FloatAttr(in.attrs, "cubic_alpha");
  bool exclude = BoolAttr(in.attrs, "cubic_exclude");
  double extrapolation = FloatAttr(in.attrs, "extrapolation_value");
  bool crop = mode == "tf_crop_and_resize";

  std::vector<Axis> axes(n);
  for (int d = 0; d < n; ++d) {
    Axis& a = axes[d];
    a.in_extent = data.shape()[2 + d];
    int64_t out_extent = result.shape[2 + d];
    if (a.in_extent == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": cannot resize spatial dim ", d, " of extent 0"));
    }
    a.scale = scales.empty() ? static_cast<double>(out_extent) / static_cast<double>(a.in_extent)
                             : scales[d];
    // The operand known only at run time: n scales, or the roi's n starts then n ends.
    const bool roi_operand = operands.size() == 2 && operands[1].shape()[0] == 2 * n;
    if (roi_operand) {
      a.run_time_roi_start = Cast(kF64, operands[1]({compute::Index(d)}));
      a.run_time_roi_end = Cast(kF64, operands[1]({compute::Index(n + d)}));
    } else if (operands.size() == 2) {
      a.run_time_scale = Cast(kF64, operands[1]({compute::Index(d)}));
    }
    if (crop && !roi_operand) {
      a.roi_start = roi[d];
      a.roi_end = roi[n + d];
    }
  }

  return compute::One(te::Compute(
      compute::ComputeName(op), result.shape, operands,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<std::vector<Tap>> taps(n);
        std::vector<PrimExpr> outside;
        for (int d = 0; d < n; ++d) {
          const Axis& a = axes[d];
          PrimExpr c = a.Source(Cast(kF64, i[2 + d]), mode);
          if (crop) {
            outside.push_back(c < F(0) || c > F(static_cast<double>(a.in_extent - 1)));
          }
          if (method == "nearest_neighbor") {
            taps[d].push_back({NearestIndex(c, rounding, a.in_extent), F(1)});
            continue;
          }
          PrimExpr f = Floor(c);
          PrimExpr t = c - f;
          PrimExpr base = ToIndex(f);
          if (method == "linear") {
            taps[d].push_back({compute::ClampIndex(base, a.in_extent), F(1) - t});
            taps[d].push_back({compute::ClampIndex(base + 1, a.in_extent), t});
            continue;
          }
          std::vector<PrimExpr> weights = CubicWeights(t, cubic_a);
          std::vector<PrimExpr> raw_index;
          for (int64_t k = 0; k < 4; ++k) raw_index.push_back(base + (k - 1));
          if (exclude) {
            PrimExpr total = F(0);
            for (int64_t k = 0; k < 4; ++k) {
              weights[k] =
                  loop::MakeSelect(compute::InRange(raw_index[k], a.in_extent), weights[k], F(0));
              total = total + weights[k];
            }
            for (PrimExpr& wk : weights) wk = wk / total;
          }
          for (int64_t k = 0; k < 4; ++k) {
            taps[d].push_back({compute::ClampIndex(raw_index[k], a.in_extent), weights[k]});
          }
        }
        PrimExpr any_outside;
        for (const PrimExpr& o : outside)
          any_outside = any_outside.defined() ? any_outside || o : o;
        if (method == "nearest_neighbor") {
          // A copy of one input element: exact for every dtype.
          std::vector<PrimExpr> idx = {i[0], i[1]};
          for (int d = 0; d < n; ++d) idx.push_back(taps[d][0].index);
          PrimExpr sample = data(idx);
          if (!crop) return sample;
          return loop::MakeSelect(any_outside, compute::Const(result.dtype, extrapolation), sample);
        }
        // Sum over every combination of taps (one per dim) of the product of
        // their weights times the sample.
        PrimExpr value;
        std::vector<size_t> pick(n, 0);
        while (true) {
          std::vector<PrimExpr> idx = {i[0], i[1]};
          PrimExpr weight;
          for (int d = 0; d < n; ++d) {
            const Tap& tap = taps[d][pick[d]];
            idx.push_back(tap.index);
            weight = weight.defined() ? weight * tap.weight : tap.weight;
          }
          PrimExpr term = weight * Cast(kF64, data(idx));
          value = value.defined() ? value + term : term;
          int d = n - 1;
          while (d >= 0 && ++pick[d] == taps[d].size()) pick[d--] = 0;
          if (d < 0) break;
        }
        if (crop) value = loop::MakeSelect(any_outside, F(extrapolation), value);
        return Cast(result.dtype, value);
      },
      "injective"));
}

}  // namespace

void RegisterImageComputes(OpRegistry& registry) {
  for (int n = 1; n <= 3; ++n) {
    std::string op = absl::StrCat("image.resize", n, "d");
    registry.SetCompute(op, [op, n](const ComputeInput& in) { return ResizeCompute(in, op, n); });
  }
}

}  // namespace kiln
