// The quantization converters: QuantizeLinear and DequantizeLinear (opset 10 and 13: per-tensor,
// or per-axis with a 1-D scale), as elementwise arithmetic exactly as ONNX specifies it:
// y = saturate(round_half_even(x / scale) + zero_point) and y = (x - zero_point) * scale
// (DynamicQuantizeLinear is expanded from its ONNX function body into these); MatMulInteger and
// ConvInteger, int32 products of operands less their zero points; QLinearMatMul and QLinearConv,
// those rescaled by the input scales over the output scale and quantized like QuantizeLinear.
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/nn_converters.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// `param` (input `i`: a scale or zero point, a scalar or a 1-D tensor of x's extent along
// `axis`) shaped to broadcast against x of rank `rank`: (C, 1, ..., 1).
absl::StatusOr<Expr> AlongAxis(ConvertContext& ctx, size_t i, int64_t rank, int64_t axis,
                               int64_t extent, const char* what) {
  KILN_ASSIGN_OR_RETURN(Expr param, ctx.Input(i));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  if (type->shape.empty()) return param;
  if (type->shape.size() != 1 || !type->shape[0].is_static()) {
    return ctx.Error(absl::StrCat(what, " must be a scalar or a 1-D tensor"));
  }
  if (type->shape[0].value == 1) {
    return ctx.Call("reshape", {param}, MakeAttrs({{"newshape", IntArray({})}}));
  }
  if (type->shape[0].value != extent) {
    return ctx.Error(absl::StrCat(what, " has ", type->shape[0].value,
                                  " elements, expected x's extent along axis ", axis, " (",
                                  extent, ")"));
  }
  if (axis == rank - 1) return param;
  return ctx.Call("expand_dims", {param},
                  MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", rank - 1 - axis}}));
}

// x's rank, its normalized `axis` attribute (default 1) and the extent along it.
struct Axis {
  int64_t rank, axis, extent;
};
absl::StatusOr<Axis> QuantizationAxis(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  int64_t rank = static_cast<int64_t>(tx->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* scale, ctx.InputTensorType(1));
  if (scale->shape.empty()) return Axis{rank, 0, 1};  // per tensor: the axis does not matter
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat("attribute 'axis' is ", axis, ", outside [", -rank, ", ",
                                  rank, ") for x of rank ", rank));
  }
  if (axis < 0) axis += rank;
  int64_t extent = tx->shape[axis].is_static() ? tx->shape[axis].value : -1;
  return Axis{rank, axis, extent};
}

// QuantizeLinear(x, y_scale, y_zero_point = uint8 0): the result has the zero point's dtype.
absl::StatusOr<std::vector<Expr>> ConvertQuantizeLinear(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tscale, ctx.InputTensorType(1));
  if (!IsFloat(tx->dtype) || tscale->dtype != tx->dtype) {
    return ctx.Error("x and y_scale must be float tensors of one dtype");
  }
  KILN_ASSIGN_OR_RETURN(Axis axis, QuantizationAxis(ctx));
  DataType out = DataType::kUInt8;
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tzp, ctx.InputTensorType(2));
    out = tzp->dtype;
  }
  if (out != DataType::kUInt8 && out != DataType::kInt8) {
    return ctx.Error(absl::StrCat("y_zero_point must be uint8 or int8, not ",
                                  DataTypeName(out)));
  }
  DataType dt = tx->dtype;
  KILN_ASSIGN_OR_RETURN(Expr scale, AlongAxis(ctx, 1, axis.rank, axis.axis, axis.extent, "y_scale"));
  KILN_ASSIGN_OR_RETURN(Expr scaled, ctx.Call("divide", {x, scale}));
  KILN_ASSIGN_OR_RETURN(Expr rounded, ctx.Call("round", {scaled}));
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr zp,
                          AlongAxis(ctx, 2, axis.rank, axis.axis, axis.extent, "y_zero_point"));
    KILN_ASSIGN_OR_RETURN(Expr zp_float, ctx.Call("cast", {zp}, MakeAttrs({{"dtype", dt}})));
    KILN_ASSIGN_OR_RETURN(rounded, ctx.Call("add", {rounded, zp_float}));
  }
  double lo = out == DataType::kUInt8 ? 0 : -128, hi = out == DataType::kUInt8 ? 255 : 127;
  KILN_ASSIGN_OR_RETURN(Expr clipped, ctx.Call("clip", {rounded}, MakeAttrs({{"a_min", lo}, {"a_max", hi}})));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call("cast", {clipped}, MakeAttrs({{"dtype", out}})));
  return std::vector<Expr>{y};
}

