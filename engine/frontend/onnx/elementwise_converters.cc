// Converters for ONNX's elementwise and broadcast operators: unary math,
// binary arithmetic (numpy broadcasting is the op's own), comparisons, logic,
// casts, and the activations that expand into several graph ops.
#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_folding.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertUnary(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call(kOp, {x}));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));  // Neg, Abs of shape values
  return std::vector<Expr>{out};
}

template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertBinary(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call(kOp, {a, b}));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));  // integer shape arithmetic
  return std::vector<Expr>{out};
}

// Variadic ops (Sum, Max, Min, Mean) fold pairwise, left to right.
template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertVariadic(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr acc, ctx.Input(0));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr next, ctx.Input(i));
    KILN_ASSIGN_OR_RETURN(acc, ctx.Call(kOp, {acc, next}));
  }
  return std::vector<Expr>{acc};
}

constexpr char kNegative[] = "negative", kAbs[] = "abs", kSign[] = "sign", kCeil[] = "ceil",
               kFloor[] = "floor", kRound[] = "round", kExp[] = "exp", kLog[] = "log",
               kSqrt[] = "sqrt", kReciprocal[] = "reciprocal", kSigmoid[] = "sigmoid",
               kTanh[] = "tanh", kErf[] = "erf", kSin[] = "sin", kCos[] = "cos", kTan[] = "tan",
               kAsin[] = "asin", kAcos[] = "acos", kAtan[] = "atan", kSinh[] = "sinh",
               kCosh[] = "cosh", kAsinh[] = "asinh", kAcosh[] = "acosh", kAtanh[] = "atanh",
               kRelu[] = "nn.relu", kSoftplus[] = "softplus", kNot[] = "logical_not",
               kIsNaN[] = "isnan";
constexpr char kAdd[] = "add", kSub[] = "subtract", kMul[] = "multiply", kDiv[] = "divide",
               kMax[] = "maximum", kMin[] = "minimum", kEqual[] = "equal",
               kLess[] = "less", kLessEqual[] = "less_equal", kGreater[] = "greater",
               kGreaterEqual[] = "greater_equal", kAnd[] = "logical_and", kOr[] = "logical_or",
               kXor[] = "logical_xor";

absl::StatusOr<std::vector<Expr>> ConvertIdentity(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  return std::vector<Expr>{x};
}

absl::StatusOr<std::vector<Expr>> ConvertMean(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> sum, ConvertVariadic<kAdd>(ctx));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(0));
  Expr count = ctx.Constant(ScalarTensor(t->dtype, static_cast<double>(ctx.num_inputs())));
  KILN_ASSIGN_OR_RETURN(Expr mean, ctx.Call("divide", {sum[0], count}));
  return std::vector<Expr>{mean};
}

// ONNX Pow lets the exponent have another dtype than the base; the graph op
// takes one dtype, so the exponent is cast to the base's.
absl::StatusOr<std::vector<Expr>> ConvertPow(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr base, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr exponent, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* base_type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* exp_type, ctx.InputTensorType(1));
  if (exp_type->dtype != base_type->dtype) {
    KILN_ASSIGN_OR_RETURN(exponent, ctx.Call("cast", {exponent},
                                             MakeAttrs({{"dtype", base_type->dtype}})));
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("power", {base, exponent}));
  return std::vector<Expr>{out};
}

absl::StatusOr<std::vector<Expr>> ConvertBitShift(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::string direction, ctx.StringAttr("direction", std::nullopt));
  if (direction != "LEFT" && direction != "RIGHT") {
    return ctx.Error(absl::StrCat("attribute 'direction' is '", direction,
                                  "', expected LEFT or RIGHT"));
  }
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call(direction == "LEFT" ? "left_shift" : "right_shift", {a, b}));
  return std::vector<Expr>{out};
}

// IsInf with detect_positive / detect_negative: isinf, narrowed by the sign.
absl::StatusOr<std::vector<Expr>> ConvertIsInf(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(int64_t positive, ctx.IntAttr("detect_positive", 1));
  KILN_ASSIGN_OR_RETURN(int64_t negative, ctx.IntAttr("detect_negative", 1));
  KILN_ASSIGN_OR_RETURN(Expr inf, ctx.Call("isinf", {x}));
  if (positive && negative) return std::vector<Expr>{inf};
  if (!positive && !negative) {
    KILN_ASSIGN_OR_RETURN(Expr none, ctx.Call("logical_and", {inf, ctx.Constant(MakeScalar(false))}));
    return std::vector<Expr>{none};
  }
  Expr zero = ctx.Constant(ScalarTensor(t->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr side, ctx.Call(positive ? "greater" : "less", {x, zero}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("logical_and", {inf, side}));
  return std::vector<Expr>{out};
}

absl::StatusOr<std::vector<Expr>> ConvertMod(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t fmod, ctx.IntAttr("fmod", 0));
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call(fmod ? "mod" : "floor_mod", {a, b}));
  return std::vector<Expr>{out};
}

