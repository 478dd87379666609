// Converters for ONNX's neural-network operators: MatMul and Gemm, the
// normalizations, Softmax and its relatives, Dropout (training mode with a mask drawn at compile
// time), and the activations that expand into elementwise graph ops (every piece of an expansion
// carries the node's span through the ConvertContext). Window ops (Conv, pooling, Pad, Resize, ...)
// are in nn_window_converters.cc.
#include "engine/frontend/onnx/nn_converters.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/random_values.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

std::vector<Expr> One(Expr e) { return std::vector<Expr>{std::move(e)}; }

// One-way broadcasting left `target` as it was: same rank, static dims kept.
bool KeptShape(const std::vector<Dim>& result, const std::vector<Dim>& target) {
  if (result.size() != target.size()) return false;
  for (size_t i = 0; i < result.size(); ++i) {
    if (target[i].is_static() && result[i] != target[i]) return false;
  }
  return true;
}

Expr Scalar(ConvertContext& ctx, DataType dtype, double value) {
  return ctx.Constant(ScalarTensor(dtype, value));
}

absl::StatusOr<std::vector<Expr>> ConvertMatMul(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nn.matmul", {a, b}));
  return One(out);
}

// Y = alpha * A' B' + beta * C: a dense or matmul, then the scalings and the
// bias add, all carrying the Gemm node's span.
absl::StatusOr<std::vector<Expr>> ConvertGemm(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* ta, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tb, ctx.InputTensorType(1));
  const char* names[] = {"A", "B"};
  const TensorTypeNode* types[] = {ta, tb};
  for (int i = 0; i < 2; ++i) {
    if (types[i]->shape.size() != 2) {
      return ctx.Error(absl::StrCat("input ", i, " (", names[i], ") must be 2-D, got ",
                                    ShapeToString(types[i]->shape)));
    }
  }
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1.0f));
  KILN_ASSIGN_OR_RETURN(double beta, ctx.FloatAttr("beta", 1.0f));
  KILN_ASSIGN_OR_RETURN(int64_t trans_a, ctx.IntAttr("transA", 0));
  KILN_ASSIGN_OR_RETURN(int64_t trans_b, ctx.IntAttr("transB", 0));
  Expr y;
  if (!trans_a && trans_b) {
    // B is (N, K): exactly dense's weight layout (PyTorch's Linear).
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("nn.dense", {a, b}));
  } else {
    KILN_ASSIGN_OR_RETURN(
        y, ctx.Call("nn.matmul", {a, b},
                    MakeAttrs({{"transpose_a", trans_a != 0}, {"transpose_b", trans_b != 0}})));
  }
  DataType dtype = ta->dtype;
  if (alpha != 1.0f) {
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("multiply", {y, Scalar(ctx, dtype, alpha)}));
  }
  if (ctx.HasInput(2) && beta != 0.0f) {
    KILN_ASSIGN_OR_RETURN(Expr c, ctx.Input(2));
    if (beta != 1.0f) {
      KILN_ASSIGN_OR_RETURN(c, ctx.Call("multiply", {c, Scalar(ctx, dtype, beta)}));
    }
    std::vector<Dim> product = TensorTypeOf(y)->shape;
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("add", {y, c}));
    // C broadcasts one way only: to the shape of A' B'.
    if (!KeptShape(TensorTypeOf(y)->shape, product)) {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tc, ctx.InputTensorType(2));
      return ctx.Error(absl::StrCat("input 2 (C) of shape ", ShapeToString(tc->shape),
                                    " does not broadcast to the product's shape ",
                                    ShapeToString(product)));
    }
  }
  return One(y);
}

absl::StatusOr<Expr> MeanOver(ConvertContext& ctx, const Expr& x, const std::vector<int64_t>& axes);

