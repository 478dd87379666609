// Converters for ONNX's reductions. ReduceSum/Mean/Max/Min/Prod map to one
// op; ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare
// expand into several (all carrying the node's span). `axes` is an attribute
// until opset 13 (ReduceSum) or 18 (the others) and a constant input after;
// both forms are read. An empty axes list reduces everything, or nothing when
// noop_with_empty_axes is set.
#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

struct ReduceParams {
  std::vector<int64_t> axes;
  bool keepdims = true;
  bool noop = false;  // empty axes with noop_with_empty_axes: no reduction at all
  // Axes known only at run time: the rule they must follow for the declared output shape.
  std::optional<OperandRule> runtime_axes;
  // When the declared shape leaves the axes open ([3, 2, 2] -> [3, 2] reduces axis 1 or 2
  // without keepdims): every way it may reduce, by the axes of extent above 1 it reduces; the
  // run picks the one whose axes the operand lists. Empty otherwise.
  std::vector<std::vector<int64_t>> alternatives;
};

// At most this many ways of reducing are compiled for one node whose axes only a run knows.
constexpr size_t kMaxReduceAlternatives = 8;

// The axes of `axes` whose extent in `in` is above 1: what a reduction really reduces.
std::vector<int64_t> AboveOne(const std::vector<int64_t>& in, const std::vector<int64_t>& axes) {
  std::vector<int64_t> kept;
  for (int64_t a : axes) {
    if (in[a] != 1) kept.push_back(a);
  }
  return kept;
}

// Axes known only at run time (a non-empty input): those that give the output shape the model
// declares. With keepdims every such set reduces the same axes of extent above 1; without, the
// declared shape may leave that open ([3, 2, 2] -> [3, 2] could reduce axis 1 or 2): then
// `alternatives` lists each way (at most kMaxReduceAlternatives).
absl::StatusOr<std::vector<int64_t>> DeclaredReduceAxes(
    const ConvertContext& ctx, int64_t count, bool keepdims, OperandRule* rule,
    std::vector<std::vector<int64_t>>* alternatives) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "axes"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> in, StaticInputShape(ctx, 0));
  auto gives = [&](const std::vector<int64_t>& axes) {
    std::vector<int64_t> out;
    size_t next = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      bool reduced = next < axes.size() && axes[next] == static_cast<int64_t>(d);
      if (reduced) ++next;
      if (!reduced || keepdims) out.push_back(reduced ? 1 : in[d]);
    }
    return out == declared;
  };
  std::vector<std::vector<int64_t>> accepted;
  KILN_ASSIGN_OR_RETURN(*rule, AxesRule(ctx, count, static_cast<int64_t>(in.size()), gives, &accepted));
  std::vector<std::vector<int64_t>> ways = {accepted[0]};
  for (const std::vector<int64_t>& axes : accepted) {
    bool known = false;
    for (const std::vector<int64_t>& way : ways) known |= AboveOne(in, way) == AboveOne(in, axes);
    if (!known) ways.push_back(axes);
  }
  if (ways.size() > kMaxReduceAlternatives) {
    return ctx.Error(absl::StrCat("the declared output ", DimsString(declared),
                                  " leaves ", ways.size(), " ways of reducing ", DimsString(in),
                                  " open (at most ", kMaxReduceAlternatives,
                                  " are compiled): give input 1 (axes) at compile time"));
  }
  if (ways.size() > 1) *alternatives = ways;
  return accepted[0];
}

absl::StatusOr<ReduceParams> ReadReduceParams(const ConvertContext& ctx) {
  ReduceParams p;
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, ctx.IntAttr("keepdims", 1));
  KILN_ASSIGN_OR_RETURN(int64_t noop_with_empty_axes, ctx.IntAttr("noop_with_empty_axes", 0));
  p.keepdims = keepdims != 0;
  if (KnownOnlyAtRunTime(ctx, 1)) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(1));
    if (type->shape.size() != 1 || !type->shape[0].is_static()) {
      return ctx.Error("input 1 (axes) must be 1-D of static length");
    }
    // An empty axes input holds no value to wait for.
    if (type->shape[0].value > 0) {
      OperandRule rule;
      KILN_ASSIGN_OR_RETURN(p.axes, DeclaredReduceAxes(ctx, type->shape[0].value, p.keepdims,
                                                       &rule, &p.alternatives));
      p.runtime_axes = std::move(rule);
    }
  } else {
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes,
                          IntsFromInputOrAttr(ctx, 1, "axes", "axes"));
    p.axes = axes.value_or(std::vector<int64_t>{});
  }
  p.noop = p.axes.empty() && noop_with_empty_axes != 0;
  return p;
}

// Whether the axes operand (input 1, which the guard holds to the accepted sets) lists every
// one of `axes`, negative entries counted from `rank`.
absl::StatusOr<Expr> ListsEvery(ConvertContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  KILN_ASSIGN_OR_RETURN(Expr operand, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(operand, ctx.Call("cast", {operand}, MakeAttrs({{"dtype", DataType::kInt64}})));
  auto scalar = [&](int64_t v) {
    return ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(v)));
  };
  KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("less", {operand, scalar(0)}));
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("add", {operand, scalar(rank)}));
  KILN_ASSIGN_OR_RETURN(operand, ctx.Call("where", {negative, shifted, operand}));
  Expr all = ctx.Constant(ScalarTensor(DataType::kBool, 1));
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(Expr here, ctx.Call("equal", {operand, scalar(a)}));
    KILN_ASSIGN_OR_RETURN(here, ctx.Call("cast", {here}, MakeAttrs({{"dtype", DataType::kInt64}})));
    KILN_ASSIGN_OR_RETURN(Expr count, ctx.Call("sum", {here}, MakeAttrs({{"axis", IntArray({0})},
                                                                         {"keepdims", false}})));
    KILN_ASSIGN_OR_RETURN(Expr listed, ctx.Call("greater", {count, scalar(0)}));
    KILN_ASSIGN_OR_RETURN(all, ctx.Call("logical_and", {all, listed}));
  }
  return all;
}