// DequantizeLinear(x, x_scale, x_zero_point = 0): float of the scale's dtype.
absl::StatusOr<std::vector<Expr>> ConvertDequantizeLinear(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tscale, ctx.InputTensorType(1));
  if (tx->dtype != DataType::kUInt8 && tx->dtype != DataType::kInt8 &&
      tx->dtype != DataType::kInt32) {
    return ctx.Error(absl::StrCat("x must be uint8, int8 or int32, not ", DataTypeName(tx->dtype)));
  }
  if (!IsFloat(tscale->dtype)) return ctx.Error("x_scale must be a float tensor");
  KILN_ASSIGN_OR_RETURN(Axis axis, QuantizationAxis(ctx));
  DataType dt = tscale->dtype;
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.Call("cast", {x}, MakeAttrs({{"dtype", dt}})));
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tzp, ctx.InputTensorType(2));
    if (tzp->dtype != tx->dtype) return ctx.Error("x_zero_point must have x's dtype");
    KILN_ASSIGN_OR_RETURN(Expr zp,
                          AlongAxis(ctx, 2, axis.rank, axis.axis, axis.extent, "x_zero_point"));
    KILN_ASSIGN_OR_RETURN(Expr zp_float, ctx.Call("cast", {zp}, MakeAttrs({{"dtype", dt}})));
    KILN_ASSIGN_OR_RETURN(value, ctx.Call("subtract", {value, zp_float}));
  }
  KILN_ASSIGN_OR_RETURN(Expr scale, AlongAxis(ctx, 1, axis.rank, axis.axis, axis.extent, "x_scale"));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call("multiply", {value, scale}));
  return std::vector<Expr>{y};
}

// Input `i` (uint8 or int8) as int32, less input `zp_index` (its zero point, when given) shaped
// by `shape_zero_point` to broadcast against it.
template <typename ShapeZeroPoint>
absl::StatusOr<Expr> Centered(ConvertContext& ctx, size_t i, size_t zp_index,
                              ShapeZeroPoint shape_zero_point) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(i));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(i));
  if (tx->dtype != DataType::kUInt8 && tx->dtype != DataType::kInt8) {
    return ctx.Error(absl::StrCat("input ", i, " must be uint8 or int8, not ",
                                  DataTypeName(tx->dtype)));
  }
  KILN_ASSIGN_OR_RETURN(Expr wide, ctx.Call("cast", {x}, MakeAttrs({{"dtype", DataType::kInt32}})));
  if (!ctx.HasInput(zp_index)) return wide;
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tzp, ctx.InputTensorType(zp_index));
  if (tzp->dtype != tx->dtype) {
    return ctx.Error(absl::StrCat("input ", zp_index, " (a zero point) must have input ", i,
                                  "'s dtype"));
  }
  KILN_ASSIGN_OR_RETURN(Expr zp, ctx.Input(zp_index));
  KILN_ASSIGN_OR_RETURN(zp, shape_zero_point(zp, tzp, tx));
  KILN_ASSIGN_OR_RETURN(Expr zp_wide, ctx.Call("cast", {zp}, MakeAttrs({{"dtype", DataType::kInt32}})));
  return ctx.Call("subtract", {wide, zp_wide});
}

// (A - a_zero_point) @ (B - b_zero_point) in int32. A's zero point is a scalar or one per row
// of A (M), B's a scalar or one per column of B (N).
absl::StatusOr<Expr> IntegerMatmul(ConvertContext& ctx, size_t a, size_t a_zp, size_t b,
                                   size_t b_zp) {
  auto per_row = [&](const Expr& zp, const TensorTypeNode* tzp,
                     const TensorTypeNode* tx) -> absl::StatusOr<Expr> {
    if (tzp->shape.size() == 1 && tx->shape.size() >= 2) {
      return ctx.Call("expand_dims", {zp}, MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
    }
    return zp;
  };
  auto per_column = [](const Expr& zp, const TensorTypeNode*,
                       const TensorTypeNode*) -> absl::StatusOr<Expr> { return zp; };
  KILN_ASSIGN_OR_RETURN(Expr lhs, Centered(ctx, a, a_zp, per_row));
  KILN_ASSIGN_OR_RETURN(Expr rhs, Centered(ctx, b, b_zp, per_column));
  return ctx.Call("nn.matmul", {lhs, rhs});
}

absl::StatusOr<std::vector<Expr>> ConvertMatMulInteger(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr y, IntegerMatmul(ctx, 0, 2, 1, 3));
  return std::vector<Expr>{y};
}

