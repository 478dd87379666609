// GridSample (opset 16, 4-D input) as graph ops. Each output pixel's grid point is denormalized
// to input coordinates (align_corners: [-1, 1] -> [0, size - 1], else [-0.5, size - 0.5]); the
// mode picks the taps around it (nearest: the point rounded half to even; bilinear: the 2 x 2
// around it, weights the distances; bicubic: the 4 x 4, Keys' cubic convolution with
// A = -0.75), and the padding mode says what a tap outside the input reads: zeros: 0; border:
// the nearest edge pixel; reflection: the pixel the coordinate reflects to off the borders.
// Every tap is one gather (`take`) of all channels from the input laid out (N x H x W, C).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

enum class Mode { kNearest, kBilinear, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

class Sampler {
 public:
  Sampler(ConvertContext& ctx, DataType dtype, int64_t n, int64_t h, int64_t w, int64_t ho,
          int64_t wo, Padding padding, bool align_corners)
      : ctx_(ctx), dtype_(dtype), n_(n), h_(h), w_(w), ho_(ho), wo_(wo), padding_(padding),
        align_corners_(align_corners) {}

  Expr Scalar(double v) { return ctx_.Constant(ScalarTensor(dtype_, v)); }
  absl::StatusOr<Expr> Op(const char* op, std::vector<Expr> args) { return ctx_.Call(op, std::move(args)); }

  // A normalized grid coordinate as an input coordinate along an axis of `size` pixels.
  absl::StatusOr<Expr> Denormalize(const Expr& g, int64_t size) {
    KILN_ASSIGN_OR_RETURN(Expr plus_one, Op("add", {g, Scalar(1)}));
    if (align_corners_) {  // (g + 1) / 2 * (size - 1)
      return Op("multiply", {plus_one, Scalar(static_cast<double>(size - 1) / 2)});
    }
    // ((g + 1) * size - 1) / 2
    KILN_ASSIGN_OR_RETURN(Expr scaled, Op("multiply", {plus_one, Scalar(static_cast<double>(size))}));
    KILN_ASSIGN_OR_RETURN(Expr shifted, Op("subtract", {scaled, Scalar(1)}));
    return Op("multiply", {shifted, Scalar(0.5)});
  }

  // The weighted sum of the taps' pixels: (N, Ho, Wo, C).
  struct Tap {
    Expr x, y;       // integral-valued coordinates, (N, Ho, Wo)
    Expr weight;     // (N, Ho, Wo), or undefined for 1
  };
  absl::StatusOr<Expr> Sample(const Expr& pixels, const std::vector<Tap>& taps) {
    Expr sum;
    for (const Tap& tap : taps) {
      KILN_ASSIGN_OR_RETURN(Expr value, Read(pixels, tap.x, tap.y));
      if (tap.weight.defined()) {
        KILN_ASSIGN_OR_RETURN(Expr weight, Column(tap.weight));
        KILN_ASSIGN_OR_RETURN(value, Op("multiply", {value, weight}));
      }
      if (sum.defined()) {
        KILN_ASSIGN_OR_RETURN(sum, Op("add", {sum, value}));
      } else {
        sum = value;
      }
    }
    return sum;
  }

 private:
  // (N, Ho, Wo) -> (N, Ho, Wo, 1), to scale every channel.
  absl::StatusOr<Expr> Column(const Expr& e) {
    return ctx_.Call("expand_dims", {e}, MakeAttrs({{"axis", int64_t{3}}, {"num_newaxis", int64_t{1}}}));
  }