absl::StatusOr<Expr> Reduce(ConvertContext& ctx, const char* op, const Expr& x,
                            const ReduceParams& p, bool keepdims) {
  if (p.noop) return x;
  KILN_ASSIGN_OR_RETURN(
      Expr out, ctx.Call(op, {x}, MakeAttrs({{"axis", IntArray(p.axes)}, {"keepdims", keepdims}})));
  // Each other way of reducing, taken where the operand lists its axes (the ways differ in the
  // axes above 1 they reduce, and the guard keeps the operand to one of them).
  const auto* type = x->checked_type.as<TensorTypeNode>();
  for (size_t k = 1; k < p.alternatives.size() && type != nullptr; ++k) {
    std::vector<int64_t> in;
    for (const Dim& d : type->shape) in.push_back(d.is_static() ? d.value : -1);
    KILN_ASSIGN_OR_RETURN(Expr other, ctx.Call(op, {x}, MakeAttrs({{"axis", IntArray(p.alternatives[k])},
                                                                   {"keepdims", keepdims}})));
    KILN_ASSIGN_OR_RETURN(Expr chosen, ListsEvery(ctx, AboveOne(in, p.alternatives[k]),
                                                  static_cast<int64_t>(in.size())));
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("where", {chosen, other, out}));
  }
  if (!p.runtime_axes) return out;
  return GuardOperand(ctx, out, 1, *p.runtime_axes, "list axes that give the declared shape");
}

template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertReduce(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr out, Reduce(ctx, kOp, x, p, p.keepdims));
  return Outputs(out);
}

constexpr char kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min", kProd[] = "prod";

// sum(|x|)
absl::StatusOr<std::vector<Expr>> ConvertReduceL1(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr abs, ctx.Call("abs", {x}));
  KILN_ASSIGN_OR_RETURN(Expr out, Reduce(ctx, kSum, abs, p, p.keepdims));
  return Outputs(out);
}

// sum(x * x), and its square root for L2.
absl::StatusOr<Expr> SumSquare(ConvertContext& ctx, const ReduceParams& p) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr square, ctx.Call("multiply", {x, x}));
  return Reduce(ctx, kSum, square, p, p.keepdims);
}

absl::StatusOr<std::vector<Expr>> ConvertReduceSumSquare(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr out, SumSquare(ctx, p));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertReduceL2(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr sum, SumSquare(ctx, p));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("sqrt", {sum}));
  return Outputs(out);
}

// log(sum(x))
absl::StatusOr<std::vector<Expr>> ConvertReduceLogSum(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr sum, Reduce(ctx, kSum, x, p, p.keepdims));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("log", {sum}));
  return Outputs(out);
}

// log(sum(exp(x - m))) + m with m = max(x): exp never overflows, since every
// exponent is <= 0. The shift keeps reduced axes so it broadcasts against x.
absl::StatusOr<std::vector<Expr>> ConvertReduceLogSumExp(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(ReduceParams p, ReadReduceParams(ctx));
  KILN_ASSIGN_OR_RETURN(Expr shift, Reduce(ctx, kMax, x, p, /*keepdims=*/true));
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("subtract", {x, shift}));
  KILN_ASSIGN_OR_RETURN(Expr exp, ctx.Call("exp", {shifted}));
  KILN_ASSIGN_OR_RETURN(Expr sum, Reduce(ctx, kSum, exp, p, p.keepdims));
  KILN_ASSIGN_OR_RETURN(Expr log, ctx.Call("log", {sum}));
  Expr max = shift;
  if (!p.keepdims) {
    KILN_ASSIGN_OR_RETURN(max, Reduce(ctx, kMax, x, p, /*keepdims=*/false));
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("add", {log, max}));
  return Outputs(out);
}

template <const char* kOp>
absl::StatusOr<std::vector<Expr>> ConvertArgReduce(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, ctx.IntAttr("keepdims", 1));
  KILN_ASSIGN_OR_RETURN(int64_t select_last_index, ctx.IntAttr("select_last_index", 0));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call(kOp, {x},
                                 MakeAttrs({{"axis", axis},
                                            {"keepdims", keepdims != 0},
                                            {"select_last_index", select_last_index != 0}})));
  return Outputs(out);
}

constexpr char kArgMax[] = "argmax", kArgMin[] = "argmin";

}  // namespace

void RegisterReduceConverters(ConverterTable& table) {
  table.Add("ReduceSum", ConvertReduce<kSum>);
  table.Add("ReduceMean", ConvertReduce<kMean>);
  table.Add("ReduceMax", ConvertReduce<kMax>);
  table.Add("ReduceMin", ConvertReduce<kMin>);
  table.Add("ReduceProd", ConvertReduce<kProd>);
  table.Add("ReduceL1", ConvertReduceL1);
  table.Add("ReduceL2", ConvertReduceL2);
  table.Add("ReduceLogSum", ConvertReduceLogSum);
  table.Add("ReduceLogSumExp", ConvertReduceLogSumExp);
  table.Add("ReduceSumSquare", ConvertReduceSumSquare);
  table.Add("ArgMax", ConvertArgReduce<kArgMax>);
  table.Add("ArgMin", ConvertArgReduce<kArgMin>);
}

}  // namespace kiln::onnx_frontend