// BatchNormalization in training mode (opset 14+): normalized by the batch's own statistics
// (mean and population variance over every axis but the channels), and the running statistics
// updated: input * momentum + batch statistic * (1 - momentum).
absl::StatusOr<std::vector<Expr>> ConvertTrainingBatchNorm(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(tx->shape.size());
  if (rank < 2 || !IsFloat(tx->dtype)) return ctx.Error("X must be a float tensor of rank >= 2");
  std::vector<int64_t> axes = {0};
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 1e-5f));
  KILN_ASSIGN_OR_RETURN(double momentum, ctx.FloatAttr("momentum", 0.9f));
  // Per-channel (C) values as (C, 1, ..., 1) against X.
  auto per_channel = [&](const Expr& c) -> absl::StatusOr<Expr> {
    if (rank == 2) return c;
    return ctx.Call("expand_dims", {c},
                    MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", rank - 2}}));
  };
  auto scalar = [&](double v) { return Scalar(ctx, tx->dtype, v); };
  KILN_ASSIGN_OR_RETURN(Expr mean, MeanOver(ctx, x, axes));  // (1, C, 1, ...)
  KILN_ASSIGN_OR_RETURN(Expr centered, ctx.Call("subtract", {x, mean}));
  KILN_ASSIGN_OR_RETURN(Expr squared, ctx.Call("multiply", {centered, centered}));
  KILN_ASSIGN_OR_RETURN(Expr var, MeanOver(ctx, squared, axes));
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("add", {var, scalar(epsilon)}));
  KILN_ASSIGN_OR_RETURN(Expr inv_std, ctx.Call("rsqrt", {shifted}));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call("multiply", {centered, inv_std}));
  KILN_ASSIGN_OR_RETURN(Expr scale, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(scale, per_channel(scale));
  KILN_ASSIGN_OR_RETURN(y, ctx.Call("multiply", {y, scale}));
  KILN_ASSIGN_OR_RETURN(Expr bias, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(bias, per_channel(bias));
  KILN_ASSIGN_OR_RETURN(y, ctx.Call("add", {y, bias}));
  std::vector<Expr> outputs = {y};
  // The running statistics, (C): input * momentum + batch * (1 - momentum).
  for (int k = 0; k < 2; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr batch, ctx.Call("squeeze", {k == 0 ? mean : var},
                                               MakeAttrs({{"axis", IntArray(axes)}})));
    KILN_ASSIGN_OR_RETURN(Expr input, ctx.Input(3 + k));
    KILN_ASSIGN_OR_RETURN(Expr kept, ctx.Call("multiply", {input, scalar(momentum)}));
    KILN_ASSIGN_OR_RETURN(Expr fresh, ctx.Call("multiply", {batch, scalar(1 - momentum)}));
    KILN_ASSIGN_OR_RETURN(Expr running, ctx.Call("add", {kept, fresh}));
    outputs.push_back(running);
  }
  return outputs;
}

absl::StatusOr<std::vector<Expr>> ConvertBatchNorm(ConvertContext& ctx) {
  if (ctx.opset() >= 14) {
    KILN_ASSIGN_OR_RETURN(int64_t training, ctx.IntAttr("training_mode", 0));
    if (training != 0) return ConvertTrainingBatchNorm(ctx);
  }
  KILN_RETURN_IF_ERROR(
      RejectOutputsFrom(ctx, 1, {"running_mean", "running_var", "saved_mean", "saved_var"},
                        "they exist only in training mode; Kiln imports inference graphs"));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  if (ctx.opset() < 9) {
    KILN_ASSIGN_OR_RETURN(int64_t spatial, ctx.IntAttr("spatial", 1));
    if (spatial == 0 && tx->shape.size() > 2) {
      return ctx.Error("spatial=0 (statistics per activation, not per channel) is not supported");
    }
  }
  std::vector<Expr> args;
  for (size_t i = 0; i < 5; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr arg, ctx.Input(i));
    args.push_back(arg);
  }
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 1e-5f));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nn.batch_norm", std::move(args),
                                           MakeAttrs({{"axis", 1}, {"epsilon", double{epsilon}}})));
  return One(out);
}

absl::StatusOr<std::vector<Expr>> ConvertInstanceNorm(ConvertContext& ctx) {
  std::vector<Expr> args;
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr arg, ctx.Input(i));
    args.push_back(arg);
  }
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 1e-5f));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nn.instance_norm", std::move(args),
                                           MakeAttrs({{"axis", 1}, {"epsilon", double{epsilon}}})));
  return One(out);
}

bool Requested(const ConvertContext& ctx, int output) {
  return ctx.node().output_size() > output && !ctx.node().output(output).empty();
}

// mean(x) over `axes`, keeping them as 1s (the reduce family's `mean`).
absl::StatusOr<Expr> MeanOver(ConvertContext& ctx, const Expr& x,
                              const std::vector<int64_t>& axes) {
  return ctx.Call("mean", {x}, MakeAttrs({{"axis", IntArray(axes)}, {"keepdims", true}}));
}

