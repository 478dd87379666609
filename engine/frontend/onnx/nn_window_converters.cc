// Converters for ONNX's window and layout operators: Conv, ConvTranspose,
// MaxPool, AveragePool, the global pools, Pad, Resize, Upsample, DepthToSpace
// and SpaceToDepth. ONNX's auto_pad is resolved here into explicit padding
// (the graph ops only know explicit padding), which needs static spatial dims
// wherever the padding depends on them.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/max_pool_indices.h"
#include "engine/frontend/onnx/nn_converters.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

std::vector<Expr> One(Expr e) { return std::vector<Expr>{std::move(e)}; }

// Floor division (C++ truncates toward zero; padding splits need the floor).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The number of spatial dims of input 0, which must be N, C and 1 to 3 more.
absl::StatusOr<int> SpatialRank(const ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  int rank = static_cast<int>(tx->shape.size());
  if (rank < 3 || rank > 5) {
    return ctx.Error(absl::StrCat(ctx.node().op_type(), " on a ", rank,
                                  "-D input is not supported (expected 3-D to 5-D: N, C and 1 "
                                  "to 3 spatial dims), got ",
                                  ShapeToString(tx->shape)));
  }
  return rank - 2;
}

// An ints attribute of exactly `count` values (or `fallback` when absent);
// `spatial` is the input's number of spatial dims, for the message.
absl::StatusOr<std::vector<int64_t>> SpatialInts(const ConvertContext& ctx, const std::string& name,
                                                 size_t count, size_t spatial,
                                                 std::optional<std::vector<int64_t>> fallback) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, ctx.IntsAttr(name, std::move(fallback)));
  if (values.size() != count) {
    return ctx.Error(absl::StrCat("attribute '", name, "' has ", values.size(),
                                  name == "kernel_shape" ? " dims" : " values", ", expected ",
                                  count, " for a ", spatial + 2, "-D input"));
  }
  return values;
}

// What the graph ops take: explicit padding, all begins then all ends.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool kernel_from_attr = false;
};

// Reads kernel_shape (checked against the weight's kernel when there is one),
// strides, dilations and pads for an `n`-D window.
absl::StatusOr<WindowAttrs> ReadWindowAttrs(const ConvertContext& ctx, int n,
                                            const TensorTypeNode* weight) {
  WindowAttrs w;
  size_t sn = static_cast<size_t>(n);
  if (ctx.HasAttr("kernel_shape") || weight == nullptr) {
    KILN_ASSIGN_OR_RETURN(w.kernel, SpatialInts(ctx, "kernel_shape", sn, sn, std::nullopt));
    for (int64_t k : w.kernel) {
      if (k < 1) return ctx.Error("attribute 'kernel_shape' must hold positive values");
    }
    w.kernel_from_attr = true;
    for (int i = 0; weight != nullptr && i < n; ++i) {
      const Dim& k = weight->shape[2 + i];
      if (k.is_static() && k.value != w.kernel[i]) {
        std::vector<Dim> dims;
        for (int64_t v : w.kernel) dims.push_back(Dim::Static(v));
        return ctx.Error(absl::StrCat(
            "attribute 'kernel_shape' ", ShapeToString(dims), " does not match the kernel ",
            ShapeToString(std::vector<Dim>(weight->shape.begin() + 2, weight->shape.end())),
            " of input 1 (W)"));
      }
    }
  } else {
    for (int i = 0; i < n; ++i) {
      const Dim& k = weight->shape[2 + i];
      w.kernel.push_back(k.is_static() ? k.value : -1);
    }
  }
  KILN_ASSIGN_OR_RETURN(w.strides,
                        SpatialInts(ctx, "strides", sn, sn, std::vector<int64_t>(sn, 1)));
  KILN_ASSIGN_OR_RETURN(w.dilations,
                        SpatialInts(ctx, "dilations", sn, sn, std::vector<int64_t>(sn, 1)));
  KILN_ASSIGN_OR_RETURN(w.pads,
                        SpatialInts(ctx, "pads", 2 * sn, sn, std::vector<int64_t>(2 * sn, 0)));
  for (int64_t s : w.strides) {
    if (s < 1) return ctx.Error("attribute 'strides' must hold positive values");
  }
  for (int64_t d : w.dilations) {
    if (d < 1) return ctx.Error("attribute 'dilations' must hold positive values");
  }
  return w;
}