  // A coordinate reflected off [lo, hi] until inside (what the reflection padding reads).
  absl::StatusOr<Expr> Reflect(const Expr& x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return Scalar(lo);
    // Below lo: d = lo - x, n = floor(d / range), r = d - n range; x = n even ? lo + r : hi - r.
    // Above hi: d = x - hi, likewise, x = n even ? hi - r : lo + r.
    auto fold = [&](const Expr& d, double near, double far, double sign) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr turns, Op("divide", {d, Scalar(range)}));
      KILN_ASSIGN_OR_RETURN(turns, Op("floor", {turns}));
      KILN_ASSIGN_OR_RETURN(Expr whole, Op("multiply", {turns, Scalar(range)}));
      KILN_ASSIGN_OR_RETURN(Expr r, Op("subtract", {d, whole}));
      KILN_ASSIGN_OR_RETURN(Expr parity, Op("floor_mod", {turns, Scalar(2)}));
      KILN_ASSIGN_OR_RETURN(Expr even, Op("equal", {parity, Scalar(0)}));
      KILN_ASSIGN_OR_RETURN(Expr signed_r, Op("multiply", {r, Scalar(sign)}));
      KILN_ASSIGN_OR_RETURN(Expr from_near, Op("add", {signed_r, Scalar(near)}));
      KILN_ASSIGN_OR_RETURN(Expr negated_r, Op("multiply", {r, Scalar(-sign)}));
      KILN_ASSIGN_OR_RETURN(Expr from_far, Op("add", {negated_r, Scalar(far)}));
      return ctx_.Call("where", {even, from_near, from_far});
    };
    KILN_ASSIGN_OR_RETURN(Expr below_d, Op("subtract", {Scalar(lo), x}));
    KILN_ASSIGN_OR_RETURN(Expr below, fold(below_d, lo, hi, 1));
    KILN_ASSIGN_OR_RETURN(Expr above_d, Op("subtract", {x, Scalar(hi)}));
    KILN_ASSIGN_OR_RETURN(Expr above, fold(above_d, hi, lo, -1));
    KILN_ASSIGN_OR_RETURN(Expr is_below, Op("less", {x, Scalar(lo)}));
    KILN_ASSIGN_OR_RETURN(Expr is_above, Op("greater", {x, Scalar(hi)}));
    KILN_ASSIGN_OR_RETURN(Expr upper, ctx_.Call("where", {is_above, above, x}));
    return ctx_.Call("where", {is_below, below, upper});
  }

  // An integral coordinate along an axis of `size` pixels as the index the padding mode reads
  // (int64, inside [0, size)), and for zeros padding whether it was inside at all.
  absl::StatusOr<std::pair<Expr, Expr>> Index(const Expr& c, int64_t size) {
    Expr inside, at = c;
    if (padding_ == Padding::kZeros) {
      KILN_ASSIGN_OR_RETURN(Expr low, Op("greater_equal", {c, Scalar(0)}));
      KILN_ASSIGN_OR_RETURN(Expr high, Op("less", {c, Scalar(static_cast<double>(size))}));
      KILN_ASSIGN_OR_RETURN(inside, Op("logical_and", {low, high}));
    } else if (padding_ == Padding::kReflection) {
      double lo = align_corners_ ? 0 : -0.5, hi = align_corners_ ? size - 1.0 : size - 0.5;
      KILN_ASSIGN_OR_RETURN(at, Reflect(c, lo, hi));
    }
    // Clamped into the input (a NaN coordinate reads pixel 0), then truncated to an integer
    // as a C cast does: the cast never sees a value outside the input, so a hostile grid cannot
    // make the gather read outside it.
    KILN_ASSIGN_OR_RETURN(Expr is_number, Op("equal", {at, at}));
    KILN_ASSIGN_OR_RETURN(at, ctx_.Call("where", {is_number, at, Scalar(0)}));
    KILN_ASSIGN_OR_RETURN(at, ctx_.Call("clip", {at}, MakeAttrs({{"a_min", 0.0},
                                                                  {"a_max", static_cast<double>(size - 1)}})));
    KILN_ASSIGN_OR_RETURN(Expr index, ctx_.Call("cast", {at}, MakeAttrs({{"dtype", DataType::kInt64}})));
    return std::make_pair(index, inside);
  }

  // The pixels (N x H x W, C) at (x, y) of each output point: (N, Ho, Wo, C).
  absl::StatusOr<Expr> Read(const Expr& pixels, const Expr& x, const Expr& y) {
    KILN_ASSIGN_OR_RETURN(auto ix, Index(x, w_));
    KILN_ASSIGN_OR_RETURN(auto iy, Index(y, h_));
    // n H W + y W + x, n H W from a constant (N, 1, 1) column.
    if (!image_base_.defined()) {
      KILN_RETURN_IF_ERROR(ctx_.ChargeBytes(n_ * int64_t{sizeof(int64_t)}, "the image offsets"));
      std::vector<int64_t> base;
      for (int64_t i = 0; i < n_; ++i) base.push_back(i * h_ * w_);
      std::string bytes(reinterpret_cast<const char*>(base.data()), base.size() * sizeof(int64_t));
      image_base_ = ctx_.Constant(MakeTensorData(DataType::kInt64, {n_, 1, 1}, std::move(bytes)));
    }
    const Expr& image_base = image_base_;
    KILN_ASSIGN_OR_RETURN(Expr row, Op("multiply", {iy.first, ctx_.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(w_)))}));
    KILN_ASSIGN_OR_RETURN(Expr offset, Op("add", {row, ix.first}));
    KILN_ASSIGN_OR_RETURN(offset, Op("add", {offset, image_base}));
    KILN_ASSIGN_OR_RETURN(Expr value, ctx_.Call("take", {pixels, offset}, MakeAttrs({{"axis", int64_t{0}}})));
    if (padding_ != Padding::kZeros) return value;
    KILN_ASSIGN_OR_RETURN(Expr inside, Op("logical_and", {ix.second, iy.second}));
    KILN_ASSIGN_OR_RETURN(inside, Column(inside));
    return ctx_.Call("where", {inside, value, Scalar(0)});
  }

  ConvertContext& ctx_;
  DataType dtype_;
  int64_t n_, h_, w_, ho_, wo_;
  Padding padding_;
  bool align_corners_;
  Expr image_base_;
};