// LayerNormalization (opset 17). Y alone is nn.layer_norm. When Mean or
// InvStdDev are asked for too, the node expands into the steps of its ONNX
// function so the statistics exist as values: they are computed in the
// stash type (float32 by default) and Y is cast back to the input's dtype.
absl::StatusOr<std::vector<Expr>> ConvertLayerNorm(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr scale, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", -1));
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 1e-5f));
  if (!Requested(ctx, 1) && !Requested(ctx, 2)) {
    std::vector<Expr> args = {x, scale};
    if (ctx.HasInput(2)) args.push_back(*ctx.Input(2));
    KILN_ASSIGN_OR_RETURN(Expr out,
                          ctx.Call("nn.layer_norm", std::move(args),
                                   MakeAttrs({{"axis", axis}, {"epsilon", double{epsilon}}})));
    return One(out);
  }
  if (OpRegistry::Global().Find("mean") == nullptr) {
    return ctx.Error("outputs Mean and InvStdDev need the mean reduction operator");
  }
  int64_t rank = static_cast<int64_t>(tx->shape.size());
  auto first = NormalizeAxis(axis, rank);
  if (!first.ok()) return ctx.Error(absl::StrCat("attribute 'axis': ", first.status().message()));
  std::vector<int64_t> axes;
  for (int64_t d = *first; d < rank; ++d) axes.push_back(d);
  KILN_ASSIGN_OR_RETURN(int64_t stash_type, ctx.IntAttr("stash_type", 1));
  auto stash = DataTypeFromOnnx(static_cast<int32_t>(stash_type));
  if (!stash.ok() || !IsFloat(*stash)) {
    return ctx.Error(
        absl::StrCat("attribute 'stash_type' is ", stash_type, ", expected a float element type"));
  }
  Expr xs = x;
  if (*stash != tx->dtype) {
    KILN_ASSIGN_OR_RETURN(xs, ctx.Call("cast", {x}, MakeAttrs({{"dtype", *stash}})));
  }
  KILN_ASSIGN_OR_RETURN(Expr mean, MeanOver(ctx, xs, axes));
  KILN_ASSIGN_OR_RETURN(Expr centered, ctx.Call("subtract", {xs, mean}));
  KILN_ASSIGN_OR_RETURN(Expr squared, ctx.Call("multiply", {centered, centered}));
  KILN_ASSIGN_OR_RETURN(Expr variance, MeanOver(ctx, squared, axes));
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("add", {variance, Scalar(ctx, *stash, epsilon)}));
  KILN_ASSIGN_OR_RETURN(Expr inv_std, ctx.Call("rsqrt", {shifted}));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call("multiply", {centered, inv_std}));
  if (*stash != tx->dtype) {
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("cast", {y}, MakeAttrs({{"dtype", tx->dtype}})));
  }
  KILN_ASSIGN_OR_RETURN(y, ctx.Call("multiply", {y, scale}));
  if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr bias, ctx.Input(2));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("add", {y, bias}));
  }
  return std::vector<Expr>{y, mean, inv_std};
}

// MeanVarianceNormalization (opset 9+): (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
// over `axes` (default 0, 2, 3), as its ONNX function computes it.
absl::StatusOr<std::vector<Expr>> ConvertMeanVarianceNorm(ConvertContext& ctx) {
  if (ctx.opset() < 9) {
    return ctx.Error("MeanVarianceNormalization before opset 9 (experimental) is not supported");
  }
  if (OpRegistry::Global().Find("mean") == nullptr) {
    return ctx.Error("MeanVarianceNormalization needs the mean reduction operator");
  }
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                        ctx.IntsAttr("axes", std::vector<int64_t>{0, 2, 3}));
  KILN_ASSIGN_OR_RETURN(Expr mean, MeanOver(ctx, x, axes));
  KILN_ASSIGN_OR_RETURN(Expr mean_squared, ctx.Call("multiply", {mean, mean}));
  KILN_ASSIGN_OR_RETURN(Expr squared, ctx.Call("multiply", {x, x}));
  KILN_ASSIGN_OR_RETURN(Expr mean_of_squares, MeanOver(ctx, squared, axes));
  KILN_ASSIGN_OR_RETURN(Expr variance, ctx.Call("subtract", {mean_of_squares, mean_squared}));
  KILN_ASSIGN_OR_RETURN(Expr std_dev, ctx.Call("sqrt", {variance}));
  KILN_ASSIGN_OR_RETURN(Expr centered, ctx.Call("subtract", {x, mean}));
  KILN_ASSIGN_OR_RETURN(Expr denominator, ctx.Call("add", {std_dev, Scalar(ctx, tx->dtype, 1e-9)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("divide", {centered, denominator}));
  return One(out);
}

absl::StatusOr<std::vector<Expr>> ConvertLrn(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t size, ctx.IntAttr("size", std::nullopt));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1e-4f));
  KILN_ASSIGN_OR_RETURN(double beta, ctx.FloatAttr("beta", 0.75f));
  KILN_ASSIGN_OR_RETURN(double bias, ctx.FloatAttr("bias", 1.0f));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nn.lrn", {x},
                                           MakeAttrs({{"size", size},
                                                      {"axis", 1},
                                                      {"alpha", double{alpha}},
                                                      {"beta", double{beta}},
                                                      {"bias", double{bias}}})));
  return One(out);
}