// Replaces w.pads according to auto_pad: SAME_UPPER / SAME_LOWER keep
// ceil(input / stride) outputs, with the odd element at the end / beginning.
absl::Status ResolveAutoPad(const ConvertContext& ctx, const TensorTypeNode* data, WindowAttrs& w) {
  KILN_ASSIGN_OR_RETURN(std::string auto_pad, ctx.StringAttr("auto_pad", "NOTSET"));
  size_t n = w.kernel.size();
  if (auto_pad == "NOTSET") return absl::OkStatus();
  if (auto_pad == "VALID") {
    w.pads.assign(2 * n, 0);
    return absl::OkStatus();
  }
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return ctx.Error(absl::StrCat("attribute 'auto_pad' is '", auto_pad,
                                  "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  }
  for (size_t i = 0; i < n; ++i) {
    const Dim& x = data->shape[2 + i];
    if (w.kernel[i] < 0) {
      return ctx.Error(absl::StrCat("auto_pad ", auto_pad, " needs a static kernel; spatial dim ",
                                    i, " of the weight is symbolic"));
    }
    int64_t effective = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total;
    if (w.strides[i] == 1) {
      total = effective - 1;  // independent of the input extent
    } else if (x.is_static()) {
      int64_t out = (x.value + w.strides[i] - 1) / w.strides[i];
      total = std::max<int64_t>((out - 1) * w.strides[i] + effective - x.value, 0);
    } else {
      return ctx.Error(absl::StrCat("auto_pad ", auto_pad, " with stride ", w.strides[i],
                                    " needs a static input extent, but spatial dim ", i, " of ",
                                    ShapeToString(data->shape),
                                    " is symbolic; give static shapes with an input shape "
                                    "override"));
    }
    int64_t small = total / 2;
    w.pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
    w.pads[i + n] = total - w.pads[i];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Expr>> AddBias(ConvertContext& ctx, Expr y) {
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr bias, ctx.Input(2));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("nn.bias_add", {y, bias}, MakeAttrs({{"axis", 1}})));
  }
  return One(y);
}

absl::StatusOr<std::vector<Expr>> ConvertConv(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr weight, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr y, ConvFromAttributes(ctx, x, weight));
  return AddBias(ctx, y);
}

}  // namespace

absl::StatusOr<Expr> ConvFromAttributes(ConvertContext& ctx, const Expr& x, const Expr& weight) {
  KILN_ASSIGN_OR_RETURN(int n, SpatialRank(ctx));
  const auto* tx = x->checked_type.as<TensorTypeNode>();
  const auto* tw = weight->checked_type.as<TensorTypeNode>();
  if (tx == nullptr || tw == nullptr) return ctx.Error("the input and the weight must be tensors");
  if (tw->shape.size() != tx->shape.size()) {
    return ctx.Error(absl::StrCat("input 1 (W) must have rank ", tx->shape.size(),
                                  " like the input, got ", ShapeToString(tw->shape)));
  }
  KILN_ASSIGN_OR_RETURN(WindowAttrs w, ReadWindowAttrs(ctx, n, tw));
  KILN_RETURN_IF_ERROR(ResolveAutoPad(ctx, tx, w));
  KILN_ASSIGN_OR_RETURN(int64_t group, ctx.IntAttr("group", 1));
  if (group < 1) return ctx.Error(absl::StrCat("attribute 'group' is ", group, ", expected >= 1"));
  KILN_ASSIGN_OR_RETURN(
      Expr y,
      ctx.Call(absl::StrCat("nn.conv", n, "d"), {x, weight},
               MakeAttrs({{"strides", IntArray(w.strides)},
                          {"padding", IntArray(w.pads)},
                          {"dilation", IntArray(w.dilations)},
                          {"groups", group},
                          {"kernel_size",
                           IntArray(w.kernel_from_attr ? w.kernel : std::vector<int64_t>{})}})));
  return y;
}