// Keys' cubic convolution weights of the 4 taps at floor(x) - 1 .. floor(x) + 2, for t the
// fraction x - floor(x): (A = -0.75)
//   w0 = ((A (t+1) - 5A)(t+1) + 8A)(t+1) - 4A, w1 = ((A+2) t - (A+3)) t^2 + 1,
//   w2 = ((A+2)(1-t) - (A+3))(1-t)^2 + 1,      w3 = ((A (2-t) - 5A)(2-t) + 8A)(2-t) - 4A.
absl::StatusOr<std::vector<Expr>> CubicWeights(Sampler& s, const Expr& t) {
  constexpr double A = -0.75;
  auto outer = [&](double shift, double sign) -> absl::StatusOr<Expr> {  // u = shift + sign t
    KILN_ASSIGN_OR_RETURN(Expr st, s.Op("multiply", {t, s.Scalar(sign)}));
    KILN_ASSIGN_OR_RETURN(Expr u, s.Op("add", {st, s.Scalar(shift)}));
    KILN_ASSIGN_OR_RETURN(Expr p, s.Op("multiply", {u, s.Scalar(A)}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("add", {p, s.Scalar(-5 * A)}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("multiply", {p, u}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("add", {p, s.Scalar(8 * A)}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("multiply", {p, u}));
    return s.Op("add", {p, s.Scalar(-4 * A)});
  };
  auto inner = [&](double shift, double sign) -> absl::StatusOr<Expr> {  // u = shift + sign t
    KILN_ASSIGN_OR_RETURN(Expr st, s.Op("multiply", {t, s.Scalar(sign)}));
    KILN_ASSIGN_OR_RETURN(Expr u, s.Op("add", {st, s.Scalar(shift)}));
    KILN_ASSIGN_OR_RETURN(Expr p, s.Op("multiply", {u, s.Scalar(A + 2)}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("add", {p, s.Scalar(-(A + 3))}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("multiply", {p, u}));
    KILN_ASSIGN_OR_RETURN(p, s.Op("multiply", {p, u}));
    return s.Op("add", {p, s.Scalar(1)});
  };
  std::vector<Expr> w(4);
  KILN_ASSIGN_OR_RETURN(w[0], outer(1, 1));
  KILN_ASSIGN_OR_RETURN(w[1], inner(0, 1));
  KILN_ASSIGN_OR_RETURN(w[2], inner(1, -1));
  KILN_ASSIGN_OR_RETURN(w[3], outer(2, -1));
  return w;
}

absl::StatusOr<std::vector<Expr>> ConvertGridSample(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr grid, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tg, ctx.InputTensorType(1));
  if (!IsFloat(tx->dtype) || tg->dtype != tx->dtype) {
    return ctx.Error("X and grid must be float tensors of one dtype");
  }
  if (tx->shape.size() != 4 || tg->shape.size() != 4) {
    return ctx.Error("X must be 4-D (N, C, H, W) and grid 4-D (N, H_out, W_out, 2)");
  }
  std::vector<int64_t> xs, gs;
  for (const auto& d : tx->shape) xs.push_back(d.is_static() ? d.value : -1);
  for (const auto& d : tg->shape) gs.push_back(d.is_static() ? d.value : -1);
  if (std::find(xs.begin(), xs.end(), -1) != xs.end() ||
      std::find(gs.begin(), gs.end(), -1) != gs.end()) {
    return ctx.Error("X and grid must have static shapes");
  }
  if (gs[0] != xs[0] || gs[3] != 2) {
    return ctx.Error(absl::StrCat("grid has shape (", gs[0], ", ", gs[1], ", ", gs[2], ", ", gs[3],
                                  "), expected (", xs[0], ", H_out, W_out, 2)"));
  }
  KILN_ASSIGN_OR_RETURN(std::string mode_name, ctx.StringAttr("mode", "bilinear"));
  KILN_ASSIGN_OR_RETURN(std::string padding_name, ctx.StringAttr("padding_mode", "zeros"));
  KILN_ASSIGN_OR_RETURN(int64_t align_corners, ctx.IntAttr("align_corners", 0));
  Mode mode;
  if (mode_name == "nearest") {
    mode = Mode::kNearest;
  } else if (mode_name == "bilinear" || mode_name == "linear") {
    mode = Mode::kBilinear;
  } else if (mode_name == "bicubic" || mode_name == "cubic") {
    mode = Mode::kBicubic;
  } else {
    return ctx.Error(absl::StrCat("attribute 'mode' is '", mode_name,
                                  "', expected nearest, bilinear or bicubic"));
  }
  Padding padding;
  if (padding_name == "zeros") {
    padding = Padding::kZeros;
  } else if (padding_name == "border") {
    padding = Padding::kBorder;
  } else if (padding_name == "reflection") {
    padding = Padding::kReflection;
  } else {
    return ctx.Error(absl::StrCat("attribute 'padding_mode' is '", padding_name,
                                  "', expected zeros, border or reflection"));
  }
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], ho = gs[1], wo = gs[2];
  Sampler s(ctx, tx->dtype, n, h, w, ho, wo, padding, align_corners != 0);

  // The input as rows of channels: (N x H x W, C).
  KILN_ASSIGN_OR_RETURN(Expr pixels, ctx.Call("transpose", {x}, MakeAttrs({{"axes", IntArray({0, 2, 3, 1})}})));
  KILN_ASSIGN_OR_RETURN(pixels, ctx.Call("reshape", {pixels}, MakeAttrs({{"newshape", IntArray({n * h * w, c})}})));
  // The grid's x (along W) and y (along H) coordinates, (N, Ho, Wo) each.
  auto coordinate = [&](int64_t k, int64_t size) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr g, ctx.Call("strided_slice", {grid},
                                           MakeAttrs({{"begin", IntArray({k})}, {"end", IntArray({k + 1})},
                                                      {"strides", IntArray({1})}, {"axes", IntArray({3})}})));
    KILN_ASSIGN_OR_RETURN(g, ctx.Call("squeeze", {g}, MakeAttrs({{"axis", IntArray({3})}})));
    return s.Denormalize(g, size);
  };
  KILN_ASSIGN_OR_RETURN(Expr gx, coordinate(0, w));
  KILN_ASSIGN_OR_RETURN(Expr gy, coordinate(1, h));

  std::vector<Sampler::Tap> taps;
  if (mode == Mode::kNearest) {
    KILN_ASSIGN_OR_RETURN(Expr rx, s.Op("round", {gx}));
    KILN_ASSIGN_OR_RETURN(Expr ry, s.Op("round", {gy}));
    taps.push_back({rx, ry, Expr()});
  } else {
    KILN_ASSIGN_OR_RETURN(Expr fx, s.Op("floor", {gx}));
    KILN_ASSIGN_OR_RETURN(Expr fy, s.Op("floor", {gy}));
    KILN_ASSIGN_OR_RETURN(Expr tx_frac, s.Op("subtract", {gx, fx}));
    KILN_ASSIGN_OR_RETURN(Expr ty_frac, s.Op("subtract", {gy, fy}));
    std::vector<Expr> wx, wy;
    int64_t first;
    if (mode == Mode::kBilinear) {
      first = 0;
      KILN_ASSIGN_OR_RETURN(Expr one_minus_x, s.Op("subtract", {s.Scalar(1), tx_frac}));
      KILN_ASSIGN_OR_RETURN(Expr one_minus_y, s.Op("subtract", {s.Scalar(1), ty_frac}));
      wx = {one_minus_x, tx_frac};
      wy = {one_minus_y, ty_frac};
    } else {
      first = -1;
      KILN_ASSIGN_OR_RETURN(wx, CubicWeights(s, tx_frac));
      KILN_ASSIGN_OR_RETURN(wy, CubicWeights(s, ty_frac));
    }
    for (size_t j = 0; j < wy.size(); ++j) {
      KILN_ASSIGN_OR_RETURN(Expr y, s.Op("add", {fy, s.Scalar(static_cast<double>(first + static_cast<int64_t>(j)))}));
      for (size_t i = 0; i < wx.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(Expr xi, s.Op("add", {fx, s.Scalar(static_cast<double>(first + static_cast<int64_t>(i)))}));
        KILN_ASSIGN_OR_RETURN(Expr weight, s.Op("multiply", {wy[j], wx[i]}));
        taps.push_back({xi, y, weight});
      }
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr sampled, s.Sample(pixels, taps));  // (N, Ho, Wo, C)
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("transpose", {sampled}, MakeAttrs({{"axes", IntArray({0, 3, 1, 2})}})));
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterGridSampleConverter(ConverterTable& table) {
  table.Add("GridSample", ConvertGridSample);
}

}  // namespace kiln::onnx_frontend