// `newshape` for reshape: the dims, with -1 for the one symbolic dim (an error
// when there are more).
absl::StatusOr<std::vector<int64_t>> ReshapeTarget(const ConvertContext& ctx,
                                                   const std::vector<Dim>& dims) {
  std::vector<int64_t> out;
  bool symbolic = false;
  for (const Dim& d : dims) {
    if (d.is_static()) {
      out.push_back(d.value);
    } else if (symbolic) {
      return ctx.Error(absl::StrCat("the input shape ", ShapeToString(dims),
                                    " has more than one symbolic dim before the axis; give "
                                    "static shapes with an input shape override"));
    } else {
      symbolic = true;
      out.push_back(-1);
    }
  }
  return out;
}

// Softmax, LogSoftmax, Hardmax. Before opset 13 they work on the input viewed
// as 2-D: dims before `axis` flattened into rows, dims from `axis` on into
// columns (default axis 1). From 13 on: one axis (default -1).
template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertSoftmaxLike(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  bool flattening = ctx.opset() < 13;
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", flattening ? 1 : -1));
  int64_t rank = static_cast<int64_t>(tx->shape.size());
  if (rank == 0) return ctx.Error("input must have rank >= 1, got a scalar");
  auto normalized = NormalizeAxis(axis, rank);
  if (!normalized.ok())
    return ctx.Error(absl::StrCat("attribute 'axis': ", normalized.status().message()));
  axis = *normalized;
  bool trailing_ones = true;  // dims after the axis are all 1: one axis either way
  for (int64_t d = axis + 1; d < rank; ++d) {
    trailing_ones &= tx->shape[d].is_static() && tx->shape[d].value == 1;
  }
  if (!flattening || trailing_ones) {
    KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call(kOp, {x}, MakeAttrs({{"axis", axis}})));
    return One(out);
  }
  // Opset < 13 over several trailing dims: reshape to (..., columns), apply
  // along the last axis, reshape back.
  if (OpRegistry::Global().Find("reshape") == nullptr) {
    return ctx.Error("softmax over several trailing dims (opset < 13) needs the reshape operator");
  }
  std::vector<Dim> trailing(tx->shape.begin() + axis, tx->shape.end());
  KILN_ASSIGN_OR_RETURN(int64_t columns, NumElements(trailing));
  if (columns < 0) {
    return ctx.Error(absl::StrCat("opset ", ctx.opset(), " ", ctx.node().op_type(),
                                  " flattens dims ", axis, ".. of ", ShapeToString(tx->shape),
                                  ", which must be static"));
  }
  std::vector<Dim> rows(tx->shape.begin(), tx->shape.begin() + axis);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> flat, ReshapeTarget(ctx, rows));
  flat.push_back(columns);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> back, ReshapeTarget(ctx, tx->shape));
  KILN_ASSIGN_OR_RETURN(Expr flat_x,
                        ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray(flat)}})));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call(kOp, {flat_x}, MakeAttrs({{"axis", -1}})));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reshape", {y}, MakeAttrs({{"newshape", IntArray(back)}})));
  return One(out);
}

constexpr char kSoftmax[] = "nn.softmax", kLogSoftmax[] = "nn.log_softmax",
               kHardmax[] = "nn.hardmax";

