// Compute definitions of the elementwise family (elementwise.cc): unary math,
// binary arithmetic with numpy broadcasting, comparisons, logic, where, cast,
// clip and leaky_relu. Semantics follow ONNX: Round is half to even, integer
// divide truncates, `mod` is C fmod and `floor_mod` Python's %, Cast to bool
// tests for nonzero. Half-precision math runs in float32. The loop IR's
// value rules (interpreter_values.h) are the reference for the rest.
#include <cmath>
#include <functional>

#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::AsExprs;
using compute::Cast;
using compute::Const;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;
using loop::Intrinsic;

using UnaryFn = std::function<PrimExpr(const PrimExpr&)>;
using BinaryFn = std::function<PrimExpr(const PrimExpr&, const PrimExpr&)>;

PrimExpr Math(Intrinsic intrinsic, const PrimExpr& x) {
  return loop::MakeIntrinsic(intrinsic, {x});
}

PrimExpr Sign(const PrimExpr& x) {
  DataType t = x->type.dtype;
  PrimExpr zero = Const(t, 0);
  if (IsUnsignedInt(t)) return loop::MakeSelect(x > zero, Const(t, 1), zero);
  // NaN is neither above nor below zero nor equal to it, and stays NaN.
  PrimExpr rest = IsFloat(t) ? loop::MakeSelect(loop::Equal(x, zero), zero, x) : zero;
  return loop::MakeSelect(x > zero, Const(t, 1), loop::MakeSelect(x < zero, Const(t, -1), rest));
}

PrimExpr Abs(const PrimExpr& x) {
  DataType t = x->type.dtype;
  if (IsFloat(t)) return Math(Intrinsic::kAbs, x);
  if (IsUnsignedInt(t)) return x;
  return loop::MakeSelect(x < Const(t, 0), Const(t, 0) - x, x);
}

PrimExpr Negative(const PrimExpr& x) {
  DataType t = x->type.dtype;
  // Multiplying keeps the sign of zero (-0.0 for 0.0) like numpy.
  return IsFloat(t) ? x * Const(t, -1) : Const(t, 0) - x;
}

// log(1 + e^x) as max(x, 0) + log(1 + e^-|x|): no overflow for large x.
PrimExpr Softplus(const PrimExpr& x) {
  DataType t = x->type.dtype;
  PrimExpr negative_abs = Const(t, 0) - Math(Intrinsic::kAbs, x);
  return loop::Max(x, Const(t, 0)) +
         Math(Intrinsic::kLog, Const(t, 1) + Math(Intrinsic::kExp, negative_abs));
}

PrimExpr AllOnes(DataType t) {
  // -1 is all ones in two's complement; unsigned maxima are all ones too.
  return IsUnsignedInt(t) ? compute::HighestValue(t) : Const(t, -1);
}

// C fmod: the remainder has the dividend's sign.
PrimExpr TruncMod(const PrimExpr& a, const PrimExpr& b) {
  if (IsFloat(a->type.dtype)) return loop::MakeIntrinsic(Intrinsic::kFmod, {a, b});
  return a - (a / b) * b;
}

// Python %: the remainder has the divisor's sign.
PrimExpr FloorModOf(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a->type.dtype;
  if (!IsFloat(t)) return loop::FloorMod(a, b);
  PrimExpr r = loop::MakeIntrinsic(Intrinsic::kFmod, {a, b});
  PrimExpr zero = Const(t, 0);
  PrimExpr signs_differ = loop::NotEqual(r < zero, b < zero);
  return loop::MakeSelect(loop::NotEqual(r, zero) && signs_differ, r + b, r);
}

// `fn` on the values widened to their compute type, narrowed to `out` after.
PrimExpr InComputeType(DataType out, const std::vector<PrimExpr>& args,
                       const std::function<PrimExpr(const std::vector<PrimExpr>&)>& fn) {
  std::vector<PrimExpr> wide;
  for (const PrimExpr& a : args) wide.push_back(compute::Widen(a));
  return Cast(out, fn(wide));
}

void Unary(OpRegistry& registry, const std::string& op, UnaryFn fn) {
  registry.SetSymbolicCompute(op, [op, fn](const ComputeInput& in) -> absl::StatusOr<std::vector<Tensor>> {
    KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, op));
    KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, op));
    const Tensor& x = in.inputs[0];
    compute::RequireDims(x, result.dims);
    return compute::One(te::ComputeOver(
        compute::ComputeName(op), result.dims, {x},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          return InComputeType(result.dtype, {x(AsExprs(i))},
                               [&](const std::vector<PrimExpr>& v) { return fn(v[0]); });
        },
        "elemwise"));
  });
}

