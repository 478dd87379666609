// Pad whose pads only a run knows, compiled to the output shape the model declares: per axis,
// output position i reads input position i - begin (a negative begin crops, as ONNX allows),
// taken where it falls inside the input and, outside it, the pad value (constant), the nearest
// edge element (edge) or the mirrored element (reflect). An assert checks that begin + end
// gives the declared extent on every axis (and, for reflect, that no pad reaches past the
// mirror), before any take reads the positions.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/nn_converters.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

absl::StatusOr<Expr> PadToDeclaredShape(ConvertContext& ctx, const Expr& input,
                                        const std::string& mode, const Expr& value) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "pads"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticInputShape(ctx, 0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (static_cast<int64_t>(declared.size()) != rank) {
    return ctx.Error(absl::StrCat("the declared output ", DimsString(declared),
                                  " has another rank than the input ", DimsString(shape)));
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    return ctx.Error(absl::StrCat("mode '", mode, "' with pads known only at run time is not "
                                  "supported (constant, edge, reflect)"));
  }
  KILN_ASSIGN_OR_RETURN(Expr pads, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* pads_type, ctx.InputTensorType(1));
  if (pads_type->shape.size() != 1 || pads_type->shape[0] != Dim::Static(2 * rank) ||
      (pads_type->dtype != DataType::kInt64 && pads_type->dtype != DataType::kInt32)) {
    return ctx.Error(absl::StrCat("input 1 (pads) must hold ", 2 * rank,
                                  " int32 or int64 values, got ", TypeToString(pads->checked_type)));
  }
  if (pads_type->dtype != DataType::kInt64) {
    KILN_ASSIGN_OR_RETURN(pads, ctx.Call("cast", {pads}, MakeAttrs({{"dtype", DataType::kInt64}})));
  }
  auto scalar = [&](int64_t v) {
    return ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(v)));
  };
  auto op = [&](const char* name, Expr a, Expr b) { return ctx.Call(name, {a, b}); };
  Expr ok = ctx.Constant(ScalarTensor(DataType::kBool, 1));
  struct AxisTake {
    Expr positions;  // where each output position reads, inside the input
    Expr inside;     // constant mode: whether it reads the input at all
  };
  std::vector<AxisTake> takes(rank);
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t dim = shape[a];
    if (dim == 0 || declared[a] == 0) {
      return ctx.Error(absl::StrCat("axis ", a, " of the input or the declared output is empty; "
                                    "pads known only at run time need both nonempty"));
    }
    KILN_ASSIGN_OR_RETURN(Expr begin, ctx.Call("take", {pads, scalar(a)}, MakeAttrs({{"axis", int64_t{0}}})));
    KILN_ASSIGN_OR_RETURN(Expr end,
                          ctx.Call("take", {pads, scalar(a + rank)}, MakeAttrs({{"axis", int64_t{0}}})));
    KILN_ASSIGN_OR_RETURN(Expr total, op("add", begin, end));
    KILN_ASSIGN_OR_RETURN(Expr as_declared, op("equal", total, scalar(declared[a] - dim)));
    KILN_ASSIGN_OR_RETURN(ok, op("logical_and", ok, as_declared));
    if (mode == "reflect") {
      KILN_ASSIGN_OR_RETURN(Expr begin_fits, op("less", begin, scalar(dim)));
      KILN_ASSIGN_OR_RETURN(Expr end_fits, op("less", end, scalar(dim)));
      KILN_ASSIGN_OR_RETURN(ok, op("logical_and", ok, begin_fits));
      KILN_ASSIGN_OR_RETURN(ok, op("logical_and", ok, end_fits));
    }
    KILN_RETURN_IF_ERROR(ctx.ChargeBytes(declared[a] * int64_t{sizeof(int64_t)},
                                         absl::StrCat("the positions of axis ", a)));
    std::vector<int64_t> iota(declared[a]);
    for (int64_t i = 0; i < declared[a]; ++i) iota[i] = i;
    KILN_ASSIGN_OR_RETURN(Expr p, op("subtract", ctx.Constant(Int64Tensor({declared[a]}, iota)), begin));
    if (mode == "constant") {
      KILN_ASSIGN_OR_RETURN(Expr not_before, op("greater_equal", p, scalar(0)));
      KILN_ASSIGN_OR_RETURN(Expr not_after, op("less", p, scalar(dim)));
      KILN_ASSIGN_OR_RETURN(takes[a].inside, op("logical_and", not_before, not_after));
    } else if (mode == "reflect") {
      // Mirrored about the first and the last element: -p before, 2 (dim - 1) - p after.
      KILN_ASSIGN_OR_RETURN(Expr before, op("less", p, scalar(0)));
      KILN_ASSIGN_OR_RETURN(Expr mirrored_before, op("subtract", scalar(0), p));
      KILN_ASSIGN_OR_RETURN(p, ctx.Call("where", {before, mirrored_before, p}));
      KILN_ASSIGN_OR_RETURN(Expr after, op("greater_equal", p, scalar(dim)));
      KILN_ASSIGN_OR_RETURN(Expr mirrored_after, op("subtract", scalar(2 * (dim - 1)), p));
      KILN_ASSIGN_OR_RETURN(p, ctx.Call("where", {after, mirrored_after, p}));
    }
    // Edge reads the nearest element; every mode stays inside the input.
    KILN_ASSIGN_OR_RETURN(Expr above, op("maximum", p, scalar(0)));
    KILN_ASSIGN_OR_RETURN(takes[a].positions, op("minimum", above, scalar(std::max<int64_t>(dim - 1, 0))));
  }
  Expr x = input;
  for (int64_t a = 0; a < rank; ++a) {
    KILN_ASSIGN_OR_RETURN(
        Expr positions,
        GuardCondition(ctx, takes[a].positions, ok,
                       absl::StrCat("pads must give the shape ", DimsString(declared),
                                    " (the shape the model declares and was compiled for)")));
    KILN_ASSIGN_OR_RETURN(x, ctx.Call("take", {x, positions}, MakeAttrs({{"axis", a}})));
    if (takes[a].inside) {
      std::vector<int64_t> column(rank, 1);
      column[a] = declared[a];
      KILN_ASSIGN_OR_RETURN(Expr inside, ctx.Call("reshape", {takes[a].inside},
                                                  MakeAttrs({{"newshape", IntArray(column)}})));
      KILN_ASSIGN_OR_RETURN(x, ctx.Call("where", {inside, x, value}));
    }
  }
  return x;
}

}  // namespace kiln::onnx_frontend