// Training-mode Dropout: each element is kept where a uniform draw in [0, 1) is at least the
// ratio (0.5 by default) and scaled by 1 / (1 - ratio), the ONNX reference's mask * x * scale.
// The draws are a constant drawn at compile time from the node's seed (random_values.h), so a
// seeded model gives NumPy's values; the ratio and the training flag may be known only at run
// time (`training`, null when a constant true), and a ratio outside [0, 1) fails the run.
absl::StatusOr<std::vector<Expr>> TrainingDropout(ConvertContext& ctx, const Expr& x,
                                                  const TensorTypeNode* tx, const Expr& training) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, DrawShapeOfInput0(ctx));
  Expr ratio = ctx.Constant(ScalarTensor(tx->dtype, 0.5));
  if (ctx.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tr, ctx.InputTensorType(1));
    KILN_ASSIGN_OR_RETURN(Expr given, ctx.Input(1));
    KILN_ASSIGN_OR_RETURN(ratio, OneElementAsScalar(ctx, given, tr->dtype, "input 1 (ratio)"));
  }
  KILN_ASSIGN_OR_RETURN(Expr draws, RandomConstant(ctx, shape, RandomDistribution{}));
  KILN_ASSIGN_OR_RETURN(Expr wide_ratio,
                        ctx.Call("cast", {ratio}, MakeAttrs({{"dtype", DataType::kFloat64}})));
  KILN_ASSIGN_OR_RETURN(Expr keep, ctx.Call("greater_equal", {draws, wide_ratio}));
  KILN_ASSIGN_OR_RETURN(Expr x_ratio, ctx.Call("cast", {ratio}, MakeAttrs({{"dtype", tx->dtype}})));
  Expr one = Scalar(ctx, tx->dtype, 1);
  KILN_ASSIGN_OR_RETURN(Expr kept_share, ctx.Call("subtract", {one, x_ratio}));
  KILN_ASSIGN_OR_RETURN(Expr scale, ctx.Call("divide", {one, kept_share}));
  KILN_ASSIGN_OR_RETURN(
      Expr above,
      ctx.Call("greater_equal", {wide_ratio, ctx.Constant(ScalarTensor(DataType::kFloat64, 0))}));
  KILN_ASSIGN_OR_RETURN(
      Expr below,
      ctx.Call("less", {wide_ratio, ctx.Constant(ScalarTensor(DataType::kFloat64, 1))}));
  KILN_ASSIGN_OR_RETURN(Expr valid, ctx.Call("logical_and", {above, below}));
  if (training) {  // not training: keep everything, scale by 1, any ratio
    KILN_ASSIGN_OR_RETURN(Expr inference, ctx.Call("logical_not", {training}));
    KILN_ASSIGN_OR_RETURN(keep, ctx.Call("logical_or", {keep, inference}));
    KILN_ASSIGN_OR_RETURN(scale, ctx.Call("where", {training, scale, one}));
    KILN_ASSIGN_OR_RETURN(valid, ctx.Call("logical_or", {valid, inference}));
  }
  KILN_ASSIGN_OR_RETURN(Expr mask, ctx.Call("cast", {keep}, MakeAttrs({{"dtype", tx->dtype}})));
  KILN_ASSIGN_OR_RETURN(Expr masked, ctx.Call("multiply", {mask, x}));
  KILN_ASSIGN_OR_RETURN(Expr y, ctx.Call("multiply", {masked, scale}));
  KILN_ASSIGN_OR_RETURN(
      y, GuardCondition(ctx, y, valid, "input 1 (ratio) must lie in [0, 1) in training mode"));
  std::vector<Expr> outputs = {y};
  if (Requested(ctx, 1)) outputs.push_back(keep);
  return outputs;
}

