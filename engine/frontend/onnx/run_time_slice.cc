// Slice whose bounds only a run knows. Two cases give a static output shape:
// - ends is starts plus a constant (x[i : i + 1], the way loop bodies index a tensor by the
//   iteration): only the offset moves (XLA's DynamicSlice). Each sliced axis is a `take` of the
//   positions start + [0, size); a negative start counts from the end, as ONNX's; an assert
//   checks that the whole extent fits in the axis (ONNX would clamp it to a shorter slice, a
//   shape other than the one compiled).
// - otherwise the model declares the output's shape: starts, ends, axes and steps are all taken
//   at run time, each axis's bounds clamped exactly as ONNX specifies, its positions start +
//   step * [0, declared extent) taken, and an assert checks that the slice has the declared
//   extent on every axis.
// Either way a run whose bounds ask for another shape fails naming the node, before anything
// reads outside the tensor.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The single argument of `e` when it is a call of a shape-only op (the wrappers ONNX puts around
// a slice bound: Unsqueeze, Reshape, Squeeze, Cast), else null.
const CallNode* ShapeWrapper(const Expr& e) {
  const auto* call = e.as<CallNode>();
  const auto* op = call ? call->op.as<OpNode>() : nullptr;
  if (op == nullptr || call->args.size() != 1) return nullptr;
  for (const char* name : {"expand_dims", "reshape", "squeeze", "cast"}) {
    if (op->name == name) return call;
  }
  return nullptr;
}

// The constant a one-element integer constant holds.
std::optional<int64_t> IntConstant(const Expr& e) {
  const auto* constant = e.as<ConstantNode>();
  if (constant == nullptr || IsFloat(constant->data->dtype)) return std::nullopt;
  std::optional<double> value = ScalarValue(constant->data);
  if (!value) return std::nullopt;
  return static_cast<int64_t>(*value);
}

// ends - starts (one number for every element), when the graph shows it: ends is add(starts,
// c) or add(c, starts) for a constant c, under the same shape-only wrappers.
std::optional<int64_t> KnownDifference(Expr ends, Expr starts) {
  for (int depth = 0; depth < 8; ++depth) {
    if (const auto* add = ends.as<CallNode>();
        add != nullptr && add->op.same_as(GetOp("add")) && add->args.size() == 2) {
      for (int side = 0; side < 2; ++side) {
        if (add->args[side].same_as(starts) || StructuralEqual(add->args[side], starts)) {
          if (std::optional<int64_t> c = IntConstant(add->args[1 - side])) return c;
        }
      }
    }
    const CallNode* outer_end = ShapeWrapper(ends);
    const CallNode* outer_start = ShapeWrapper(starts);
    // One shape-only op between the same types moves elements the same way.
    if (outer_end == nullptr || outer_start == nullptr || !outer_end->op.same_as(outer_start->op) ||
        !StructuralEqual(ends->checked_type, starts->checked_type) ||
        !StructuralEqual(outer_end->args[0]->checked_type, outer_start->args[0]->checked_type)) {
      return std::nullopt;
    }
    ends = outer_end->args[0];
    starts = outer_start->args[0];
  }
  return std::nullopt;
}

// Input `i` (1-D, `count` integers) as int64, or `fallback` when absent.
absl::StatusOr<Expr> Int64Operand(ConvertContext& ctx, size_t i, int64_t count,
                                  const std::vector<int64_t>& fallback, const char* what) {
  if (!ctx.HasInput(i)) return ctx.Constant(Int64Tensor({count}, fallback));
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.Input(i));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  if (type->shape.size() != 1 || type->shape[0] != Dim::Static(count) ||
      (type->dtype != DataType::kInt64 && type->dtype != DataType::kInt32)) {
    return ctx.Error(absl::StrCat("input ", i, " (", what, ") must hold ", count,
                                  " int32 or int64 values, got ", TypeToString(value->checked_type)));
  }
  if (type->dtype == DataType::kInt64) return value;
  return ctx.Call("cast", {value}, MakeAttrs({{"dtype", DataType::kInt64}}));
}