void UnaryIntrinsic(OpRegistry& registry, const std::string& op, Intrinsic intrinsic) {
  Unary(registry, op, [intrinsic](const PrimExpr& x) { return Math(intrinsic, x); });
}

void Binary(OpRegistry& registry, const std::string& op, BinaryFn fn) {
  registry.SetSymbolicCompute(op, [op, fn](const ComputeInput& in) -> absl::StatusOr<std::vector<Tensor>> {
    KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, op));
    KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, op));
    const Tensor& a = in.inputs[0];
    const Tensor& b = in.inputs[1];
    compute::RequireBroadcastable(a, result.dims);
    compute::RequireBroadcastable(b, result.dims);
    return compute::One(te::ComputeOver(
        compute::ComputeName(op), result.dims, {a, b},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<PrimExpr> out = AsExprs(i);
          PrimExpr va = a(compute::BroadcastIndices(a, out));
          PrimExpr vb = b(compute::BroadcastIndices(b, out));
          return InComputeType(result.dtype, {va, vb},
                               [&](const std::vector<PrimExpr>& v) { return fn(v[0], v[1]); });
        },
        "broadcast"));
  });
}

absl::StatusOr<std::vector<Tensor>> WhereCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "where"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "where"));
  const Tensor& cond = in.inputs[0];
  const Tensor& a = in.inputs[1];
  const Tensor& b = in.inputs[2];
  for (const Tensor& t : in.inputs) compute::RequireBroadcastable(t, result.dims);
  return compute::One(te::ComputeOver(
      "T_where", result.dims, {cond, a, b},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<PrimExpr> out = AsExprs(i);
        return loop::MakeSelect(cond(compute::BroadcastIndices(cond, out)),
                                a(compute::BroadcastIndices(a, out)),
                                b(compute::BroadcastIndices(b, out)));
      },
      "broadcast"));
}

absl::StatusOr<std::vector<Tensor>> CastCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "cast"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "cast"));
  const Tensor& x = in.inputs[0];
  compute::RequireDims(x, result.dims);
  return compute::One(te::ComputeOver(
      "T_cast", result.dims, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return compute::ConvertTo(result.dtype, x(AsExprs(i)));
      },
      "elemwise"));
}

// min(max(x, a_min), a_max). For integer dtypes a bound is rounded inward and
// dropped when it lies beyond the dtype's range (no element can cross it).
absl::StatusOr<std::vector<Tensor>> ClipCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "clip"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "clip"));
  double lo = FloatAttr(in.attrs, "a_min");
  double hi = FloatAttr(in.attrs, "a_max");
  const Tensor& x = in.inputs[0];
  compute::RequireDims(x, result.dims);
  DataType t = x.dtype();
  DataType ct = compute::ComputeType(t);
  PrimExpr lo_bound, hi_bound;
  if (IsFloat(t)) {
    if (lo != -INFINITY) lo_bound = Const(ct, lo);
    if (hi != INFINITY) hi_bound = Const(ct, hi);
  } else {
    // The dtype's range as doubles (exact for every integer dtype but the
    // 64-bit extremes, where the comparison errs on keeping the bound).
    double lowest = IsUnsignedInt(t) ? 0.0 : -std::ldexp(1.0, DataTypeBytes(t) * 8 - 1);
    double highest = std::ldexp(1.0, DataTypeBytes(t) * 8 - (IsUnsignedInt(t) ? 0 : 1)) - 1;
    if (std::ceil(lo) > lowest) lo_bound = Const(t, std::ceil(lo));
    if (std::floor(hi) < highest) hi_bound = Const(t, std::floor(hi));
  }
  return compute::One(te::ComputeOver(
      "T_clip", result.dims, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr v = compute::Widen(x(AsExprs(i)));
        if (lo_bound.defined()) v = loop::Max(v, lo_bound);
        if (hi_bound.defined()) v = loop::Min(v, hi_bound);
        return Cast(result.dtype, v);
      },
      "elemwise"));
}

// x if x > 0 else alpha * x.
absl::StatusOr<std::vector<Tensor>> LeakyReluCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "nn.leaky_relu"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::SymbolicResult(in, "nn.leaky_relu"));
  double alpha = FloatAttr(in.attrs, "alpha");
  const Tensor& x = in.inputs[0];
  compute::RequireDims(x, result.dims);
  return compute::One(te::ComputeOver(
      "T_leaky_relu", result.dims, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        PrimExpr v = compute::Widen(x(AsExprs(i)));
        DataType ct = v->type.dtype;
        return Cast(result.dtype, loop::MakeSelect(v > Const(ct, 0), v, v * Const(ct, alpha)));
      },
      "elemwise"));
}

}  // namespace