// ConvInteger(x, w, x_zero_point, w_zero_point): the convolution of x and w less their zero
// points (x's a scalar, w's a scalar or one per output channel), in int32.
absl::StatusOr<std::vector<Expr>> ConvertConvInteger(ConvertContext& ctx) {
  auto scalar = [](const Expr& zp, const TensorTypeNode*,
                   const TensorTypeNode*) -> absl::StatusOr<Expr> { return zp; };
  auto per_output_channel = [&](const Expr& zp, const TensorTypeNode* tzp,
                                const TensorTypeNode* tw) -> absl::StatusOr<Expr> {
    if (tzp->shape.size() != 1) return zp;
    return ctx.Call("expand_dims", {zp},
                    MakeAttrs({{"axis", int64_t{1}},
                               {"num_newaxis", static_cast<int64_t>(tw->shape.size()) - 1}}));
  };
  KILN_ASSIGN_OR_RETURN(Expr x, Centered(ctx, 0, 2, scalar));
  KILN_ASSIGN_OR_RETURN(Expr w, Centered(ctx, 1, 3, per_output_channel));
  // The convolution ops take float operands: in float64 every product of 8-bit operands
  // (< 2^17 in magnitude) and every sum of fewer than 2^36 of them is exact, so the int32 result
  // is too.
  auto wide = MakeAttrs({{"dtype", DataType::kFloat64}});
  KILN_ASSIGN_OR_RETURN(x, ctx.Call("cast", {x}, wide));
  KILN_ASSIGN_OR_RETURN(w, ctx.Call("cast", {w}, wide));
  KILN_ASSIGN_OR_RETURN(Expr y, ConvFromAttributes(ctx, x, w));
  KILN_ASSIGN_OR_RETURN(y, ctx.Call("cast", {y}, MakeAttrs({{"dtype", DataType::kInt32}})));
  return std::vector<Expr>{y};
}

// saturate(round_half_even(int32 `accumulator` * `scale`) + input `zp_index`) in the zero
// point's dtype (uint8 or int8), `scale` a float32 expression broadcasting against it.
absl::StatusOr<Expr> Requantize(ConvertContext& ctx, const Expr& accumulator, const Expr& scale,
                                size_t zp_index) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tzp, ctx.InputTensorType(zp_index));
  DataType out = tzp->dtype;
  if (out != DataType::kUInt8 && out != DataType::kInt8) {
    return ctx.Error("y_zero_point must be uint8 or int8");
  }
  KILN_ASSIGN_OR_RETURN(Expr y_zp, ctx.Input(zp_index));
  auto f32 = MakeAttrs({{"dtype", DataType::kFloat32}});
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.Call("cast", {accumulator}, f32));
  KILN_ASSIGN_OR_RETURN(value, ctx.Call("multiply", {value, scale}));
  KILN_ASSIGN_OR_RETURN(value, ctx.Call("round", {value}));
  KILN_ASSIGN_OR_RETURN(Expr zp_float, ctx.Call("cast", {y_zp}, f32));
  KILN_ASSIGN_OR_RETURN(value, ctx.Call("add", {value, zp_float}));
  double lo = out == DataType::kUInt8 ? 0 : -128, hi = out == DataType::kUInt8 ? 255 : 127;
  KILN_ASSIGN_OR_RETURN(value, ctx.Call("clip", {value}, MakeAttrs({{"a_min", lo}, {"a_max", hi}})));
  return ctx.Call("cast", {value}, MakeAttrs({{"dtype", out}}));
}