// Dropout. In inference (no training_mode before opset 12, or a constant false; or training
// with a constant ratio of 0) the output is the input and the mask, when asked for, all true
// (opset < 10: ones of the input's dtype); otherwise TrainingDropout.
absl::StatusOr<std::vector<Expr>> ConvertDropout(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  if (ctx.opset() >= 12 && ctx.HasInput(2)) {
    Expr training;  // known only at run time
    bool maybe_training = true;
    if (TensorData constant = ctx.ConstantInput(2)) {
      std::optional<double> value = ScalarValue(constant);
      if (!value) return ctx.Error("input 2 (training_mode) must hold one bool");
      maybe_training = *value != 0;
    } else {
      KILN_ASSIGN_OR_RETURN(Expr given, ctx.Input(2));
      KILN_ASSIGN_OR_RETURN(
          training, OneElementAsScalar(ctx, given, DataType::kBool, "input 2 (training_mode)"));
    }
    std::optional<double> ratio = 0.5;
    if (ctx.HasInput(1)) {
      TensorData data = ctx.ConstantInput(1);
      ratio = data ? ScalarValue(data) : std::nullopt;
    }
    if (maybe_training && (training || ratio != 0.0)) return TrainingDropout(ctx, x, tx, training);
  }
  std::vector<Expr> outputs = {x};
  if (Requested(ctx, 1)) {
    DataType mask_dtype = ctx.opset() >= 10 ? DataType::kBool : tx->dtype;
    auto count = NumElements(tx->shape);
    Expr mask;
    // Small static masks are constants; large or symbolic ones are computed
    // rather than stored in the module.
    constexpr int64_t kMaxMaskConstant = int64_t{1} << 16;
    if (count.ok() && *count >= 0 && *count <= kMaxMaskConstant) {
      std::string bytes;
      std::string one = ScalarTensor(mask_dtype, 1)->bytes;
      bytes.reserve(one.size() * static_cast<size_t>(*count));
      for (int64_t i = 0; i < *count; ++i) bytes += one;
      std::vector<int64_t> shape;
      for (const Dim& d : tx->shape) shape.push_back(d.value);
      mask = ctx.Constant(MakeTensorData(mask_dtype, std::move(shape), std::move(bytes)));
    } else {
      // (x == x) or (x != x) is true everywhere, NaN included.
      KILN_ASSIGN_OR_RETURN(Expr eq, ctx.Call("equal", {x, x}));
      KILN_ASSIGN_OR_RETURN(Expr ne, ctx.Call("not_equal", {x, x}));
      KILN_ASSIGN_OR_RETURN(mask, ctx.Call("logical_or", {eq, ne}));
      if (mask_dtype != DataType::kBool) {
        KILN_ASSIGN_OR_RETURN(mask, ctx.Call("cast", {mask}, MakeAttrs({{"dtype", mask_dtype}})));
      }
    }
    outputs.push_back(mask);
  }
  return outputs;
}

// PRelu(x) = x < 0 ? slope * x : x, slope broadcasting to x (one way). Before
// opset 7 a 1-D slope of C elements runs along the channel axis.
absl::StatusOr<std::vector<Expr>> ConvertPRelu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr slope, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* ts, ctx.InputTensorType(1));
  if (ctx.opset() < 7 && tx->shape.size() > 2 && ts->shape.size() == 1 &&
      tx->shape[1].is_static() && ts->shape[0] == tx->shape[1] && tx->shape[1].value != 1) {
    TensorData data = ctx.ConstantInput(1);
    if (!data) {
      return ctx.Error("a per-channel slope (opset < 7) must be a constant");
    }
    std::vector<int64_t> shape(tx->shape.size() - 1, 1);
    shape[0] = tx->shape[1].value;
    slope = ctx.Constant(ReshapeTensorData(data, std::move(shape)));
  }
  KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("less", {x, Scalar(ctx, tx->dtype, 0)}));
  KILN_ASSIGN_OR_RETURN(Expr scaled, ctx.Call("multiply", {x, slope}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {negative, scaled, x}));
  if (!KeptShape(TensorTypeOf(out)->shape, tx->shape)) {
    return ctx.Error(absl::StrCat("slope of shape ", ShapeToString(ts->shape),
                                  " does not broadcast to the input's shape ",
                                  ShapeToString(tx->shape)));
  }
  return One(out);
}

// max(0, min(1, alpha * x + beta))
absl::StatusOr<Expr> HardSigmoid(ConvertContext& ctx, const Expr& x, DataType dtype, double alpha,
                                 double beta) {
  KILN_ASSIGN_OR_RETURN(Expr scaled, ctx.Call("multiply", {x, Scalar(ctx, dtype, alpha)}));
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("add", {scaled, Scalar(ctx, dtype, beta)}));
  return ctx.Call("clip", {shifted}, MakeAttrs({{"a_min", 0.0}, {"a_max", 1.0}}));
}

absl::StatusOr<std::vector<Expr>> ConvertHardSigmoid(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 0.2f));
  KILN_ASSIGN_OR_RETURN(double beta, ctx.FloatAttr("beta", 0.5f));
  KILN_ASSIGN_OR_RETURN(Expr out, HardSigmoid(ctx, x, tx->dtype, alpha, beta));
  return One(out);
}