namespace {

// ConvTranspose. Padding comes from pads, from auto_pad (output = input *
// stride), or from output_shape; in the last two cases ONNX derives a total
// padding and splits it (SAME_UPPER: the smaller half first). A negative end
// padding (output_shape larger than the natural output) becomes output padding.
absl::StatusOr<std::vector<Expr>> ConvertConvTranspose(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int n, SpatialRank(ctx));
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr weight, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tw, ctx.InputTensorType(1));
  if (tw->shape.size() != tx->shape.size()) {
    return ctx.Error(absl::StrCat("input 1 (W) must have rank ", tx->shape.size(),
                                  " like the input, got ", ShapeToString(tw->shape)));
  }
  size_t sn = static_cast<size_t>(n);
  KILN_ASSIGN_OR_RETURN(WindowAttrs w, ReadWindowAttrs(ctx, n, tw));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                        SpatialInts(ctx, "output_padding", sn, sn, std::vector<int64_t>(sn, 0)));
  KILN_ASSIGN_OR_RETURN(int64_t group, ctx.IntAttr("group", 1));
  if (group < 1) return ctx.Error(absl::StrCat("attribute 'group' is ", group, ", expected >= 1"));
  KILN_ASSIGN_OR_RETURN(std::string auto_pad, ctx.StringAttr("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return ctx.Error(absl::StrCat("attribute 'auto_pad' is '", auto_pad,
                                  "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape,
                        ctx.IntsAttr("output_shape", std::vector<int64_t>{}));
  if (output_shape.size() == sn + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != sn) {
    return ctx.Error(absl::StrCat("attribute 'output_shape' has ", output_shape.size(),
                                  " values, expected ", n, " for a ", n + 2, "-D input"));
  }
  bool derive = !output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID" && output_shape.empty()) w.pads.assign(2 * sn, 0);
  for (size_t i = 0; derive && i < sn; ++i) {
    if (w.kernel[i] < 0) return ctx.Error("deriving the padding needs a static kernel");
    int64_t natural_without_input = output_padding[i] + (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total;
    if (!output_shape.empty()) {
      const Dim& in = tx->shape[2 + i];
      if (!in.is_static()) {
        return ctx.Error(absl::StrCat("attribute 'output_shape' needs static spatial dims, got ",
                                      ShapeToString(tx->shape)));
      }
      total = w.strides[i] * (in.value - 1) + natural_without_input - output_shape[i];
    } else {
      total = natural_without_input - w.strides[i];  // output = input * stride
    }
    int64_t half = FloorDiv(total, 2);
    int64_t begin = auto_pad == "SAME_UPPER" ? half : total - half;
    int64_t end = total - begin;
    if (begin < 0) {
      return ctx.Error(absl::StrCat("the requested output needs ", -begin,
                                    " extra leading elements in spatial dim ", i,
                                    ", which a transposed convolution cannot produce"));
    }
    if (end < 0) {
      output_padding[i] -= end;
      end = 0;
    }
    w.pads[i] = begin;
    w.pads[i + sn] = end;
  }
  KILN_ASSIGN_OR_RETURN(
      Expr y,
      ctx.Call(absl::StrCat("nn.conv", n, "d_transpose"), {x, weight},
               MakeAttrs({{"strides", IntArray(w.strides)},
                          {"padding", IntArray(w.pads)},
                          {"dilation", IntArray(w.dilations)},
                          {"groups", group},
                          {"kernel_size",
                           IntArray(w.kernel_from_attr ? w.kernel : std::vector<int64_t>{})},
                          {"output_padding", IntArray(output_padding)}})));
  return AddBias(ctx, y);
}

template <bool kIsMax>
absl::StatusOr<std::vector<Expr>> ConvertPool(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int n, SpatialRank(ctx));
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(WindowAttrs w, ReadWindowAttrs(ctx, n, nullptr));
  KILN_RETURN_IF_ERROR(ResolveAutoPad(ctx, tx, w));
  KILN_ASSIGN_OR_RETURN(int64_t ceil_mode, ctx.IntAttr("ceil_mode", 0));
  std::vector<AttrsNode::Field> attrs = {{"pool_size", IntArray(w.kernel)},
                                         {"strides", IntArray(w.strides)},
                                         {"dilation", IntArray(w.dilations)},
                                         {"padding", IntArray(w.pads)},
                                         {"ceil_mode", ceil_mode != 0}};
  if (!kIsMax) {
    KILN_ASSIGN_OR_RETURN(int64_t count_include_pad, ctx.IntAttr("count_include_pad", 0));
    attrs.emplace_back("count_include_pad", count_include_pad != 0);
  }
  KILN_ASSIGN_OR_RETURN(Expr y,
                        ctx.Call(absl::StrCat("nn.", kIsMax ? "max" : "avg", "_pool", n, "d"), {x},
                                 MakeAttrs(std::move(attrs))));
  if (kIsMax && ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) {
    KILN_ASSIGN_OR_RETURN(Expr indices,
                          MaxPoolIndices(ctx, x, w.kernel, w.strides, w.dilations, w.pads, y));
    return std::vector<Expr>{y, indices};
  }
  return One(y);
}

