// Converters for ONNX's reductions. ReduceSum/Mean/Max/Min/Prod map to one
// op; ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare
// expand into several (all carrying the node's span). `axes` is an attribute
// until opset 13 (ReduceSum) or 18 (the others) and a constant input after;
// both forms are read. An empty axes list reduces everything, or nothing when
// noop_with_empty_axes is set.
#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

struct ReduceParams {
  std::vector<int64_t> axes;
  bool keepdims = true;
  bool noop = false;  // empty axes with noop_with_empty_axes: no reduction at all
};

absl::StatusOr<ReduceParams> ReadReduceParams(const ConvertContext& ctx) {
  ReduceParams p;
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes,
                        IntsFromInputOrAttr(ctx, 1, "axes", "axes"));
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, ctx.IntAttr("keepdims", 1));
  KILN_ASSIGN_OR_RETURN(int64_t noop_with_empty_axes, ctx.IntAttr("noop_with_empty_axes", 0));
  p.axes = axes.value_or(std::vector<int64_t>{});
  p.keepdims = keepdims != 0;
  p.noop = p.axes.empty() && noop_with_empty_axes != 0;
  return p;
}

absl::StatusOr<Expr> Reduce(ConvertContext& ctx, const char* op, const Expr& x,
                            const ReduceParams& p, bool keepdims) {
  if (p.noop) return x;
  return ctx.Call(op, {x}, MakeAttrs({{"axis", IntArray(p.axes)}, {"keepdims", keepdims}}));
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