// Builds int64 scalar arithmetic for one slice with the node's span.
class Scalars {
 public:
  explicit Scalars(ConvertContext& ctx) : ctx_(ctx) {}
  Expr Int(int64_t v) { return ctx_.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(v))); }
  absl::StatusOr<Expr> Op(const char* op, Expr a, Expr b) { return ctx_.Call(op, {a, b}); }
  absl::StatusOr<Expr> Where(Expr c, Expr a, Expr b) { return ctx_.Call("where", {c, a, b}); }
  // min(max(v, lo), hi).
  absl::StatusOr<Expr> Clamp(Expr v, int64_t lo, int64_t hi) {
    KILN_ASSIGN_OR_RETURN(Expr above, Op("maximum", v, Int(lo)));
    return Op("minimum", above, Int(hi));
  }
  // v + dim when v is negative.
  absl::StatusOr<Expr> FromEnd(Expr v, int64_t dim) {
    KILN_ASSIGN_OR_RETURN(Expr negative, Op("less", v, Int(0)));
    KILN_ASSIGN_OR_RETURN(Expr shifted, Op("add", v, Int(dim)));
    return Where(negative, shifted, v);
  }

 private:
  ConvertContext& ctx_;
};

// The declared-shape case (see the top of the file).
absl::StatusOr<std::vector<Expr>> SliceToDeclaredShape(ConvertContext& ctx, Expr x,
                                                       const std::vector<int64_t>& shape,
                                                       const std::vector<int64_t>& declared,
                                                       int64_t count) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (static_cast<int64_t>(declared.size()) != rank) {
    return ctx.Error(absl::StrCat("the declared output ", DimsString(declared), " has another rank "
                                  "than the input ", DimsString(shape)));
  }
  std::vector<int64_t> default_axes(count), ones(count, 1);
  for (int64_t k = 0; k < count; ++k) default_axes[k] = k;
  KILN_ASSIGN_OR_RETURN(Expr starts, Int64Operand(ctx, 1, count, {}, "starts"));
  KILN_ASSIGN_OR_RETURN(Expr ends, Int64Operand(ctx, 2, count, {}, "ends"));
  KILN_ASSIGN_OR_RETURN(Expr axes, Int64Operand(ctx, 3, count, default_axes, "axes"));
  KILN_ASSIGN_OR_RETURN(Expr steps, Int64Operand(ctx, 4, count, ones, "steps"));
  Scalars s(ctx);
  KILN_ASSIGN_OR_RETURN(axes, s.FromEnd(axes, rank));
  Expr ok = ctx.Constant(ScalarTensor(DataType::kBool, 1));
  std::vector<std::pair<int64_t, Expr>> takes;  // (axis, positions)
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t dim = shape[a];
    // The entry for axis a: a mask over the entries, each value picked as sum(value * mask).
    KILN_ASSIGN_OR_RETURN(Expr here, s.Op("equal", axes, s.Int(a)));
    KILN_ASSIGN_OR_RETURN(Expr mask, ctx.Call("cast", {here}, MakeAttrs({{"dtype", DataType::kInt64}})));
    auto pick = [&](const Expr& values) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr masked, s.Op("multiply", values, mask));
      return ctx.Call("sum", {masked}, MakeAttrs({{"axis", IntArray({0})}, {"keepdims", false}}));
    };
    KILN_ASSIGN_OR_RETURN(Expr entries, pick(s.Int(1)));
    KILN_ASSIGN_OR_RETURN(Expr listed, s.Op("greater", entries, s.Int(0)));
    KILN_ASSIGN_OR_RETURN(Expr start, pick(starts));
    KILN_ASSIGN_OR_RETURN(Expr end, pick(ends));
    KILN_ASSIGN_OR_RETURN(Expr step, pick(steps));
    KILN_ASSIGN_OR_RETURN(end, s.Where(listed, end, s.Int(dim)));
    KILN_ASSIGN_OR_RETURN(step, s.Where(listed, step, s.Int(1)));
    KILN_ASSIGN_OR_RETURN(Expr step_ok, s.Op("not_equal", step, s.Int(0)));
    KILN_ASSIGN_OR_RETURN(Expr once, s.Op("less_equal", entries, s.Int(1)));
    KILN_ASSIGN_OR_RETURN(step, s.Where(step_ok, step, s.Int(1)));
    // ONNX's clamping: to [0, dim] going forward, [0, dim - 1] (start) and [-1, dim - 1] (end)
    // going backward.
    KILN_ASSIGN_OR_RETURN(start, s.FromEnd(start, dim));
    KILN_ASSIGN_OR_RETURN(end, s.FromEnd(end, dim));
    KILN_ASSIGN_OR_RETURN(Expr forward, s.Op("greater", step, s.Int(0)));
    KILN_ASSIGN_OR_RETURN(Expr start_f, s.Clamp(start, 0, dim));
    KILN_ASSIGN_OR_RETURN(Expr start_b, s.Clamp(start, 0, dim - 1));
    KILN_ASSIGN_OR_RETURN(Expr end_f, s.Clamp(end, 0, dim));
    KILN_ASSIGN_OR_RETURN(Expr end_b, s.Clamp(end, -1, dim - 1));
    KILN_ASSIGN_OR_RETURN(start, s.Where(forward, start_f, start_b));
    KILN_ASSIGN_OR_RETURN(end, s.Where(forward, end_f, end_b));
    // Elements: ceil((end - start) / step), at least 0. Where the quotient is negative it is
    // clamped to 0, so truncating division gives the same count as flooring.
    KILN_ASSIGN_OR_RETURN(Expr distance, s.Op("subtract", end, start));
    KILN_ASSIGN_OR_RETURN(Expr step_less_one, s.Op("subtract", step, s.Int(1)));
    KILN_ASSIGN_OR_RETURN(Expr step_plus_one, s.Op("add", step, s.Int(1)));
    KILN_ASSIGN_OR_RETURN(Expr up, s.Op("add", distance, step_less_one));
    KILN_ASSIGN_OR_RETURN(Expr down, s.Op("add", distance, step_plus_one));
    KILN_ASSIGN_OR_RETURN(Expr rounded, s.Where(forward, up, down));
    KILN_ASSIGN_OR_RETURN(Expr quotient, s.Op("divide", rounded, step));
    KILN_ASSIGN_OR_RETURN(Expr length, s.Op("maximum", quotient, s.Int(0)));
    KILN_ASSIGN_OR_RETURN(Expr as_declared, s.Op("equal", length, s.Int(declared[a])));
    for (const Expr& condition : {step_ok, once, as_declared}) {
      KILN_ASSIGN_OR_RETURN(ok, s.Op("logical_and", ok, condition));
    }
    KILN_RETURN_IF_ERROR(ctx.ChargeBytes(declared[a] * int64_t{sizeof(int64_t)},
                                         absl::StrCat("the positions of axis ", a)));
    std::vector<int64_t> offsets(declared[a]);
    for (int64_t i = 0; i < declared[a]; ++i) offsets[i] = i;
    KILN_ASSIGN_OR_RETURN(Expr strided,
                          s.Op("multiply", step, ctx.Constant(Int64Tensor({declared[a]}, offsets))));
    KILN_ASSIGN_OR_RETURN(Expr positions, s.Op("add", start, strided));
    takes.emplace_back(a, positions);
  }
  // Every take reads positions the check has vetted: the check runs before any of them.
  for (auto& [axis, positions] : takes) {
    KILN_ASSIGN_OR_RETURN(
        positions, GuardCondition(ctx, positions, ok,
                                  absl::StrCat("starts, ends, axes and steps must give the shape ",
                                               DimsString(declared),
                                               " (the shape the model declares and was compiled "
                                               "for)")));
    KILN_ASSIGN_OR_RETURN(x, ctx.Call("take", {x, positions}, MakeAttrs({{"axis", axis}})));
  }
  return Outputs(x);
}

}  // namespace

