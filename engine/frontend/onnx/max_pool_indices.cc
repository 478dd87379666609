// MaxPool's second output, Indices (2-D windows): for each output element, the flat index into
// X of the window's maximum (row-major, or with storage_order 1 column-major within each
// (n, c) image), the smallest such index on ties. Built from graph ops: the input padded with
// -inf, one strided slice per window tap, and the minimum over taps of the tap's index where
// the tap equals the pooled maximum. Each tap is read once, in a chain of minimums: a running
// maximum that also selected the index would read the previous maximum twice per tap, and
// fused and inlined, such a chain doubles at every tap.
#include "engine/frontend/onnx/max_pool_indices.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// Taps a window may have: each is a few graph nodes.
constexpr int64_t kMaxWindowTaps = 4096;


}  // namespace

absl::StatusOr<Expr> MaxPoolIndices(ConvertContext& ctx, const Expr& x,
                                    const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations,
                                    const std::vector<int64_t>& pads, const Expr& pooled) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  const auto* ty = pooled->checked_type.as<TensorTypeNode>();
  if (tx->shape.size() != 4 || kernel.size() != 2 || ty == nullptr) {
    return ctx.Error("output 1 (Indices) is supported for 2-D windows only");
  }
  std::vector<int64_t> xs, ys;
  for (const Dim& d : tx->shape) xs.push_back(d.is_static() ? d.value : -1);
  for (const Dim& d : ty->shape) ys.push_back(d.is_static() ? d.value : -1);
  for (int64_t d : xs) {
    if (d < 0) return ctx.Error("output 1 (Indices) needs a static input shape");
  }
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], oh = ys[2], ow = ys[3];
  if (kernel[0] * kernel[1] > kMaxWindowTaps) {
    return ctx.Error(absl::StrCat("output 1 (Indices) of a window of ", kernel[0] * kernel[1],
                                  " taps is more than the ", kMaxWindowTaps, " Kiln builds"));
  }
  KILN_ASSIGN_OR_RETURN(int64_t storage_order, ctx.IntAttr("storage_order", 0));
  // One (OH, OW) table of positions per tap, and the images' first indices.
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(
      (n * c + kernel[0] * kernel[1] * oh * ow) * int64_t{sizeof(int64_t)},
      "MaxPool's index tables"));
  // Padding reads -inf: a padded tap never beats a real one. The end padding also covers the
  // last window's overhang with ceil_mode.
  const int64_t overhang_h = std::max<int64_t>(
      0, (oh - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1 - (h + pads[0] + pads[2]));
  const int64_t overhang_w = std::max<int64_t>(
      0, (ow - 1) * strides[1] + (kernel[1] - 1) * dilations[1] + 1 - (w + pads[1] + pads[3]));
  Expr lowest = ctx.Constant(ScalarTensor(tx->dtype, -std::numeric_limits<double>::infinity()));
  KILN_ASSIGN_OR_RETURN(Expr padded,
                        ctx.Call("nn.pad", {x, lowest},
                                 MakeAttrs({{"pad_width", IntArray({0, 0, pads[0], pads[1], 0, 0,
                                                                    pads[2] + overhang_h,
                                                                    pads[3] + overhang_w})},
                                            {"pad_mode", std::string("constant")}})));
  // The (n, c) image's first flat index, (N, C, 1, 1).
  std::vector<int64_t> image_base;
  for (int64_t i = 0; i < n * c; ++i) image_base.push_back(i * h * w);
  Expr base = ctx.Constant(Int64Tensor({n, c, 1, 1}, image_base));
  Expr best_index;
  Expr none = ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(h * w)));
  for (int64_t kh = 0; kh < kernel[0]; ++kh) {
    for (int64_t kw = 0; kw < kernel[1]; ++kw) {
      const int64_t row0 = kh * dilations[0], col0 = kw * dilations[1];
      KILN_ASSIGN_OR_RETURN(
          Expr tap, ctx.Call("strided_slice", {padded},
                             MakeAttrs({{"begin", IntArray({row0, col0})},
                                        {"end", IntArray({row0 + (oh - 1) * strides[0] + 1,
                                                          col0 + (ow - 1) * strides[1] + 1})},
                                        {"strides", IntArray({strides[0], strides[1]})},
                                        {"axes", IntArray({2, 3})}})));
      // This tap's position in the image for every output element, (1, 1, OH, OW); a padded
      // position (never chosen) is clamped to stay a valid index.
      std::vector<int64_t> positions;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          int64_t r = std::clamp<int64_t>(i * strides[0] + row0 - pads[0], 0, h - 1);
          int64_t col = std::clamp<int64_t>(j * strides[1] + col0 - pads[1], 0, w - 1);
          positions.push_back(storage_order != 0 ? col * h + r : r * w + col);
        }
      }
      Expr index = ctx.Constant(Int64Tensor({1, 1, oh, ow}, positions));
      KILN_ASSIGN_OR_RETURN(Expr is_max, ctx.Call("equal", {tap, pooled}));
      KILN_ASSIGN_OR_RETURN(Expr candidate, ctx.Call("where", {is_max, index, none}));
      if (best_index.defined()) {
        KILN_ASSIGN_OR_RETURN(best_index, ctx.Call("minimum", {best_index, candidate}));
      } else {
        best_index = candidate;
      }
    }
  }
  // A window of NaNs matches no tap: its index is clamped to the image's last element.
  KILN_ASSIGN_OR_RETURN(best_index, ctx.Call("minimum", {best_index, ctx.Constant(ScalarTensor(
                                                                         DataType::kInt64,
                                                                         static_cast<double>(h * w - 1)))}));
  return ctx.Call("add", {best_index, base});
}

}  // namespace kiln::onnx_frontend