void RegisterElementwiseComputes(OpRegistry& registry) {
  using I = Intrinsic;
  Unary(registry, "negative", Negative);
  Unary(registry, "abs", Abs);
  Unary(registry, "sign", Sign);
  UnaryIntrinsic(registry, "ceil", I::kCeil);
  UnaryIntrinsic(registry, "floor", I::kFloor);
  // The loop IR defines round as half to even (ONNX Round).
  UnaryIntrinsic(registry, "round", I::kRound);
  UnaryIntrinsic(registry, "exp", I::kExp);
  UnaryIntrinsic(registry, "log", I::kLog);
  UnaryIntrinsic(registry, "sqrt", I::kSqrt);
  UnaryIntrinsic(registry, "rsqrt", I::kRsqrt);
  Unary(registry, "reciprocal", [](const PrimExpr& x) { return Const(x->type.dtype, 1) / x; });
  UnaryIntrinsic(registry, "sigmoid", I::kSigmoid);
  UnaryIntrinsic(registry, "tanh", I::kTanh);
  UnaryIntrinsic(registry, "erf", I::kErf);
  const std::pair<const char*, Intrinsic> trig[] = {
      {"sin", I::kSin},     {"cos", I::kCos},     {"tan", I::kTan},    {"asin", I::kAsin},
      {"acos", I::kAcos},   {"atan", I::kAtan},   {"sinh", I::kSinh},  {"cosh", I::kCosh},
      {"asinh", I::kAsinh}, {"acosh", I::kAcosh}, {"atanh", I::kAtanh}};
  for (const auto& [name, intrinsic] : trig) UnaryIntrinsic(registry, name, intrinsic);
  Unary(registry, "nn.relu",
        [](const PrimExpr& x) { return loop::Max(x, Const(x->type.dtype, 0)); });
  Unary(registry, "softplus", Softplus);
  Unary(registry, "logical_not", [](const PrimExpr& x) { return loop::MakeNot(x); });
  Unary(registry, "bitwise_not", [](const PrimExpr& x) {
    return loop::MakeBinary(loop::BinaryOp::kBitXor, x, AllOnes(x->type.dtype));
  });
  UnaryIntrinsic(registry, "isnan", I::kIsNan);
  UnaryIntrinsic(registry, "isinf", I::kIsInf);
  Unary(registry, "isfinite",
        [](const PrimExpr& x) { return loop::MakeNot(Math(I::kIsNan, x) || Math(I::kIsInf, x)); });

  Binary(registry, "add", [](const PrimExpr& a, const PrimExpr& b) { return a + b; });
  Binary(registry, "subtract", [](const PrimExpr& a, const PrimExpr& b) { return a - b; });
  Binary(registry, "multiply", [](const PrimExpr& a, const PrimExpr& b) { return a * b; });
  Binary(registry, "divide", [](const PrimExpr& a, const PrimExpr& b) { return a / b; });
  // Integer pow multiplies exactly in the loop IR (wrapping like numpy).
  Binary(registry, "power", [](const PrimExpr& a, const PrimExpr& b) {
    return loop::MakeIntrinsic(Intrinsic::kPow, {a, b});
  });
  Binary(registry, "maximum", [](const PrimExpr& a, const PrimExpr& b) { return loop::Max(a, b); });
  Binary(registry, "minimum", [](const PrimExpr& a, const PrimExpr& b) { return loop::Min(a, b); });
  Binary(registry, "mod", TruncMod);
  Binary(registry, "floor_mod", FloorModOf);
  const std::pair<const char*, loop::BinaryOp> bitwise[] = {
      {"bitwise_and", loop::BinaryOp::kBitAnd},
      {"bitwise_or", loop::BinaryOp::kBitOr},
      {"bitwise_xor", loop::BinaryOp::kBitXor},
      {"left_shift", loop::BinaryOp::kShiftLeft},
      {"right_shift", loop::BinaryOp::kShiftRight},
      {"logical_and", loop::BinaryOp::kAnd},
      {"logical_or", loop::BinaryOp::kOr},
      {"logical_xor", loop::BinaryOp::kNE},
      {"equal", loop::BinaryOp::kEQ},
      {"not_equal", loop::BinaryOp::kNE},
      {"less", loop::BinaryOp::kLT},
      {"less_equal", loop::BinaryOp::kLE},
      {"greater", loop::BinaryOp::kGT},
      {"greater_equal", loop::BinaryOp::kGE}};
  for (const auto& [name, op] : bitwise) {
    Binary(registry, name,
           [op = op](const PrimExpr& a, const PrimExpr& b) { return loop::MakeBinary(op, a, b); });
  }
  registry.SetSymbolicCompute("where", WhereCompute);
  registry.SetSymbolicCompute("cast", CastCompute);
  registry.SetSymbolicCompute("clip", ClipCompute);
  registry.SetSymbolicCompute("nn.leaky_relu", LeakyReluCompute);
}

}  // namespace kiln