// x * HardSigmoid(x) with alpha = 1/6, beta = 1/2.
absl::StatusOr<std::vector<Expr>> ConvertHardSwish(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(Expr gate, HardSigmoid(ctx, x, tx->dtype, 1.0 / 6.0, 0.5));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("multiply", {x, gate}));
  return One(out);
}

// gamma * (x > 0 ? x : alpha * exp(x) - alpha)
absl::StatusOr<std::vector<Expr>> ConvertSelu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1.67326319217681884765625f));
  KILN_ASSIGN_OR_RETURN(double gamma, ctx.FloatAttr("gamma", 1.05070102214813232421875f));
  DataType dt = tx->dtype;
  double ga = static_cast<double>(gamma) * alpha;
  KILN_ASSIGN_OR_RETURN(Expr positive, ctx.Call("greater", {x, Scalar(ctx, dt, 0)}));
  KILN_ASSIGN_OR_RETURN(Expr linear, ctx.Call("multiply", {x, Scalar(ctx, dt, gamma)}));
  KILN_ASSIGN_OR_RETURN(Expr exp, ctx.Call("exp", {x}));
  KILN_ASSIGN_OR_RETURN(Expr scaled, ctx.Call("multiply", {exp, Scalar(ctx, dt, ga)}));
  KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("subtract", {scaled, Scalar(ctx, dt, ga)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {positive, linear, negative}));
  return One(out);
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
absl::StatusOr<std::vector<Expr>> ConvertCelu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1.0f));
  if (alpha == 0.0f) return ctx.Error("attribute 'alpha' must be nonzero");
  DataType dt = tx->dtype;
  KILN_ASSIGN_OR_RETURN(Expr divided, ctx.Call("divide", {x, Scalar(ctx, dt, alpha)}));
  KILN_ASSIGN_OR_RETURN(Expr exp, ctx.Call("exp", {divided}));
  KILN_ASSIGN_OR_RETURN(Expr expm1, ctx.Call("subtract", {exp, Scalar(ctx, dt, 1)}));
  KILN_ASSIGN_OR_RETURN(Expr scaled, ctx.Call("multiply", {expm1, Scalar(ctx, dt, alpha)}));
  KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("minimum", {scaled, Scalar(ctx, dt, 0)}));
  KILN_ASSIGN_OR_RETURN(Expr positive, ctx.Call("maximum", {x, Scalar(ctx, dt, 0)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("add", {positive, negative}));
  return One(out);
}

// x > alpha ? x : 0
absl::StatusOr<std::vector<Expr>> ConvertThresholdedRelu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1.0f));
  KILN_ASSIGN_OR_RETURN(Expr above, ctx.Call("greater", {x, Scalar(ctx, tx->dtype, alpha)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {above, x, Scalar(ctx, tx->dtype, 0)}));
  return One(out);
}

// x / (1 + |x|)
absl::StatusOr<std::vector<Expr>> ConvertSoftsign(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(Expr abs, ctx.Call("abs", {x}));
  KILN_ASSIGN_OR_RETURN(Expr denominator, ctx.Call("add", {abs, Scalar(ctx, tx->dtype, 1)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("divide", {x, denominator}));
  return One(out);
}

// x < -lambd ? x + bias : x > lambd ? x - bias : 0
absl::StatusOr<std::vector<Expr>> ConvertShrink(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double bias, ctx.FloatAttr("bias", 0.0f));
  KILN_ASSIGN_OR_RETURN(double lambd, ctx.FloatAttr("lambd", 0.5f));
  DataType dt = tx->dtype;
  KILN_ASSIGN_OR_RETURN(Expr above, ctx.Call("greater", {x, Scalar(ctx, dt, lambd)}));
  KILN_ASSIGN_OR_RETURN(Expr shifted_down, ctx.Call("subtract", {x, Scalar(ctx, dt, bias)}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {above, shifted_down, Scalar(ctx, dt, 0)}));
  if (!IsUnsignedInt(dt)) {  // unsigned values are never below -lambd <= 0
    KILN_ASSIGN_OR_RETURN(Expr below, ctx.Call("less", {x, Scalar(ctx, dt, -lambd)}));
    KILN_ASSIGN_OR_RETURN(Expr shifted_up, ctx.Call("add", {x, Scalar(ctx, dt, bias)}));
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("where", {below, shifted_up, out}));
  }
  return One(out);
}