template <bool kIsMax>
absl::StatusOr<std::vector<Expr>> ConvertGlobalPool(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int n, SpatialRank(ctx));
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(
      Expr y, ctx.Call(absl::StrCat("nn.global_", kIsMax ? "max" : "avg", "_pool", n, "d"), {x}));
  return One(y);
}

// Pad: pads (and the constant value) are attributes before opset 11 and
// inputs from 11 on; pads list all begins, then all ends, as nn.pad does.
absl::StatusOr<std::vector<Expr>> ConvertPad(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(std::string mode, ctx.StringAttr("mode", "constant"));
  std::vector<int64_t> pads;
  Expr value;
  if (ctx.opset() < 11) {
    const char* name = ctx.HasAttr("paddings") ? "paddings" : "pads";
    KILN_ASSIGN_OR_RETURN(pads, ctx.IntsAttr(name, std::nullopt));
    KILN_ASSIGN_OR_RETURN(double constant, ctx.FloatAttr("value", 0.0f));
    value = ctx.Constant(ScalarTensor(tx->dtype, constant));
  } else {
    if (ctx.HasInput(2)) {
      KILN_ASSIGN_OR_RETURN(value, ctx.Input(2));
    } else {
      value = ctx.Constant(ScalarTensor(tx->dtype, 0));
    }
    if (!ctx.ConstantInput(1)) {
      KILN_ASSIGN_OR_RETURN(Expr y, PadToDeclaredShape(ctx, x, mode, value));
      return One(y);
    }
    KILN_ASSIGN_OR_RETURN(pads, ctx.ConstantInts(1, "pads"));
  }
  if (pads.size() != 2 * tx->shape.size()) {
    return ctx.Error(absl::StrCat("pads has ", pads.size(), " values, expected ",
                                  2 * tx->shape.size(), " (begin and end for each of ",
                                  tx->shape.size(), " dims)"));
  }
  KILN_ASSIGN_OR_RETURN(Expr y,
                        ctx.Call("nn.pad", {x, value},
                                 MakeAttrs({{"pad_width", IntArray(pads)}, {"pad_mode", mode}})));
  return One(y);
}