absl::StatusOr<std::vector<Expr>> ConvertCast(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t to, ctx.IntAttr("to", std::nullopt));
  auto dtype = DataTypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype.ok()) return ctx.Error(absl::StrCat("attribute 'to': ", dtype.status().message()));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("cast", {x}, MakeAttrs({{"dtype", *dtype}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return std::vector<Expr>{out};
}

// CastLike(x, like): cast to the dtype of the second input.
absl::StatusOr<std::vector<Expr>> ConvertCastLike(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* like, ctx.InputTensorType(1));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("cast", {x}, MakeAttrs({{"dtype", like->dtype}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return std::vector<Expr>{out};
}

absl::StatusOr<std::vector<Expr>> ConvertWhere(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr c, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr a, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr b, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {c, a, b}));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return std::vector<Expr>{out};
}

absl::StatusOr<std::vector<Expr>> ConvertLeakyRelu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 0.01f));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("nn.leaky_relu", {x}, MakeAttrs({{"alpha", double{alpha}}})));
  return std::vector<Expr>{out};
}

// Elu(x) = x if x > 0 else alpha * (exp(x) - 1): one ONNX node, five graph ops,
// every one carrying the node's span.
absl::StatusOr<std::vector<Expr>> ConvertElu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 1.0f));
  Expr zero = ctx.Constant(ScalarTensor(t->dtype, 0));
  Expr one = ctx.Constant(ScalarTensor(t->dtype, 1));
  KILN_ASSIGN_OR_RETURN(Expr positive, ctx.Call("greater", {x, zero}));
  KILN_ASSIGN_OR_RETURN(Expr exp, ctx.Call("exp", {x}));
  KILN_ASSIGN_OR_RETURN(Expr expm1, ctx.Call("subtract", {exp, one}));
  KILN_ASSIGN_OR_RETURN(Expr scaled,
                        ctx.Call("multiply", {expm1, ctx.Constant(ScalarTensor(t->dtype, alpha))}));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("where", {positive, x, scaled}));
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterElementwiseConverters(ConverterTable& table) {
  table.Add("Neg", ConvertUnary<kNegative>);
  table.Add("Abs", ConvertUnary<kAbs>);
  table.Add("Sign", ConvertUnary<kSign>);
  table.Add("Ceil", ConvertUnary<kCeil>);
  table.Add("Floor", ConvertUnary<kFloor>);
  table.Add("Round", ConvertUnary<kRound>);
  table.Add("Exp", ConvertUnary<kExp>);
  table.Add("Log", ConvertUnary<kLog>);
  table.Add("Sqrt", ConvertUnary<kSqrt>);
  table.Add("Reciprocal", ConvertUnary<kReciprocal>);
  table.Add("Sigmoid", ConvertUnary<kSigmoid>);
  table.Add("Tanh", ConvertUnary<kTanh>);
  table.Add("Erf", ConvertUnary<kErf>);
  table.Add("Sin", ConvertUnary<kSin>);
  table.Add("Cos", ConvertUnary<kCos>);
  table.Add("Tan", ConvertUnary<kTan>);
  table.Add("Asin", ConvertUnary<kAsin>);
  table.Add("Acos", ConvertUnary<kAcos>);
  table.Add("Atan", ConvertUnary<kAtan>);
  table.Add("Sinh", ConvertUnary<kSinh>);
  table.Add("Cosh", ConvertUnary<kCosh>);
  table.Add("Asinh", ConvertUnary<kAsinh>);
  table.Add("Acosh", ConvertUnary<kAcosh>);
  table.Add("Atanh", ConvertUnary<kAtanh>);
  table.Add("Relu", ConvertUnary<kRelu>);
  table.Add("Softplus", ConvertUnary<kSoftplus>);
  table.Add("Not", ConvertUnary<kNot>);
  table.Add("IsNaN", ConvertUnary<kIsNaN>);
  table.Add("Identity", ConvertIdentity);

  table.Add("Add", ConvertBinary<kAdd>);
  table.Add("Sub", ConvertBinary<kSub>);
  table.Add("Mul", ConvertBinary<kMul>);
  table.Add("Div", ConvertBinary<kDiv>);
  table.Add("Pow", ConvertPow);
  table.Add("IsInf", ConvertIsInf);
  table.Add("BitShift", ConvertBitShift);
  table.Add("Equal", ConvertBinary<kEqual>);
  table.Add("Less", ConvertBinary<kLess>);
  table.Add("LessOrEqual", ConvertBinary<kLessEqual>);
  table.Add("Greater", ConvertBinary<kGreater>);
  table.Add("GreaterOrEqual", ConvertBinary<kGreaterEqual>);
  table.Add("And", ConvertBinary<kAnd>);
  table.Add("Or", ConvertBinary<kOr>);
  table.Add("Xor", ConvertBinary<kXor>);
  table.Add("Sum", ConvertVariadic<kAdd>);
  table.Add("Max", ConvertVariadic<kMax>);
  table.Add("Min", ConvertVariadic<kMin>);
  table.Add("Mean", ConvertMean);
  table.Add("Mod", ConvertMod);
  table.Add("Cast", ConvertCast);
  table.Add("CastLike", ConvertCastLike);
  table.Add("Where", ConvertWhere);
  table.Add("LeakyRelu", ConvertLeakyRelu);
  table.Add("Elu", ConvertElu);
}

}  // namespace kiln::onnx_frontend
