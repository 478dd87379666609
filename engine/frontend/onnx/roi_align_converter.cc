// RoiAlign as graph ops, for a fixed sampling_ratio (the adaptive 0 makes the sample count
// depend on each box's size, known only at run time). Every box's sample points are computed
// from the rois at run time ([R, oh, grid] rows and [R, ow, grid] columns), each sample's four
// neighbours gathered from its box's image and weighted bilinearly as the ONNX reference does
// (a sample more than one pixel outside the map contributes 0; coordinates clamp at the edges),
// then averaged or maxed over each bin's grid: [R, C, oh, ow].
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kMaxSamplingRatio = 64;
constexpr int64_t kMaxPooled = 1 << 12;

// Sample positions along one axis of every box, [R, pooled, grid], in pixels: start + bin *
// (p + (i + 0.5) / grid); and whether each lies within a pixel of the map ([-1, extent]).
struct AxisSamples {
  Expr low, high;        // the neighbouring pixel indices, int64
  Expr frac, rest;       // the weights of high and low: frac = pos - low, rest = 1 - frac
  Expr valid;            // bool
};

absl::StatusOr<AxisSamples> Samples(ConvertContext& ctx, const Expr& start, const Expr& end,
                                    bool clamp_size, int64_t pooled, int64_t grid, int64_t extent) {
  auto f = [&](double v) { return ctx.Constant(ScalarTensor(DataType::kFloat32, v)); };
  KILN_ASSIGN_OR_RETURN(Expr size, ctx.Call("subtract", {end, start}));  // [R, 1, 1]
  if (clamp_size) {
    KILN_ASSIGN_OR_RETURN(size, ctx.Call("maximum", {size, f(1)}));  // malformed boxes become 1
  }
  KILN_ASSIGN_OR_RETURN(Expr bin, ctx.Call("divide", {size, f(static_cast<double>(pooled))}));
  std::vector<float> steps;
  for (int64_t p = 0; p < pooled; ++p) {
    for (int64_t i = 0; i < grid; ++i) {
      steps.push_back(static_cast<float>(p + (i + 0.5) / static_cast<double>(grid)));
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr offset, ctx.Call("multiply", {bin, ctx.Constant(Float32Tensor({1, pooled, grid}, steps))}));
  KILN_ASSIGN_OR_RETURN(Expr pos, ctx.Call("add", {start, offset}));
  KILN_ASSIGN_OR_RETURN(Expr above, ctx.Call("greater_equal", {pos, f(-1)}));
  KILN_ASSIGN_OR_RETURN(Expr below, ctx.Call("less_equal", {pos, f(static_cast<double>(extent))}));
  AxisSamples s;
  KILN_ASSIGN_OR_RETURN(s.valid, ctx.Call("logical_and", {above, below}));
  // Clamped into [0, extent - 1]; at the last pixel both neighbours are that pixel.
  KILN_ASSIGN_OR_RETURN(pos, ctx.Call("maximum", {pos, f(0)}));
  KILN_ASSIGN_OR_RETURN(pos, ctx.Call("minimum", {pos, f(static_cast<double>(extent - 1))}));
  KILN_ASSIGN_OR_RETURN(Expr low, ctx.Call("floor", {pos}));
  KILN_ASSIGN_OR_RETURN(s.frac, ctx.Call("subtract", {pos, low}));
  KILN_ASSIGN_OR_RETURN(s.rest, ctx.Call("subtract", {f(1), s.frac}));
  KILN_ASSIGN_OR_RETURN(Expr high, ctx.Call("add", {low, f(1)}));
  KILN_ASSIGN_OR_RETURN(high, ctx.Call("minimum", {high, f(static_cast<double>(extent - 1))}));
  KILN_ASSIGN_OR_RETURN(s.low, ctx.Call("cast", {low}, MakeAttrs({{"dtype", DataType::kInt64}})));
  KILN_ASSIGN_OR_RETURN(s.high, ctx.Call("cast", {high}, MakeAttrs({{"dtype", DataType::kInt64}})));
  return s;
}

absl::StatusOr<std::vector<Expr>> ConvertRoiAlign(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr rois, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr batch_indices, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tr, ctx.InputTensorType(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tb, ctx.InputTensorType(2));
  std::vector<int64_t> xs, rs;
  for (const Dim& d : tx->shape) xs.push_back(d.is_static() ? d.value : -1);
  for (const Dim& d : tr->shape) rs.push_back(d.is_static() ? d.value : -1);
  if (xs.size() != 4 || rs.size() != 2 || rs[1] != 4 || tx->dtype != DataType::kFloat32 ||
      tr->dtype != DataType::kFloat32 || tb->dtype != DataType::kInt64 || tb->shape.size() != 1) {
    return ctx.Error("expected X float32 [N, C, H, W], rois float32 [R, 4] and batch_indices int64 [R]");
  }
  for (int64_t d : xs) {
    if (d < 1) return ctx.Error("X must have a static shape with nonzero extents");
  }
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], r = rs[0];
  if (r < 0 || !tb->shape[0].is_static() || tb->shape[0].value != r) {
    return ctx.Error("rois and batch_indices must hold the same static number of boxes");
  }
  KILN_ASSIGN_OR_RETURN(std::string transform, ctx.StringAttr("coordinate_transformation_mode", "half_pixel"));
  KILN_ASSIGN_OR_RETURN(std::string mode, ctx.StringAttr("mode", "avg"));
  KILN_ASSIGN_OR_RETURN(int64_t oh, ctx.IntAttr("output_height", 1));
  KILN_ASSIGN_OR_RETURN(int64_t ow, ctx.IntAttr("output_width", 1));
  KILN_ASSIGN_OR_RETURN(int64_t grid, ctx.IntAttr("sampling_ratio", 0));
  KILN_ASSIGN_OR_RETURN(double scale, ctx.FloatAttr("spatial_scale", 1.0f));
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return ctx.Error(absl::StrCat("coordinate_transformation_mode '", transform,
                                  "'; expected half_pixel or output_half_pixel"));
  }
  if (mode != "avg" && mode != "max") {
    return ctx.Error(absl::StrCat("mode '", mode, "'; expected avg or max"));
  }
  if (grid == 0) {
    return ctx.Error("sampling_ratio 0 (adaptive: a sample count per box known only at run time) "
                     "is not supported; give a positive sampling_ratio");
  }
  if (grid < 0 || grid > kMaxSamplingRatio || oh < 1 || ow < 1 || oh > kMaxPooled || ow > kMaxPooled) {
    return ctx.Error(absl::StrCat("expected sampling_ratio in [1, ", kMaxSamplingRatio,
                                  "] and output_height, output_width in [1, ", kMaxPooled, "]"));
  }
  const int64_t samples = oh * grid * ow * grid;
  if (r * c > ctx.options().max_tensor_elements / samples) {
    return ctx.Error(absl::StrCat(r, " boxes x ", c, " channels x ", samples,
                                  " samples exceed the element limit"));
  }
  // The two sample-step tables (pooled x grid floats each) are the constants this node makes.
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes((oh + ow) * grid * int64_t{sizeof(float)}, "RoiAlign's sample steps"));
  const bool half_pixel = transform == "half_pixel";
  auto f = [&](double v) { return ctx.Constant(ScalarTensor(DataType::kFloat32, v)); };
  // One coordinate of every box, scaled and shifted: [R, 1, 1].
  auto coordinate = [&](int64_t k) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr col, ctx.Call("strided_slice", {rois},
                                             MakeAttrs({{"begin", IntArray({k})}, {"end", IntArray({k + 1})},
                                                        {"strides", IntArray({1})}, {"axes", IntArray({1})}})));
    KILN_ASSIGN_OR_RETURN(col, ctx.Call("reshape", {col}, MakeAttrs({{"newshape", IntArray({r, 1, 1})}})));
    KILN_ASSIGN_OR_RETURN(col, ctx.Call("multiply", {col, f(scale)}));
    return ctx.Call("subtract", {col, f(half_pixel ? 0.5 : 0.0)});
  };
  KILN_ASSIGN_OR_RETURN(Expr x1, coordinate(0));
  KILN_ASSIGN_OR_RETURN(Expr y1, coordinate(1));
  KILN_ASSIGN_OR_RETURN(Expr x2, coordinate(2));
  KILN_ASSIGN_OR_RETURN(Expr y2, coordinate(3));
  KILN_ASSIGN_OR_RETURN(AxisSamples ys, Samples(ctx, y1, y2, !half_pixel, oh, grid, h));
  KILN_ASSIGN_OR_RETURN(AxisSamples xs_, Samples(ctx, x1, x2, !half_pixel, ow, grid, w));
  // Rows as [R, oh, grid, 1, 1], columns as [R, 1, 1, ow, grid].
  auto as_rows = [&](const Expr& e) {
    return ctx.Call("reshape", {e}, MakeAttrs({{"newshape", IntArray({r, oh, grid, 1, 1})}}));
  };
  auto as_columns = [&](const Expr& e) {
    return ctx.Call("reshape", {e}, MakeAttrs({{"newshape", IntArray({r, 1, 1, ow, grid})}}));
  };
  // The box's image, [R, C, H * W].
  KILN_ASSIGN_OR_RETURN(Expr images, ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray({n, c, h * w})}})));
  KILN_ASSIGN_OR_RETURN(images, ctx.Call("take", {images, batch_indices}, MakeAttrs({{"axis", int64_t{0}}})));
  KILN_ASSIGN_OR_RETURN(Expr valid_rows, as_rows(ys.valid));
  KILN_ASSIGN_OR_RETURN(Expr valid_columns, as_columns(xs_.valid));
  KILN_ASSIGN_OR_RETURN(Expr valid, ctx.Call("logical_and", {valid_rows, valid_columns}));
  // The four neighbours: (low|high row, low|high column) with weight (rest|frac) x (rest|frac).
  std::vector<Expr> terms;
  for (int corner = 0; corner < 4; ++corner) {
    const bool high_row = corner >= 2, high_column = corner % 2 == 1;
    KILN_ASSIGN_OR_RETURN(Expr row, as_rows(high_row ? ys.high : ys.low));
    KILN_ASSIGN_OR_RETURN(Expr column, as_columns(high_column ? xs_.high : xs_.low));
    KILN_ASSIGN_OR_RETURN(Expr offset, ctx.Call("multiply", {row, ctx.Constant(MakeScalar(w))}));
    KILN_ASSIGN_OR_RETURN(Expr pos, ctx.Call("add", {offset, column}));  // [R, oh, g, ow, g]
    KILN_ASSIGN_OR_RETURN(pos, ctx.Call("reshape", {pos}, MakeAttrs({{"newshape", IntArray({r, 1, samples})}})));
    KILN_ASSIGN_OR_RETURN(pos, ctx.Call("broadcast_to", {pos},
                                        MakeAttrs({{"shape", ShapeValue{{Dim::Static(r), Dim::Static(c),
                                                                         Dim::Static(samples)}}}})));
    KILN_ASSIGN_OR_RETURN(Expr value, ctx.Call("gather_elements", {images, pos}, MakeAttrs({{"axis", int64_t{2}}})));
    KILN_ASSIGN_OR_RETURN(value, ctx.Call("reshape", {value},
                                          MakeAttrs({{"newshape", IntArray({r, c, oh, grid, ow, grid})}})));
    KILN_ASSIGN_OR_RETURN(Expr row_weight, as_rows(high_row ? ys.frac : ys.rest));
    KILN_ASSIGN_OR_RETURN(Expr column_weight, as_columns(high_column ? xs_.frac : xs_.rest));
    KILN_ASSIGN_OR_RETURN(Expr weight, ctx.Call("multiply", {row_weight, column_weight}));
    KILN_ASSIGN_OR_RETURN(weight, ctx.Call("where", {valid, weight, f(0)}));
    KILN_ASSIGN_OR_RETURN(weight, ctx.Call("expand_dims", {weight}, MakeAttrs({{"axis", int64_t{1}},
                                                                              {"num_newaxis", int64_t{1}}})));
    KILN_ASSIGN_OR_RETURN(Expr term, ctx.Call("multiply", {weight, value}));
    terms.push_back(term);
  }
  Expr y;
  if (mode == "avg") {
    KILN_ASSIGN_OR_RETURN(Expr sum, ctx.Call("add", {terms[0], terms[1]}));
    KILN_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, terms[2]}));
    KILN_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, terms[3]}));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("sum", {sum}, MakeAttrs({{"axis", IntArray({3, 5})}, {"keepdims", false}})));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("divide", {y, f(static_cast<double>(grid * grid))}));
  } else {
    KILN_ASSIGN_OR_RETURN(Expr best, ctx.Call("maximum", {terms[0], terms[1]}));
    KILN_ASSIGN_OR_RETURN(best, ctx.Call("maximum", {best, terms[2]}));
    KILN_ASSIGN_OR_RETURN(best, ctx.Call("maximum", {best, terms[3]}));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("max", {best}, MakeAttrs({{"axis", IntArray({3, 5})}, {"keepdims", false}})));
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterRoiAlignConverter(ConverterTable& table) { table.Add("RoiAlign", ConvertRoiAlign); }

}  // namespace kiln::onnx_frontend