absl::StatusOr<std::vector<Expr>> ConvertRunTimeStartSlice(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticInputShape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(Expr starts, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr ends, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* starts_type, ctx.InputTensorType(1));
  if (starts_type->shape.size() != 1 || !starts_type->shape[0].is_static() ||
      (starts_type->dtype != DataType::kInt64 && starts_type->dtype != DataType::kInt32)) {
    return ctx.Error("input 1 (starts) must be a 1-D int32 or int64 tensor of static length");
  }
  const int64_t count = starts_type->shape[0].value;
  std::optional<int64_t> size = KnownDifference(ends, starts);
  const bool fixed_axes_and_steps = (!ctx.HasInput(3) || ctx.ConstantInput(3)) &&
                                    (!ctx.HasInput(4) || ctx.ConstantInput(4));
  if (!size || !fixed_axes_and_steps) {
    if (std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0)) {
      return SliceToDeclaredShape(ctx, x, shape, *declared, count);
    }
    return ctx.Error(
        "its bounds are known only at run time, and so is the slice's shape: declare the "
        "output's shape (Kiln compiles it and checks the bounds when the model runs), make ends "
        "starts plus a constant (x[i : i + n]), or give the bounds at compile time");
  }
  std::vector<int64_t> axes(count);
  for (int64_t k = 0; k < count; ++k) axes[k] = k;
  if (ctx.HasInput(3)) {
    KILN_ASSIGN_OR_RETURN(axes, ctx.ConstantInts(3, "axes"));
  }
  if (ctx.HasInput(4)) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> steps, ctx.ConstantInts(4, "steps"));
    for (int64_t step : steps) {
      if (step != 1) return ctx.Error("a slice at a run-time offset takes steps of 1");
    }
  }
  if (static_cast<int64_t>(axes.size()) != count) {
    return ctx.Error(absl::StrCat("input 3 (axes) has ", axes.size(), " entries for ", count,
                                  " starts"));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t k = 0; k < count; ++k) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axes[k], rank));
    const int64_t dim = shape[axis];
    if (*size <= 0 || *size > dim) {
      return ctx.Error(absl::StrCat("the slice's extent ends - starts is ", *size,
                                    ", outside [1, ", dim, "] (axis ", axis, ")"));
    }
    Expr position = ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(k)));
    KILN_ASSIGN_OR_RETURN(Expr start, ctx.Call("take", {starts, position},
                                               MakeAttrs({{"axis", int64_t{0}}})));
    if (starts_type->dtype != DataType::kInt64) {
      KILN_ASSIGN_OR_RETURN(start, ctx.Call("cast", {start},
                                            MakeAttrs({{"dtype", DataType::kInt64}})));
    }
    Expr zero = ctx.Constant(ScalarTensor(DataType::kInt64, 0));
    Expr extent = ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(dim)));
    KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("less", {start, zero}));
    KILN_ASSIGN_OR_RETURN(Expr from_end, ctx.Call("add", {start, extent}));
    KILN_ASSIGN_OR_RETURN(start, ctx.Call("where", {negative, from_end, start}));
    KILN_ASSIGN_OR_RETURN(Expr at_least_zero, ctx.Call("greater_equal", {start, zero}));
    KILN_ASSIGN_OR_RETURN(
        Expr last, ctx.Call("add", {start, ctx.Constant(ScalarTensor(DataType::kInt64,
                                                                     static_cast<double>(*size)))}));
    KILN_ASSIGN_OR_RETURN(Expr fits, ctx.Call("less_equal", {last, extent}));
    KILN_ASSIGN_OR_RETURN(Expr inside, ctx.Call("logical_and", {at_least_zero, fits}));
    KILN_RETURN_IF_ERROR(ctx.ChargeBytes(*size * int64_t{sizeof(int64_t)},
                                         absl::StrCat("the positions of axis ", axis)));
    std::vector<int64_t> offsets(*size);
    for (int64_t i = 0; i < *size; ++i) offsets[i] = i;
    KILN_ASSIGN_OR_RETURN(Expr positions,
                          ctx.Call("add", {start, ctx.Constant(Int64Tensor({*size}, offsets))}));
    KILN_ASSIGN_OR_RETURN(
        positions, GuardCondition(ctx, positions, inside,
                                  absl::StrCat("the slice of ", *size, " along axis ", axis,
                                               " at the run-time start does not fit in its ",
                                               dim, " elements")));
    KILN_ASSIGN_OR_RETURN(x, ctx.Call("take", {x, positions}, MakeAttrs({{"axis", axis}})));
  }
  return Outputs(x);
}

}  // namespace kiln::onnx_frontend
