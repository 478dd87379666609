// DFT, STFT, MelWeightMatrix and the window functions (Hann, Hamming, Blackman). DFT and STFT are graph ops: a discrete Fourier transform along
// one axis is two matrix products with constant cosine and sine tables (n input samples x K
// output bins), so it runs as nn.matmul through the same schedules as any matmul. Complex values are ONNX's: a last axis of
// 2 (real, imaginary), or 1 for real input. STFT gathers its frames with `take` of a constant
// position table, applies the window (a run-time input or none) and transforms each frame.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <numeric>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The longest transform taken: its two tables are n x K floats each.
constexpr int64_t kMaxDftLength = 1 << 14;

// A float32 constant of `rows` x `columns` values `f(row, column)`.
template <typename F>
Expr Table(ConvertContext& ctx, int64_t rows, int64_t columns, F f) {
  std::vector<float> values;
  values.reserve(static_cast<size_t>(rows * columns));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) values.push_back(static_cast<float>(f(r, c)));
  }
  return ctx.Constant(Float32Tensor({rows, columns}, values));
}

// The transform of the last axis of `re` (and `im`, null for real input), `n` samples each, as
// a length-`length` DFT (the samples past `length` dropped, missing ones zero), keeping the
// first length / 2 + 1 bins when `onesided`. Returns [..., K, 2].
absl::StatusOr<Expr> TransformLastAxis(ConvertContext& ctx, Expr re, Expr im, int64_t n,
                                       int64_t length, bool inverse, bool onesided) {
  if (length < 1 || length > kMaxDftLength || n > kMaxDftLength) {
    return ctx.Error(absl::StrCat("DFT length ", length, " over ", n,
                                  " samples: each must lie in [1, ", kMaxDftLength, "]"));
  }
  const int64_t bins = onesided ? length / 2 + 1 : length;
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(2 * n * bins * int64_t{sizeof(float)}, "the DFT tables"));
  // exp(-+2 pi i k r / length), the angle reduced mod length in integers first so that large
  // products keep their precision.
  auto angle = [&](int64_t r, int64_t k) {
    return 2 * std::numbers::pi * static_cast<double>((r * k) % length) / static_cast<double>(length);
  };
  Expr cos_table = Table(ctx, n, bins, [&](int64_t r, int64_t k) {
    return r < length ? std::cos(angle(r, k)) : 0.0;
  });
  Expr sin_table = Table(ctx, n, bins, [&](int64_t r, int64_t k) {
    return r < length ? std::sin(angle(r, k)) : 0.0;
  });
  // Forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin) / length.
  KILN_ASSIGN_OR_RETURN(Expr out_re, ctx.Call("nn.matmul", {re, cos_table}));
  KILN_ASSIGN_OR_RETURN(Expr out_im, ctx.Call("nn.matmul", {re, sin_table}));
  if (!inverse) {
    KILN_ASSIGN_OR_RETURN(out_im, ctx.Call("negative", {out_im}));
  }
  if (im.defined()) {
    KILN_ASSIGN_OR_RETURN(Expr im_cos, ctx.Call("nn.matmul", {im, cos_table}));
    KILN_ASSIGN_OR_RETURN(Expr im_sin, ctx.Call("nn.matmul", {im, sin_table}));
    KILN_ASSIGN_OR_RETURN(out_re, ctx.Call(inverse ? "subtract" : "add", {out_re, im_sin}));
    KILN_ASSIGN_OR_RETURN(out_im, ctx.Call("add", {out_im, im_cos}));
  }
  if (inverse) {
    Expr scale = ctx.Constant(ScalarTensor(DataType::kFloat32, 1.0 / static_cast<double>(length)));
    KILN_ASSIGN_OR_RETURN(out_re, ctx.Call("multiply", {out_re, scale}));
    KILN_ASSIGN_OR_RETURN(out_im, ctx.Call("multiply", {out_im, scale}));
  }
  std::vector<Expr> parts;
  for (const Expr& part : {out_re, out_im}) {
    KILN_ASSIGN_OR_RETURN(Expr e, ctx.Call("expand_dims", {part}, MakeAttrs({{"axis", int64_t{-1}},
                                                                             {"num_newaxis", int64_t{1}}})));
    parts.push_back(e);
  }
  return ctx.Call("concatenate", std::move(parts), MakeAttrs({{"axis", int64_t{-1}}}));
}