// Before opset 11 the bounds are attributes; from 11 on optional inputs. A
// constant bound becomes clip's attribute; a computed one a maximum/minimum.
absl::StatusOr<std::vector<Expr>> ConvertClip(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  double lo = -INFINITY, hi = INFINITY;
  Expr dynamic_lo, dynamic_hi;
  if (ctx.opset() < 11) {
    KILN_ASSIGN_OR_RETURN(double min, ctx.FloatAttr("min", -std::numeric_limits<float>::max()));
    KILN_ASSIGN_OR_RETURN(double max, ctx.FloatAttr("max", std::numeric_limits<float>::max()));
    lo = min;
    hi = max;
  } else {
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (!ctx.HasInput(i)) continue;
      KILN_ASSIGN_OR_RETURN(Expr bound, ctx.Input(i));
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tb, ctx.InputTensorType(i));
      if (tb->dtype != tx->dtype) {
        return ctx.Error(absl::StrCat("input ", i, " (", i == 1 ? "min" : "max", ") has dtype ",
                                      DataTypeName(tb->dtype), ", expected ",
                                      DataTypeName(tx->dtype), " like the input"));
      }
      auto count = NumElements(tb->shape);
      if (!count.ok() || *count != 1) {
        return ctx.Error(absl::StrCat("input ", i, " (", i == 1 ? "min" : "max",
                                      ") must be a scalar, got shape ", ShapeToString(tb->shape)));
      }
      TensorData data = ctx.ConstantInput(i);
      std::optional<double> value = data ? ScalarValue(data) : std::nullopt;
      // Integers beyond 2^53 do not survive the double attribute exactly.
      bool exact = value && (IsFloat(tx->dtype) || std::fabs(*value) <= 9007199254740992.0);
      if (exact) {
        (i == 1 ? lo : hi) = *value;
      } else {
        (i == 1 ? dynamic_lo : dynamic_hi) = bound;
      }
    }
  }
  Expr out = x;
  if (lo != -INFINITY || hi != INFINITY || (!dynamic_lo && !dynamic_hi)) {
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("clip", {x}, MakeAttrs({{"a_min", lo}, {"a_max", hi}})));
  }
  if (dynamic_lo) {
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("maximum", {out, dynamic_lo}));
  }
  if (dynamic_hi) {
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("minimum", {out, dynamic_hi}));
  }
  return One(out);
}

}  // namespace

absl::Status RejectOutputsFrom(const ConvertContext& ctx, int index,
                               const std::vector<std::string>& names, const std::string& why) {
  for (int k = index; k < ctx.node().output_size(); ++k) {
    if (ctx.node().output(k).empty()) continue;
    size_t which = static_cast<size_t>(k - index);
    std::string name = which < names.size() ? absl::StrCat(" (", names[which], ")") : "";
    return ctx.Error(absl::StrCat("output ", k, name, " is not supported: ", why));
  }
  return absl::OkStatus();
}

void RegisterNnConverters(ConverterTable& table) {
  RegisterWindowConverters(table);
  table.Add("MatMul", ConvertMatMul);
  table.Add("Gemm", ConvertGemm);
  table.Add("BatchNormalization", ConvertBatchNorm);
  table.Add("InstanceNormalization", ConvertInstanceNorm);
  table.Add("LayerNormalization", ConvertLayerNorm);
  table.Add("MeanVarianceNormalization", ConvertMeanVarianceNorm);
  table.Add("LRN", ConvertLrn);
  table.Add("Softmax", ConvertSoftmaxLike<kSoftmax>);
  table.Add("LogSoftmax", ConvertSoftmaxLike<kLogSoftmax>);
  table.Add("Hardmax", ConvertSoftmaxLike<kHardmax>);
  table.Add("Dropout", ConvertDropout);
  table.Add("PRelu", ConvertPRelu);
  table.Add("HardSigmoid", ConvertHardSigmoid);
  table.Add("HardSwish", ConvertHardSwish);
  table.Add("Selu", ConvertSelu);
  table.Add("Celu", ConvertCelu);
  table.Add("ThresholdedRelu", ConvertThresholdedRelu);
  table.Add("Softsign", ConvertSoftsign);
  table.Add("Shrink", ConvertShrink);
  table.Add("Clip", ConvertClip);
}

}  // namespace kiln::onnx_frontend