template <bool kToSpace>
absl::StatusOr<std::vector<Expr>> ConvertBlockRearrange(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t block_size, ctx.IntAttr("blocksize", std::nullopt));
  std::vector<AttrsNode::Field> attrs = {{"block_size", block_size}};
  if (kToSpace) {
    KILN_ASSIGN_OR_RETURN(std::string mode, ctx.StringAttr("mode", "DCR"));
    attrs.emplace_back("mode", mode);
  }
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call(kToSpace ? "nn.depth_to_space" : "nn.space_to_depth", {x},
                                         MakeAttrs(std::move(attrs))));
  return One(y);
}

// A constant float input (float16/32/64) as doubles.
absl::StatusOr<std::vector<double>> ConstantFloats(const ConvertContext& ctx, size_t i,
                                                   const char* what) {
  TensorData data = ctx.ConstantInput(i);
  if (!data) {
    return ctx.Error(absl::StrCat("input ", i, " (", what,
                                  ") must be a constant or computable from static shapes"));
  }
  if (!IsFloat(data->dtype)) {
    return ctx.Error(absl::StrCat("input ", i, " (", what, ") must be a float tensor, got ",
                                  DataTypeName(data->dtype)));
  }
  std::vector<double> values;
  int width = DataTypeBytes(data->dtype);
  for (int64_t k = 0; k < data->NumElements(); ++k) {
    std::string one =
        data->bytes.substr(static_cast<size_t>(k * width), static_cast<size_t>(width));
    values.push_back(*ScalarValue(MakeTensorData(data->dtype, {}, std::move(one))));
  }
  return values;
}

// Resize (opsets 10, 11, 13) and Upsample (7: scales attribute, 9: input).
// Both scale or size every dim; Kiln resizes the spatial ones, so N and C
// must keep their extents.
// The scales input (`input`: Resize's 2, Upsample's and Resize-10's 1), known only at run time,
// for a model declaring its output shape `declared`: the spatial scales, guarded by a check that
// batch and channel scales are 1 and that floor(input * scale) gives the declared extent of every
// spatial dim (as ONNX sizes it).
absl::StatusOr<Expr> RunTimeResizeScales(ConvertContext& ctx, size_t input,
                                         const std::vector<int64_t>& declared) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticInputShape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(Expr scales, ctx.Input(input));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(input));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (!IsFloat(type->dtype) || type->shape.size() != 1 || type->shape[0] != Dim::Static(rank) ||
      declared.size() != shape.size()) {
    return ctx.Error(absl::StrCat("input ", input, " (scales) must hold ", rank,
                                  " floats, one per dim of the input and of the declared output"));
  }
  auto f64 = [&](double v) { return ctx.Constant(ScalarTensor(DataType::kFloat64, v)); };
  KILN_ASSIGN_OR_RETURN(Expr wide, ctx.Call("cast", {scales}, MakeAttrs({{"dtype", DataType::kFloat64}})));
  Expr ok = ctx.Constant(ScalarTensor(DataType::kBool, 1));
  for (int64_t d = 0; d < rank; ++d) {
    KILN_ASSIGN_OR_RETURN(Expr s, ctx.Call("take", {wide, ctx.Constant(ScalarTensor(DataType::kInt64, d))},
                                           MakeAttrs({{"axis", int64_t{0}}})));
    Expr holds;
    if (d < 2) {
      KILN_ASSIGN_OR_RETURN(holds, ctx.Call("equal", {s, f64(1)}));
    } else {
      KILN_ASSIGN_OR_RETURN(Expr extent, ctx.Call("multiply", {s, f64(static_cast<double>(shape[d]))}));
      KILN_ASSIGN_OR_RETURN(extent, ctx.Call("floor", {extent}));
      KILN_ASSIGN_OR_RETURN(holds, ctx.Call("equal", {extent, f64(static_cast<double>(declared[d]))}));
    }
    KILN_ASSIGN_OR_RETURN(ok, ctx.Call("logical_and", {ok, holds}));
  }
  KILN_ASSIGN_OR_RETURN(Expr spatial, ctx.Call("strided_slice", {scales},
                                               MakeAttrs({{"begin", IntArray({2})},
                                                          {"end", IntArray({rank})},
                                                          {"strides", IntArray({1})},
                                                          {"axes", IntArray({0})}})));
  return GuardCondition(ctx, spatial, ok,
                        absl::StrCat("input ", input, " (scales) must give the shape ",
                                     DimsString(declared),
                                     " (the shape the model declares and was compiled for)"));
}