// The real and imaginary parts of complex `x` ([..., 1] or [..., 2], rank `rank`), each without
// the last axis; the imaginary part null for real input.
absl::StatusOr<std::pair<Expr, Expr>> SplitComplex(ConvertContext& ctx, const Expr& x,
                                                   int64_t rank, int64_t parts) {
  std::vector<Expr> out;
  for (int64_t p = 0; p < parts; ++p) {
    KILN_ASSIGN_OR_RETURN(
        Expr s, ctx.Call("strided_slice", {x},
                         MakeAttrs({{"begin", IntArray({p})}, {"end", IntArray({p + 1})},
                                    {"strides", IntArray({1})}, {"axes", IntArray({rank - 1})}})));
    KILN_ASSIGN_OR_RETURN(s, ctx.Call("squeeze", {s}, MakeAttrs({{"axis", IntArray({rank - 1})}})));
    out.push_back(s);
  }
  return std::pair<Expr, Expr>{out[0], parts == 2 ? out[1] : Expr()};
}

// The static shape of input `i`, float32, with a last axis of 1 or 2 (real or complex).
absl::StatusOr<std::vector<int64_t>> ComplexShape(ConvertContext& ctx, size_t i, int64_t min_rank) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  std::vector<int64_t> shape;
  for (const Dim& d : type->shape) {
    if (!d.is_static()) return ctx.Error(absl::StrCat("input ", i, " must have a static shape"));
    shape.push_back(d.value);
  }
  if (type->dtype != DataType::kFloat32 || static_cast<int64_t>(shape.size()) < min_rank ||
      (shape.back() != 1 && shape.back() != 2)) {
    return ctx.Error(absl::StrCat("input ", i, " must be float32 of rank ", min_rank,
                                  " or more with a last axis of 1 (real) or 2 (complex)"));
  }
  return shape;
}

absl::StatusOr<std::vector<Expr>> ConvertDft(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ComplexShape(ctx, 0, 2));
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The axis is an attribute (default 1) before opset 20, then input 2 (default -2); a negative
  // axis counts from the end of all of input 0's axes.
  int64_t axis = 0;
  if (ctx.opset() < 20) {
    KILN_ASSIGN_OR_RETURN(axis, ctx.IntAttr("axis", 1));
  } else if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(axis, ConstantScalarInt(ctx, 2, "axis"));
  } else {
    axis = -2;
  }
  KILN_ASSIGN_OR_RETURN(int64_t inverse, ctx.IntAttr("inverse", 0));
  KILN_ASSIGN_OR_RETURN(int64_t onesided, ctx.IntAttr("onesided", 0));
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) {
    return ctx.Error(absl::StrCat("attribute 'axis' must name a signal axis of input 0 (rank ",
                                  rank, ", the last axis holding real and imaginary parts)"));
  }
  if (onesided != 0 && shape.back() == 2) {
    return ctx.Error("onesided output needs real input (a last axis of 1)");
  }
  int64_t length = shape[axis];
  if (ctx.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(length, ConstantScalarInt(ctx, 1, "dft_length"));
  }
  // The signal axis moved last, transformed, and its bins moved back to `axis`.
  std::vector<int64_t> to_last, from_last;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d != axis) to_last.push_back(d);
  }
  to_last.push_back(axis);
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d < axis) from_last.push_back(d);
    else if (d == axis) from_last.push_back(rank - 2);
    else from_last.push_back(d - 1);
  }
  from_last.push_back(rank - 1);
  KILN_ASSIGN_OR_RETURN(auto parts, SplitComplex(ctx, x, rank, shape.back()));
  auto move_last = [&](const Expr& e) {
    return ctx.Call("transpose", {e}, MakeAttrs({{"axes", IntArray(to_last)}}));
  };
  KILN_ASSIGN_OR_RETURN(Expr re, move_last(parts.first));
  Expr im;
  if (parts.second.defined()) {
    KILN_ASSIGN_OR_RETURN(im, move_last(parts.second));
  }
  KILN_ASSIGN_OR_RETURN(Expr y, TransformLastAxis(ctx, re, im, shape[axis], length, inverse != 0,
                                                  onesided != 0));
  KILN_ASSIGN_OR_RETURN(y, ctx.Call("transpose", {y}, MakeAttrs({{"axes", IntArray(from_last)}})));
  return std::vector<Expr>{y};
}