absl::Status ExpectFloat32Scales(ConvertContext& ctx, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(i));
    if (t->dtype != DataType::kFloat32) {
      return ctx.Error(absl::StrCat("input ", i, " (a scale) must be float32"));
    }
  }
  return absl::OkStatus();
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
// saturate(round_half_even(int32 product * (a_scale * b_scale / y_scale)) + y_zero_point), the
// product exact in int32 and rescaled in float32 as ONNX's reference does.
absl::StatusOr<std::vector<Expr>> ConvertQLinearMatMul(ConvertContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectFloat32Scales(ctx, {1, 4, 6}));
  KILN_ASSIGN_OR_RETURN(Expr product, IntegerMatmul(ctx, 0, 2, 3, 5));
  KILN_ASSIGN_OR_RETURN(Expr a_scale, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr b_scale, ctx.Input(4));
  KILN_ASSIGN_OR_RETURN(Expr y_scale, ctx.Input(6));
  KILN_ASSIGN_OR_RETURN(Expr scale, ctx.Call("multiply", {a_scale, b_scale}));
  KILN_ASSIGN_OR_RETURN(scale, ctx.Call("divide", {scale, y_scale}));
  KILN_ASSIGN_OR_RETURN(Expr y, Requantize(ctx, product, scale, 7));
  return std::vector<Expr>{y};
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B):
// the int32 convolution of the centered operands plus the int32 bias B, rescaled by
// x_scale * w_scale / y_scale (w_scale and w_zero_point a scalar or one per output channel)
// and quantized.
absl::StatusOr<std::vector<Expr>> ConvertQLinearConv(ConvertContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectFloat32Scales(ctx, {1, 4, 6}));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tw, ctx.InputTensorType(3));
  const int64_t rank = static_cast<int64_t>(tw->shape.size());
  // A per-output-channel tensor (M) as (M, 1, ..., 1) against the (N, M, ...) output.
  auto per_channel = [&](const Expr& e, const TensorTypeNode* t, int64_t trailing) -> absl::StatusOr<Expr> {
    if (t->shape.size() != 1 || trailing == 0) return e;
    return ctx.Call("expand_dims", {e}, MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", trailing}}));
  };
  auto scalar = [](const Expr& zp, const TensorTypeNode*,
                   const TensorTypeNode*) -> absl::StatusOr<Expr> { return zp; };
  auto weight_zp = [&](const Expr& zp, const TensorTypeNode* tzp,
                       const TensorTypeNode*) -> absl::StatusOr<Expr> {
    return per_channel(zp, tzp, rank - 1);
  };
  KILN_ASSIGN_OR_RETURN(Expr x, Centered(ctx, 0, 2, scalar));
  KILN_ASSIGN_OR_RETURN(Expr w, Centered(ctx, 3, 5, weight_zp));
  auto wide = MakeAttrs({{"dtype", DataType::kFloat64}});  // exact, as in ConvInteger
  KILN_ASSIGN_OR_RETURN(x, ctx.Call("cast", {x}, wide));
  KILN_ASSIGN_OR_RETURN(w, ctx.Call("cast", {w}, wide));
  KILN_ASSIGN_OR_RETURN(Expr acc, ConvFromAttributes(ctx, x, w));
  KILN_ASSIGN_OR_RETURN(acc, ctx.Call("cast", {acc}, MakeAttrs({{"dtype", DataType::kInt32}})));
  if (ctx.HasInput(8)) {
    KILN_ASSIGN_OR_RETURN(Expr bias, ctx.Input(8));
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tb, ctx.InputTensorType(8));
    if (tb->dtype != DataType::kInt32) return ctx.Error("input 8 (B) must be int32");
    KILN_ASSIGN_OR_RETURN(bias, per_channel(bias, tb, rank - 2));
    KILN_ASSIGN_OR_RETURN(acc, ctx.Call("add", {acc, bias}));
  }
  KILN_ASSIGN_OR_RETURN(Expr x_scale, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr w_scale, ctx.Input(4));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tws, ctx.InputTensorType(4));
  KILN_ASSIGN_OR_RETURN(w_scale, per_channel(w_scale, tws, rank - 2));
  KILN_ASSIGN_OR_RETURN(Expr y_scale, ctx.Input(6));
  KILN_ASSIGN_OR_RETURN(Expr scale, ctx.Call("multiply", {x_scale, w_scale}));
  KILN_ASSIGN_OR_RETURN(scale, ctx.Call("divide", {scale, y_scale}));
  KILN_ASSIGN_OR_RETURN(Expr y, Requantize(ctx, acc, scale, 7));
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterQuantizeConverters(ConverterTable& table) {
  table.Add("QuantizeLinear", ConvertQuantizeLinear);
  table.Add("DequantizeLinear", ConvertDequantizeLinear);
  table.Add("MatMulInteger", ConvertMatMulInteger);
  table.Add("ConvInteger", ConvertConvInteger);
  table.Add("QLinearMatMul", ConvertQLinearMatMul);
  table.Add("QLinearConv", ConvertQLinearConv);
}

}  // namespace kiln::onnx_frontend