absl::StatusOr<std::vector<Expr>> ConvertResize(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int n, SpatialRank(ctx));
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  size_t rank = tx->shape.size();
  bool upsample = ctx.node().op_type() == "Upsample";
  bool legacy = upsample || ctx.opset() < 11;  // Upsample and Resize-10 semantics
  KILN_ASSIGN_OR_RETURN(std::string mode, ctx.StringAttr("mode", "nearest"));
  std::string method;
  if (mode == "nearest") {
    method = "nearest_neighbor";
  } else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    method = "linear";
  } else if (mode == "cubic" && !legacy) {
    method = "cubic";
  } else {
    return ctx.Error(absl::StrCat("attribute 'mode' is '", mode, "', expected nearest, linear",
                                  legacy ? "" : " or cubic"));
  }

  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::optional<OperandRule> runtime_sizes;
  Expr runtime_scales;
  const size_t scales_input = legacy ? 1 : 2;
  if ((!upsample || ctx.opset() >= 9) && KnownOnlyAtRunTime(ctx, scales_input)) {
    // Scales known only at run time: the declared output shape, the scales read by the kernel
    // (its coordinates use them, not output / input) and checked to give that shape.
    KILN_ASSIGN_OR_RETURN(sizes, DeclaredShapeOrError(ctx, 0, scales_input, "scales"));
    KILN_ASSIGN_OR_RETURN(runtime_scales, RunTimeResizeScales(ctx, scales_input, sizes));
  } else if (upsample && ctx.opset() < 9) {
    KILN_ASSIGN_OR_RETURN(std::vector<float> attr, ctx.FloatsAttr("scales", std::nullopt));
    scales.assign(attr.begin(), attr.end());
  } else {
    if (ctx.HasInput(scales_input)) {
      KILN_ASSIGN_OR_RETURN(scales, ConstantFloats(ctx, scales_input, "scales"));
    }
    if (!legacy && KnownOnlyAtRunTime(ctx, 3)) {
      // Sizes known only at run time: the declared output shape, checked.
      KILN_ASSIGN_OR_RETURN(sizes, DeclaredShapeOrError(ctx, 0, 3, "sizes"));
      KILN_ASSIGN_OR_RETURN(runtime_sizes, ExactShapeRule(ctx, 3, "sizes", sizes));
    } else if (!legacy && ctx.HasInput(3)) {
      KILN_ASSIGN_OR_RETURN(sizes, ctx.ConstantInts(3, "sizes"));
    }
  }
  if (runtime_scales && ctx.HasInput(3)) {
    return ctx.Error("exactly one of scales and sizes must be given");
  }
  if (scales.empty() == sizes.empty()) {
    return ctx.Error("exactly one of scales and sizes must be given");
  }
  if (!scales.empty() && scales.size() != rank) {
    return ctx.Error(
        absl::StrCat("scales has ", scales.size(), " values, expected ", rank, " (one per dim)"));
  }
  if (!sizes.empty() && sizes.size() != rank) {
    return ctx.Error(
        absl::StrCat("sizes has ", sizes.size(), " values, expected ", rank, " (one per dim)"));
  }
  for (size_t d = 0; d < 2; ++d) {
    bool kept = scales.empty() ? (!tx->shape[d].is_static() || tx->shape[d].value == sizes[d])
                               : scales[d] == 1.0;
    if (!kept) {
      return ctx.Error(absl::StrCat("resizing dim ", d, " (", d == 0 ? "batch" : "channels",
                                    ") is not supported; only the spatial dims may change"));
    }
  }
  for (double s : scales) {
    if (!(s > 0)) return ctx.Error(absl::StrCat("scales must be positive, got ", s));
  }

  std::string coordinates = "asymmetric", rounding = "floor";
  float cubic_a = -0.75f, extrapolation = 0.0f;
  int64_t exclude_outside = 0;
  std::vector<double> roi;
  Expr runtime_roi;  // the spatial starts then ends, when only a run knows the roi
  if (legacy) {
    // Nearest rounds down when growing and up when shrinking. Run-time scales shrink a dim
    // exactly when its declared extent is below the input's (floor(in * s) < in iff s < 1), and
    // the check of the scales holds the run to that extent.
    bool down = false, up = false;
    for (size_t d = 2; d < rank && !scales.empty(); ++d) {
      down |= scales[d] < 1;
      up |= scales[d] > 1;
    }
    for (size_t d = 2; d < rank && runtime_scales && tx->shape[d].is_static(); ++d) {
      down |= sizes[d] < tx->shape[d].value;
      up |= sizes[d] > tx->shape[d].value;
    }
    if (down && up && method == "nearest_neighbor") {
      return ctx.Error(
          "nearest resizing that shrinks some dims and grows others is not "
          "supported before opset 11");
    }
    if (down) rounding = "ceil";
    if (down && runtime_scales && method == "nearest_neighbor") {
      // A dim that keeps its extent may still grow slightly (floor(2 * 1.2) = 2), which would
      // round down: one rounding for the whole resize holds only if no scale exceeds 1.
      const auto* type = runtime_scales->checked_type.as<TensorTypeNode>();
      KILN_ASSIGN_OR_RETURN(Expr largest, ctx.Call("max", {runtime_scales}));
      KILN_ASSIGN_OR_RETURN(Expr shrinks,
                            ctx.Call("less_equal", {largest, ctx.Constant(ScalarTensor(type->dtype, 1))}));
      KILN_ASSIGN_OR_RETURN(
          runtime_scales,
          GuardCondition(ctx, runtime_scales, shrinks,
                         "input 1 (scales) must not exceed 1 where the declared shape shrinks "
                         "another dim (nearest resizing rounds one way for all dims)"));
    }
  } else {
    KILN_ASSIGN_OR_RETURN(coordinates,
                          ctx.StringAttr("coordinate_transformation_mode", "half_pixel"));
    KILN_ASSIGN_OR_RETURN(rounding, ctx.StringAttr("nearest_mode", "round_prefer_floor"));
    KILN_ASSIGN_OR_RETURN(cubic_a, ctx.FloatAttr("cubic_coeff_a", -0.75f));
    KILN_ASSIGN_OR_RETURN(exclude_outside, ctx.IntAttr("exclude_outside", 0));
    KILN_ASSIGN_OR_RETURN(extrapolation, ctx.FloatAttr("extrapolation_value", 0.0f));
    if (coordinates == "tf_crop_and_resize" && KnownOnlyAtRunTime(ctx, 1) && !runtime_scales &&
        scales.empty()) {
      // A roi only a run knows, with the sizes given: the kernel reads its spatial starts and
      // ends (the output's shape does not depend on it).
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* roi_type, ctx.InputTensorType(1));
      if (!IsFloat(roi_type->dtype) || roi_type->shape.size() != 1 ||
          roi_type->shape[0] != Dim::Static(static_cast<int64_t>(2 * rank))) {
        return ctx.Error(absl::StrCat("input 1 (roi) must hold ", 2 * rank,
                                      " floats (starts, then ends, of every dim)"));
      }
      KILN_ASSIGN_OR_RETURN(Expr full, ctx.Input(1));
      std::vector<Expr> halves;
      for (int64_t begin : {int64_t{2}, static_cast<int64_t>(rank) + 2}) {
        KILN_ASSIGN_OR_RETURN(Expr half, ctx.Call("strided_slice", {full},
                                                  MakeAttrs({{"begin", IntArray({begin})},
                                                             {"end", IntArray({begin + n})},
                                                             {"strides", IntArray({1})},
                                                             {"axes", IntArray({0})}})));
        halves.push_back(half);
      }
      KILN_ASSIGN_OR_RETURN(runtime_roi, ctx.Call("concatenate", std::move(halves),
                                                  MakeAttrs({{"axis", int64_t{0}}})));
    } else if (coordinates == "tf_crop_and_resize") {
      KILN_ASSIGN_OR_RETURN(std::vector<double> full, ConstantFloats(ctx, 1, "roi"));
      if (full.size() != 2 * rank) {
        return ctx.Error(absl::StrCat("roi has ", full.size(), " values, expected ", 2 * rank,
                                      " (starts, then ends, of every dim)"));
      }
      for (size_t d = 2; d < rank; ++d) roi.push_back(full[d]);
      for (size_t d = 2; d < rank; ++d) roi.push_back(full[rank + d]);
    }
  }

  std::vector<int64_t> size;
  std::vector<double> spatial_scales;
  for (size_t d = 2; d < rank; ++d) {
    if (!sizes.empty()) {
      size.push_back(sizes[d]);
      continue;
    }
    spatial_scales.push_back(scales[d]);
    const Dim& in = tx->shape[d];
    if (!in.is_static()) {
      if (!roi.empty())
        return ctx.Error("tf_crop_and_resize with scales needs static spatial dims");
      size.push_back(-1);
      continue;
    }
    double extent = static_cast<double>(in.value) * scales[d];
    if (!roi.empty()) extent *= roi[d - 2 + static_cast<size_t>(n)] - roi[d - 2];
    size.push_back(static_cast<int64_t>(std::floor(extent)));
  }
  AttrValue::Array scales_attr(spatial_scales.begin(), spatial_scales.end());
  AttrValue::Array roi_attr(roi.begin(), roi.end());
  std::vector<Expr> operands = {x};
  if (runtime_scales) operands.push_back(runtime_scales);
  if (runtime_roi) operands.push_back(runtime_roi);
  KILN_ASSIGN_OR_RETURN(Expr y,
                        ctx.Call(absl::StrCat("image.resize", n, "d"), std::move(operands),
                                 MakeAttrs({{"size", IntArray(size)},
                                            {"scales", AttrValue(std::move(scales_attr))},
                                            {"roi", AttrValue(std::move(roi_attr))},
                                            {"method", method},
                                            {"coordinate_transformation_mode", coordinates},
                                            {"rounding_method", rounding},
                                            {"cubic_alpha", double{cubic_a}},
                                            {"cubic_exclude", exclude_outside != 0},
                                            {"extrapolation_value", double{extrapolation}}})));
  if (runtime_sizes) {
    KILN_ASSIGN_OR_RETURN(y, GuardOperand(ctx, y, 3, *runtime_sizes,
                                          absl::StrCat("hold the sizes ", DimsString(sizes))));
  }
  return One(y);
}

}  // namespace

void RegisterWindowConverters(ConverterTable& table) {
  table.Add("Conv", ConvertConv);
  table.Add("ConvTranspose", ConvertConvTranspose);
  table.Add("MaxPool", ConvertPool<true>);
  table.Add("AveragePool", ConvertPool<false>);
  table.Add("GlobalMaxPool", ConvertGlobalPool<true>);
  table.Add("GlobalAveragePool", ConvertGlobalPool<false>);
  table.Add("Pad", ConvertPad);
  table.Add("DepthToSpace", ConvertBlockRearrange<true>);
  table.Add("SpaceToDepth", ConvertBlockRearrange<false>);
  table.Add("Resize", ConvertResize);
  table.Add("Upsample", ConvertResize);
}

}  // namespace kiln::onnx_frontend