// STFT(signal [batch, length, 1|2], frame_step, window?, frame_length?): frames of
// frame_length samples every frame_step, times the window, each transformed (onesided by
// default): [batch, frames, bins, 2].
absl::StatusOr<std::vector<Expr>> ConvertStft(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr signal, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ComplexShape(ctx, 0, 3));
  if (shape.size() != 3) return ctx.Error("input 0 (signal) must be [batch, length, 1 or 2]");
  KILN_ASSIGN_OR_RETURN(int64_t onesided, ctx.IntAttr("onesided", 1));
  if (onesided != 0 && shape[2] == 2) {
    return ctx.Error("onesided output needs a real signal (a last axis of 1)");
  }
  // A frame step only a run knows: the frame count the model declares (output axis 1), the
  // frames' positions computed at run time and checked to give that count.
  int64_t step = 1;
  Expr runtime_step;
  int64_t declared_frames = -1;
  if (KnownOnlyAtRunTime(ctx, 1)) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "frame_step"));
    if (declared.size() != 4 || declared[1] < 1) {
      return ctx.Error(absl::StrCat("the declared output ", DimsString(declared),
                                    " must be [batch, frames, bins, 2] with at least one frame"));
    }
    declared_frames = declared[1];
    KILN_ASSIGN_OR_RETURN(Expr given, ctx.Input(1));
    KILN_ASSIGN_OR_RETURN(runtime_step, OneElementAsScalar(ctx, given, DataType::kInt64, "frame_step"));
  } else {
    KILN_ASSIGN_OR_RETURN(step, ConstantScalarInt(ctx, 1, "frame_step"));
  }
  int64_t frame_length = -1;
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* window_type, ctx.InputTensorType(2));
    if (window_type->shape.size() != 1 || !window_type->shape[0].is_static()) {
      return ctx.Error("input 2 (window) must be 1-D with a static extent");
    }
    frame_length = window_type->shape[0].value;
  }
  if (ctx.HasInput(3)) {
    KILN_ASSIGN_OR_RETURN(int64_t given, ConstantScalarInt(ctx, 3, "frame_length"));
    if (frame_length >= 0 && given != frame_length) {
      return ctx.Error(absl::StrCat("input 3 (frame_length) is ", given, " but the window has ",
                                    frame_length, " values"));
    }
    frame_length = given;
  }
  if (frame_length < 1 || frame_length > std::min(shape[1], kMaxDftLength) || step < 1) {
    return ctx.Error(absl::StrCat("frame_length ", frame_length, " and frame_step ", step,
                                  " must be positive, the frame within the signal's ", shape[1],
                                  " samples (and at most ", kMaxDftLength, ")"));
  }
  const int64_t frames = runtime_step ? declared_frames : 1 + (shape[1] - frame_length) / step;
  if (frames > ctx.options().max_tensor_elements / frame_length) {
    return ctx.Error(absl::StrCat(frames, " frames of ", frame_length,
                                  " samples exceed the element limit"));
  }
  KILN_RETURN_IF_ERROR(
      ctx.ChargeBytes(frames * frame_length * int64_t{sizeof(int64_t)}, "the STFT frame table"));
  Expr positions;
  if (runtime_step) {
    // frame f, sample j at f * step + j; the run fails unless step >= 1 and the signal holds
    // exactly the declared frames (1 + (length - frame_length) / step).
    std::vector<int64_t> starts(static_cast<size_t>(frames)), offsets(static_cast<size_t>(frame_length));
    std::iota(starts.begin(), starts.end(), 0);
    std::iota(offsets.begin(), offsets.end(), 0);
    KILN_ASSIGN_OR_RETURN(Expr first, ctx.Call("multiply", {ctx.Constant(Int64Tensor({frames, 1}, starts)), runtime_step}));
    KILN_ASSIGN_OR_RETURN(positions, ctx.Call("add", {first, ctx.Constant(Int64Tensor({1, frame_length}, offsets))}));
    auto int64 = [&](int64_t v) { return ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(v))); };
    KILN_ASSIGN_OR_RETURN(Expr positive, ctx.Call("greater_equal", {runtime_step, int64(1)}));
    KILN_ASSIGN_OR_RETURN(Expr spans, ctx.Call("divide", {int64(shape[1] - frame_length), runtime_step}));
    KILN_ASSIGN_OR_RETURN(Expr fits, ctx.Call("equal", {spans, int64(frames - 1)}));
    KILN_ASSIGN_OR_RETURN(Expr ok, ctx.Call("logical_and", {positive, fits}));
    KILN_ASSIGN_OR_RETURN(positions, GuardCondition(ctx, positions, ok,
                                                    absl::StrCat("input 1 (frame_step) must be at least 1 and give the ",
                                                                 frames, " frames the model declares")));
  } else {
    std::vector<int64_t> frame_positions;
    frame_positions.reserve(static_cast<size_t>(frames * frame_length));
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frame_length; ++j) frame_positions.push_back(f * step + j);
    }
    positions = ctx.Constant(Int64Tensor({frames, frame_length}, frame_positions));
  }
  KILN_ASSIGN_OR_RETURN(auto parts, SplitComplex(ctx, signal, 3, shape[2]));
  Expr window;
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(window, ctx.Input(2));
  }
  auto frame = [&](const Expr& e) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr framed,
                          ctx.Call("take", {e, positions}, MakeAttrs({{"axis", int64_t{1}}})));
    if (!window.defined()) return framed;
    return ctx.Call("multiply", {framed, window});
  };
  KILN_ASSIGN_OR_RETURN(Expr re, frame(parts.first));
  Expr im;
  if (parts.second.defined()) {
    KILN_ASSIGN_OR_RETURN(im, frame(parts.second));
  }
  KILN_ASSIGN_OR_RETURN(Expr y, TransformLastAxis(ctx, re, im, frame_length, frame_length,
                                                  /*inverse=*/false, onesided != 0));
  return std::vector<Expr>{y};
}

// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
// [dft_length / 2 + 1, num_mel_bins] triangular filters, computed at import from the five
// scalars (constants: the output's shape depends on them), in the ONNX reference's arithmetic:
// the mel edges in float32, the bin frequencies in double, each floored to a spectrogram bin.
absl::StatusOr<std::vector<Expr>> ConvertMelWeightMatrix(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t mel_bins, ConstantScalarInt(ctx, 0, "num_mel_bins"));
  KILN_ASSIGN_OR_RETURN(int64_t dft_length, ConstantScalarInt(ctx, 1, "dft_length"));
  KILN_ASSIGN_OR_RETURN(int64_t sample_rate, ConstantScalarInt(ctx, 2, "sample_rate"));
  float edges[2];
  for (size_t i : {size_t{3}, size_t{4}}) {
    TensorData data = ctx.ConstantInput(i);
    std::optional<double> value = data ? ScalarValue(data) : std::nullopt;
    if (!value) {
      return ctx.Error(absl::StrCat("input ", i, " (", i == 3 ? "lower" : "upper",
                                    "_edge_hertz) must be a constant scalar"));
    }
    edges[i - 3] = static_cast<float>(*value);
  }
  KILN_ASSIGN_OR_RETURN(int64_t output_datatype, ctx.IntAttr("output_datatype", 1));
  KILN_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromOnnx(static_cast<int32_t>(output_datatype)));
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1 || mel_bins > kMaxDftLength ||
      dft_length > 2 * kMaxDftLength || !(edges[0] >= 0 && edges[0] <= edges[1]) ||
      !std::isfinite(edges[1])) {
    return ctx.Error(absl::StrCat(
        "expected num_mel_bins in [1, ", kMaxDftLength, "], dft_length in [1, ", 2 * kMaxDftLength,
        "], a positive sample_rate and 0 <= lower_edge_hertz <= upper_edge_hertz, finite"));
  }
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(spectrogram_bins * mel_bins * int64_t{sizeof(double)},
                                       "the mel weight matrix"));
  auto to_mel = [](float hertz) { return 2595.0f * std::log10(1.0f + hertz / 700.0f); };
  const float low_mel = to_mel(edges[0]);
  const float mel_step = (to_mel(edges[1]) - low_mel) / static_cast<float>(mel_bins + 2);
  std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
  for (int64_t k = 0; k < mel_bins + 2; ++k) {
    double mel = static_cast<double>(k) * mel_step + low_mel;
    double hertz = 700 * (std::pow(10.0, mel / 2595) - 1);
    double position = std::floor(static_cast<double>(dft_length + 1) * hertz /
                                 static_cast<double>(sample_rate));
    if (!(std::fabs(position) < 1e15)) {  // the set() below reports it as outside the spectrogram
      position = static_cast<double>(spectrogram_bins);
    }
    bin[k] = static_cast<int64_t>(position);
  }
  std::vector<double> weights(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) -> absl::Status {
    if (j < 0 || j >= spectrogram_bins) {
      return ctx.Error(absl::StrCat("mel bin ", i, " reaches spectrogram bin ", j, ", outside [0, ",
                                    spectrogram_bins, "): the upper edge is above what dft_length ",
                                    "and sample_rate resolve"));
    }
    weights[static_cast<size_t>(j * mel_bins + i)] = v;
    return absl::OkStatus();
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t low = bin[i], center = bin[i + 1], high = bin[i + 2];
    if (center == low) {
      KILN_RETURN_IF_ERROR(set(center, i, 1));
    } else {
      for (int64_t j = low; j <= center; ++j) {
        KILN_RETURN_IF_ERROR(set(j, i, static_cast<double>(j - low) / static_cast<double>(center - low)));
      }
    }
    for (int64_t j = center; j < high; ++j) {
      KILN_RETURN_IF_ERROR(set(j, i, static_cast<double>(high - j) / static_cast<double>(high - center)));
    }
  }
  std::string bytes(weights.size() * sizeof(double), '\0');
  std::memcpy(bytes.data(), weights.data(), bytes.size());
  Expr matrix = ctx.Constant(
      MakeTensorData(DataType::kFloat64, {spectrogram_bins, mel_bins}, std::move(bytes)));
  if (dtype == DataType::kFloat64) return std::vector<Expr>{matrix};
  KILN_ASSIGN_OR_RETURN(Expr cast, ctx.Call("cast", {matrix}, MakeAttrs({{"dtype", dtype}})));
  return std::vector<Expr>{cast};
}

// HannWindow, HammingWindow and BlackmanWindow: a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M) for
// n < size, M = size (periodic) or size - 1 (symmetric), a constant computed at import. A size
// known only at run time is the length the output is declared with, checked when the model
// runs. (Without a converter these came from their ONNX function bodies, whose Range needs the
// size at import.)
template <int kWindow>  // 0 Hann, 1 Hamming, 2 Blackman
absl::StatusOr<std::vector<Expr>> ConvertWindow(ConvertContext& ctx) {
  constexpr double kA0[] = {0.5, 25.0 / 46.0, 0.42};
  constexpr double kA2[] = {0.0, 0.0, 0.08};
  const double a0 = kA0[kWindow], a1 = 1.0 - a0 - kA2[kWindow], a2 = kA2[kWindow];
  int64_t size = 0;
  std::optional<OperandRule> runtime_size;
  if (KnownOnlyAtRunTime(ctx, 0)) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 0, "size"));
    if (declared.size() != 1) {
      return ctx.Error(absl::StrCat("the output is declared ", DimsString(declared),
                                    "; a window is 1-D"));
    }
    size = declared[0];
    runtime_size.emplace();
    runtime_size->allowed = {{size}};
  } else {
    KILN_ASSIGN_OR_RETURN(size, ConstantScalarInt(ctx, 0, "size"));
  }
  if (size < 0 || size > ctx.options().max_tensor_elements) {
    return ctx.Error(absl::StrCat("size ", size, " is outside [0, ",
                                  ctx.options().max_tensor_elements, "]"));
  }
  KILN_ASSIGN_OR_RETURN(int64_t periodic, ctx.IntAttr("periodic", 1));
  KILN_ASSIGN_OR_RETURN(int64_t output_datatype, ctx.IntAttr("output_datatype", 1));
  KILN_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromOnnx(static_cast<int32_t>(output_datatype)));
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(size * int64_t{sizeof(double)}, "the window"));
  // As the function bodies compute it: n / M with M = 0 for a symmetric window of one sample
  // (0 / 0, NaN).
  const double m = static_cast<double>(periodic != 0 ? size : size - 1);
  std::vector<double> window(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    const double phase = 2 * std::numbers::pi * static_cast<double>(n) / m;
    window[static_cast<size_t>(n)] = a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase);
  }
  std::string bytes(window.size() * sizeof(double), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), window.data(), bytes.size());
  Expr out = ctx.Constant(MakeTensorData(DataType::kFloat64, {size}, std::move(bytes)));
  if (dtype != DataType::kFloat64) {
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("cast", {out}, MakeAttrs({{"dtype", dtype}})));
  }
  if (runtime_size) {
    KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 0, *runtime_size,
                                            absl::StrCat("be the size ", size)));
  }
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterSpectralConverters(ConverterTable& table) {
  table.Add("BlackmanWindow", ConvertWindow<2>);
  table.Add("DFT", ConvertDft);
  table.Add("HammingWindow", ConvertWindow<1>);
  table.Add("HannWindow", ConvertWindow<0>);
  table.Add("MelWeightMatrix", ConvertMelWeightMatrix);
  table.Add("STFT", ConvertStft);
}

}  // namespace kiln::onnx_frontend
