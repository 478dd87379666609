// Converters for ONNX's indexing, scattering, sorting and data-dependent
// operators: Gather, GatherElements, GatherND, ScatterElements (and its old
// name Scatter), ScatterND, OneHot, TopK, CumSum, Trilu, EyeLike,
// ReverseSequence, NonZero, Unique and Compress (NonZero and Unique of known data fold at
// import: known_value_folding.h).
#include <numeric>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/known_value_folding.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/shape_folding.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

absl::StatusOr<std::vector<Expr>> ConvertGather(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr data, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("take", {data, indices}, MakeAttrs({{"axis", axis}})));
  // Shape(x)[i] of a static dim i folds even when x has symbolic dims.
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertGatherElements(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr data, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("gather_elements", {data, indices}, MakeAttrs({{"axis", axis}})));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertGatherND(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr data, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(int64_t batch_dims, ctx.IntAttr("batch_dims", 0));
  KILN_ASSIGN_OR_RETURN(
      Expr out, ctx.Call("gather_nd", {data, indices}, MakeAttrs({{"batch_dims", batch_dims}})));
  return Outputs(out);
}

// Opset 16 added reductions to the scatters (add, mul; 18: max, min).
absl::StatusOr<std::string> ScatterReduction(const ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::string reduction, ctx.StringAttr("reduction", "none"));
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
      reduction != "min") {
    return ctx.Error(absl::StrCat("attribute 'reduction' is '", reduction,
                                  "', expected none, add, mul, max or min"));
  }
  return reduction;
}

absl::StatusOr<std::vector<Expr>> ConvertScatterElements(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::string reduction, ScatterReduction(ctx));
  KILN_ASSIGN_OR_RETURN(Expr data, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr updates, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("scatter_elements", {data, indices, updates},
                                           MakeAttrs({{"axis", axis}, {"reduction", reduction}})));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertScatterND(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::string reduction, ScatterReduction(ctx));
  KILN_ASSIGN_OR_RETURN(Expr data, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr updates, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("scatter_nd", {data, indices, updates},
                                           MakeAttrs({{"reduction", reduction}})));
  return Outputs(out);
}

// OneHot(indices, depth, values = [off, on]). Float indices are truncated to
// int64 as the spec says; on and off become scalar arguments.
absl::StatusOr<std::vector<Expr>> ConvertOneHot(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* indices_type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(Expr values, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* values_type, ctx.InputTensorType(2));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", -1));
  // A depth known only at run time: the extent the output is declared with there, checked.
  std::optional<int64_t> runtime_depth;
  int64_t depth = 0;
  if (KnownOnlyAtRunTime(ctx, 1)) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "depth"));
    const int64_t rank = static_cast<int64_t>(declared.size());
    if (rank != static_cast<int64_t>(indices_type->shape.size()) + 1 || axis < -rank || axis >= rank) {
      return ctx.Error(absl::StrCat("the output is declared ", DimsString(declared),
                                    ", not of the indices' rank plus one with axis ", axis));
    }
    depth = declared[axis < 0 ? axis + rank : axis];
    runtime_depth = depth;
  } else {
    KILN_ASSIGN_OR_RETURN(depth, ConstantScalarInt(ctx, 1, "depth"));
  }
  if (values_type->shape.size() != 1 || values_type->shape[0] != Dim::Static(2)) {
    return ctx.Error("input 2 (values) must be a 1-D tensor of two elements [off, on]");
  }
  if (IsFloat(indices_type->dtype)) {
    KILN_ASSIGN_OR_RETURN(indices,
                          ctx.Call("cast", {indices}, MakeAttrs({{"dtype", DataType::kInt64}})));
  }
  std::vector<Expr> off_on;
  for (int64_t i = 0; i < 2; ++i) {
    if (TensorData data = ctx.ConstantInput(2)) {
      int width = DataTypeBytes(data->dtype);
      off_on.push_back(
          ctx.Constant(MakeTensorData(data->dtype, {}, data->bytes.substr(i * width, width))));
    } else {
      KILN_ASSIGN_OR_RETURN(Expr item, ctx.Call("take", {values, ctx.Constant(MakeScalar(i))}));
      off_on.push_back(item);
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("one_hot", {indices, off_on[1], off_on[0]},
                                           MakeAttrs({{"depth", depth}, {"axis", axis}})));
  if (runtime_depth) {
    OperandRule rule;
    rule.allowed = {{depth}};
    KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 1, rule, absl::StrCat("be the depth ", depth)));
  }
  return Outputs(out);
}

// TopK's k is an attribute in opset 1 and a one-element input from opset 10.
absl::StatusOr<Expr> RuntimeInt64(ConvertContext& ctx, size_t i, const char* what);

// TopK whose K only a run knows and whose outputs the model declares with no static shape:
// bounded outputs, the whole axis sorted (sorted or not, ONNX leaves the order of an unsorted
// result open), the first K filled; a K outside [0, extent] fails the run.
absl::StatusOr<std::vector<Expr>> BoundedTopK(ConvertContext& ctx, const Expr& x, int64_t axis,
                                             int64_t largest) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(type->shape.size());
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (!type->shape[normalized].is_static()) {
    return ctx.Error(absl::StrCat(
        "axis ", normalized, " has a run-time extent, so K given at run time has no static bound: "
        "give the input a static shape (input_shapes) or declare the outputs' shapes"));
  }
  const int64_t extent = type->shape[normalized].value;
  if (extent == 0) return ctx.Error(absl::StrCat("axis ", normalized, " is empty"));
  KILN_ASSIGN_OR_RETURN(
      Expr tuple, ctx.Call("topk", {x}, MakeAttrs({{"k", extent}, {"axis", normalized},
                                                   {"largest", largest != 0}, {"sorted", true}})));
  KILN_ASSIGN_OR_RETURN(Expr length, RuntimeInt64(ctx, 1, "K"));
  KILN_ASSIGN_OR_RETURN(Expr low, ctx.Call("greater_equal", {length, ctx.Constant(MakeScalar(int64_t{0}))}));
  KILN_ASSIGN_OR_RETURN(Expr high, ctx.Call("less_equal", {length, ctx.Constant(MakeScalar(extent))}));
  KILN_ASSIGN_OR_RETURN(Expr within, ctx.Call("logical_and", {low, high}));
  std::vector<Expr> outputs;
  for (int i = 0; i < 2; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr item, ctx.TupleGetItem(tuple, i));
    KILN_ASSIGN_OR_RETURN(item, GuardCondition(ctx, item, within,
                                               absl::StrCat("input 1 (K) must lie in [0, ", extent,
                                                            "], the extent of axis ", normalized)));
    ctx.MarkBounded(static_cast<size_t>(i), normalized, length);
    outputs.push_back(item);
  }
  return outputs;
}

absl::StatusOr<std::vector<Expr>> ConvertTopK(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  int64_t k = 0;
  if (ctx.opset() < 10) {
    KILN_ASSIGN_OR_RETURN(k, ctx.IntAttr("k", std::nullopt));
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", -1));
  // A k known only at run time: the extent the outputs are declared with along the axis, checked.
  const bool runtime_k = ctx.opset() >= 10 && KnownOnlyAtRunTime(ctx, 1);
  if (runtime_k && !ctx.DeclaredOutputShape(0) && !ctx.DeclaredOutputShape(1) &&
      ctx.CanBoundOutputs()) {
    KILN_ASSIGN_OR_RETURN(int64_t largest, ctx.IntAttr("largest", 1));
    return BoundedTopK(ctx, x, axis, largest);
  }
  if (runtime_k) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "K"));
    const int64_t rank = static_cast<int64_t>(declared.size());
    if (axis < -rank || axis >= rank) {
      return ctx.Error(absl::StrCat("axis ", axis, " is out of range for the declared output ",
                                    DimsString(declared)));
    }
    k = declared[axis < 0 ? axis + rank : axis];
  } else if (ctx.opset() >= 10) {
    KILN_ASSIGN_OR_RETURN(k, ConstantScalarInt(ctx, 1, "K"));
  }
  KILN_ASSIGN_OR_RETURN(int64_t largest, ctx.IntAttr("largest", 1));
  KILN_ASSIGN_OR_RETURN(int64_t sorted, ctx.IntAttr("sorted", 1));
  KILN_ASSIGN_OR_RETURN(
      Expr tuple,
      ctx.Call(
          "topk", {x},
          MakeAttrs(
              {{"k", k}, {"axis", axis}, {"largest", largest != 0}, {"sorted", sorted != 0}})));
  KILN_ASSIGN_OR_RETURN(Expr values, ctx.TupleGetItem(tuple, 0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.TupleGetItem(tuple, 1));
  if (runtime_k) {
    OperandRule rule;
    rule.allowed = {{k}};
    KILN_ASSIGN_OR_RETURN(values, GuardOperand(ctx, values, 1, rule, absl::StrCat("be k = ", k)));
    KILN_ASSIGN_OR_RETURN(indices, GuardOperand(ctx, indices, 1, rule, absl::StrCat("be k = ", k)));
  }
  return std::vector<Expr>{values, indices};
}

// A 1-D int64 constant 0, 1, ..., n - 1 shaped to lie along `axis` of a rank-`rank` tensor.
Expr PositionsAlong(ConvertContext& ctx, int64_t n, int64_t axis, int64_t rank) {
  std::vector<int64_t> positions(static_cast<size_t>(n));
  std::iota(positions.begin(), positions.end(), 0);
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = n;
  return ctx.Constant(Int64Tensor(std::move(shape), positions));
}

// Input `i`, one integer given at run time (a scalar or a one-element tensor), as an int64
// scalar.
absl::StatusOr<Expr> RuntimeInt64(ConvertContext& ctx, size_t i, const char* what) {
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.Input(i));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  bool one = true;
  for (const Dim& d : type->shape) one = one && d.value == 1;
  if (!one || !(IsSignedInt(type->dtype) || IsUnsignedInt(type->dtype))) {
    return ctx.Error(absl::StrCat("input ", i, " (", what, ") must hold one integer"));
  }
  if (!type->shape.empty()) {
    KILN_ASSIGN_OR_RETURN(value,
                          ctx.Call("reshape", {value}, MakeAttrs({{"newshape", IntArray({})}})));
  }
  if (type->dtype == DataType::kInt64) return value;
  return ctx.Call("cast", {value}, MakeAttrs({{"dtype", DataType::kInt64}}));
}

absl::StatusOr<std::vector<Expr>> ConvertCumSum(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t exclusive, ctx.IntAttr("exclusive", 0));
  KILN_ASSIGN_OR_RETURN(int64_t reverse, ctx.IntAttr("reverse", 0));
  auto cumsum = [&](int64_t axis) {
    return ctx.Call("cumsum", {x},
                    MakeAttrs({{"axis", axis}, {"exclusive", exclusive != 0},
                               {"reverse", reverse != 0}}));
  };
  if (ctx.ConstantInput(1).defined()) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, ConstantScalarInt(ctx, 1, "axis"));
    KILN_ASSIGN_OR_RETURN(Expr out, cumsum(axis));
    return Outputs(out);
  }
  // An axis given at run time: the running sum along every axis (the rank is static), the one
  // asked for selected; an axis outside [-rank, rank) gives zeros.
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(Expr axis, RuntimeInt64(ctx, 1, "axis"));
  int64_t rank = static_cast<int64_t>(type->shape.size());
  Expr out = ctx.Constant(ScalarTensor(type->dtype, 0));
  for (int64_t a = 0; a < rank; ++a) {
    KILN_ASSIGN_OR_RETURN(Expr along, cumsum(a));
    for (int64_t written : {a, a - rank}) {
      KILN_ASSIGN_OR_RETURN(Expr chosen,
                            ctx.Call("equal", {axis, ctx.Constant(MakeScalar(written))}));
      KILN_ASSIGN_OR_RETURN(out, ctx.Call("where", {chosen, along, out}));
    }
  }
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertTrilu(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t upper, ctx.IntAttr("upper", 1));
  if (!ctx.HasInput(1) || ctx.ConstantInput(1).defined()) {
    int64_t k = 0;
    if (ctx.HasInput(1)) {
      KILN_ASSIGN_OR_RETURN(k, ConstantScalarInt(ctx, 1, "k"));
    }
    KILN_ASSIGN_OR_RETURN(Expr out,
                          ctx.Call("trilu", {x}, MakeAttrs({{"upper", upper != 0}, {"k", k}})));
    return Outputs(out);
  }
  // k given at run time: x where column - row >= k (upper) or <= k (lower), else 0. Written as
  // column - k against row, only a column and a row of positions are constants; the
  // [rows, columns] mask is computed at run time.
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  int64_t rank = static_cast<int64_t>(type->shape.size());
  if (rank < 2) return ctx.Error(absl::StrCat("input 0 must have rank 2 or more, got ", rank));
  const Dim& row_count = type->shape[rank - 2];
  const Dim& column_count = type->shape[rank - 1];
  if (!row_count.is_static() || !column_count.is_static()) {
    return ctx.Error("with k given at run time, input 0's last two dimensions must be static");
  }
  KILN_ASSIGN_OR_RETURN(Expr k, RuntimeInt64(ctx, 1, "k"));
  // Offsets past the matrix act like its edge; clamped, column - k cannot wrap around.
  KILN_ASSIGN_OR_RETURN(k, ctx.Call("maximum", {k, ctx.Constant(MakeScalar(-row_count.value))}));
  KILN_ASSIGN_OR_RETURN(k, ctx.Call("minimum", {k, ctx.Constant(MakeScalar(column_count.value))}));
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes((row_count.value + column_count.value) * 8, "positions"));
  Expr rows = PositionsAlong(ctx, row_count.value, 0, 2);
  Expr columns = PositionsAlong(ctx, column_count.value, 1, 2);
  KILN_ASSIGN_OR_RETURN(Expr shifted, ctx.Call("subtract", {columns, k}));
  KILN_ASSIGN_OR_RETURN(Expr keep,
                        ctx.Call(upper != 0 ? "greater_equal" : "less_equal", {shifted, rows}));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("where", {keep, x, ctx.Constant(ScalarTensor(type->dtype, 0))}));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertEyeLike(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  DataType dtype = type->dtype;
  if (ctx.HasAttr("dtype")) {
    KILN_ASSIGN_OR_RETURN(int64_t onnx_dtype, ctx.IntAttr("dtype", std::nullopt));
    auto parsed = DataTypeFromOnnx(static_cast<int32_t>(onnx_dtype));
    if (!parsed.ok())
      return ctx.Error(absl::StrCat("attribute 'dtype': ", parsed.status().message()));
    dtype = *parsed;
  }
  KILN_ASSIGN_OR_RETURN(int64_t k, ctx.IntAttr("k", 0));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("eye_like", {x}, MakeAttrs({{"k", k}, {"dtype", dtype}})));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertReverseSequence(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr lengths, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(int64_t batch_axis, ctx.IntAttr("batch_axis", 1));
  KILN_ASSIGN_OR_RETURN(int64_t time_axis, ctx.IntAttr("time_axis", 0));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reverse_sequence", {x, lengths},
                                 MakeAttrs({{"seq_axis", time_axis}, {"batch_axis", batch_axis}})));
  return Outputs(out);
}

// The element count of a tensor of static shape.
std::optional<int64_t> StaticElementCount(const Expr& x) {
  const auto* type = x->checked_type.as<TensorTypeNode>();
  if (type == nullptr) return std::nullopt;
  int64_t count = 1;
  for (const auto& dim : type->shape) {
    if (!dim.is_static() || (dim.value > 0 && count > INT64_MAX / dim.value)) return std::nullopt;
    count *= dim.value;
  }
  return count;
}

absl::StatusOr<std::vector<Expr>> ConvertNonZero(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  if (TensorData known = ctx.ConstantInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr folded, FoldNonZero(ctx, known));
    return Outputs(folded);
  }
  // Known only at run time: as many results as the output is declared with, checked.
  std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0);
  if (!declared || declared->size() != 2) {
    // Undeclared: a bounded output, one column per element of x, the count filled.
    std::optional<int64_t> elements = StaticElementCount(x);
    const auto* x_type = x->checked_type.as<TensorTypeNode>();
    if (!ctx.CanBoundOutputs() || !elements || x_type == nullptr || x_type->shape.empty()) {
      KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nonzero", {x}));  // the relation's error
      return Outputs(out);
    }
    KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nonzero", {x}, MakeAttrs({{"count", *elements}})));
    KILN_ASSIGN_OR_RETURN(Expr length, NonzeroCount(ctx, x));
    ctx.MarkBounded(0, 1, length);
    return Outputs(out);
  }
  int64_t count = (*declared)[1];
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("nonzero", {x}, MakeAttrs({{"count", count}})));
  KILN_ASSIGN_OR_RETURN(Expr ok, NonzeroCountIs(ctx, x, count));
  KILN_ASSIGN_OR_RETURN(out, GuardCondition(ctx, out, ok,
                                            absl::StrCat("input 0 must hold ", count,
                                                         " nonzero elements (the count the model "
                                                         "declares and was compiled for)")));
  return Outputs(out);
}

// Without an axis, Unique and Compress work on the flattened input.
absl::StatusOr<std::vector<Expr>> ConvertUnique(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(int64_t sorted, ctx.IntAttr("sorted", 1));
  if (TensorData known = ctx.ConstantInput(0)) {
    std::optional<int64_t> given_axis;
    if (ctx.HasAttr("axis")) {
      KILN_ASSIGN_OR_RETURN(given_axis, ctx.IntAttr("axis", std::nullopt));
    }
    return FoldUnique(ctx, known, given_axis, sorted != 0);
  }
  int64_t axis = 0;
  if (ctx.HasAttr("axis")) {
    KILN_ASSIGN_OR_RETURN(axis, ctx.IntAttr("axis", std::nullopt));
  } else {
    KILN_ASSIGN_OR_RETURN(x, Flattened(ctx, x));
  }
  // Known only at run time: as many unique slices as the model declares (outputs 1 and 3 hold one
  // entry per unique slice), checked through the largest inverse index.
  int64_t count = -1;
  for (size_t output : {size_t{1}, size_t{3}}) {
    std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(output);
    if (declared && declared->size() == 1) count = (*declared)[0];
  }
  // Undeclared: bounded outputs, one entry per slice of the axis, the unique ones filled.
  const auto* tx = x->checked_type.as<TensorTypeNode>();  // flattened without an axis
  const int64_t rank = tx == nullptr ? 0 : static_cast<int64_t>(tx->shape.size());
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  const bool bounded = count < 0 && ctx.CanBoundOutputs() && normalized >= 0 &&
                       normalized < rank && tx->shape[normalized].is_static();
  if (bounded) count = tx->shape[normalized].value;
  if (bounded && count == 0) return ctx.Error("the axis (or the flattened input) is empty");
  KILN_ASSIGN_OR_RETURN(
      Expr tuple, ctx.Call("unique", {x}, MakeAttrs({{"sorted", sorted != 0}, {"axis", axis},
                                                      {"count", count}})));
  std::vector<Expr> outputs;
  for (int i = 0; i < 4; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr item, ctx.TupleGetItem(tuple, i));
    outputs.push_back(item);
  }
  if (bounded) {
    // As many unique slices as one more than the largest inverse index.
    KILN_ASSIGN_OR_RETURN(Expr largest, ctx.Call("max", {outputs[2]}));
    KILN_ASSIGN_OR_RETURN(Expr length, ctx.Call("add", {largest, ctx.Constant(MakeScalar(int64_t{1}))}));
    ctx.MarkBounded(0, normalized, length);
    ctx.MarkBounded(1, 0, length);
    ctx.MarkBounded(3, 0, length);
  } else if (count >= 0) {
    KILN_ASSIGN_OR_RETURN(Expr largest, ctx.Call("max", {outputs[2]}));
    KILN_ASSIGN_OR_RETURN(
        Expr ok, ctx.Call("equal", {largest, ctx.Constant(MakeScalar(count - 1))}));
    for (Expr& output : outputs) {
      KILN_ASSIGN_OR_RETURN(output, GuardCondition(ctx, output, ok,
                                                   absl::StrCat("input 0 must hold ", count,
                                                                " unique slices (the count the "
                                                                "model declares and was compiled "
                                                                "for)")));
    }
  }
  return outputs;
}

absl::StatusOr<std::vector<Expr>> ConvertCompress(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr condition, ctx.Input(1));
  int64_t axis = 0;
  if (ctx.HasAttr("axis")) {
    KILN_ASSIGN_OR_RETURN(axis, ctx.IntAttr("axis", std::nullopt));
  } else {
    KILN_ASSIGN_OR_RETURN(x, Flattened(ctx, x));
  }
  // A condition known at import (a constant, or an input the caller gives a value for) fixes
  // the output's extent: the compress is a gather of the selected positions.
  TensorData known = ctx.ConstantInput(1);
  const auto* tx = x->checked_type.as<TensorTypeNode>();  // flattened without an axis
  if (tx == nullptr) return ctx.Error("input 0 must be a tensor");
  const int64_t rank = static_cast<int64_t>(tx->shape.size());
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (known && known->dtype == DataType::kBool && known->shape.size() == 1 && normalized >= 0 &&
      normalized < rank && tx->shape[normalized].is_static()) {
    const int64_t extent = tx->shape[normalized].value;
    if (known->NumElements() > extent) {
      return ctx.Error(absl::StrCat("condition has ", known->NumElements(),
                                    " elements, more than the axis's ", extent));
    }
    std::vector<int64_t> selected;
    for (int64_t i = 0; i < known->NumElements(); ++i) {
      if (known->data<uint8_t>()[i] != 0) selected.push_back(i);
    }
    std::string bytes(reinterpret_cast<const char*>(selected.data()),
                      selected.size() * sizeof(int64_t));
    Expr positions = ctx.Constant(MakeTensorData(
        DataType::kInt64, {static_cast<int64_t>(selected.size())}, std::move(bytes)));
    KILN_ASSIGN_OR_RETURN(Expr out,
                          ctx.Call("take", {x, positions}, MakeAttrs({{"axis", normalized}})));
    return Outputs(out);
  }
  // Known only at run time: as many slices as the output is declared with, checked.
  std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0);
  const auto* condition_type = condition->checked_type.as<TensorTypeNode>();
  if (normalized < 0 || normalized >= rank || condition_type == nullptr ||
      condition_type->shape.size() != 1 || !condition_type->shape[0].is_static() ||
      !tx->shape[normalized].is_static() ||
      condition_type->shape[0].value > tx->shape[normalized].value ||
      (!(declared && static_cast<int64_t>(declared->size()) == rank) &&
       !ctx.CanBoundOutputs())) {
    KILN_ASSIGN_OR_RETURN(Expr out,
                          ctx.Call("compress", {x, condition}, MakeAttrs({{"axis", axis}})));
    return Outputs(out);  // the relation's error
  }
  if (!declared || static_cast<int64_t>(declared->size()) != rank) {
    // Undeclared: a bounded output, one slice per condition entry, the selected ones filled.
    int64_t bound = condition_type->shape[0].value;
    KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("compress", {x, condition},
                                             MakeAttrs({{"axis", axis}, {"count", bound}})));
    KILN_ASSIGN_OR_RETURN(Expr length, NonzeroCount(ctx, condition));
    ctx.MarkBounded(0, normalized, length);
    return Outputs(out);
  }
  int64_t count = (*declared)[normalized];
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("compress", {x, condition},
                                           MakeAttrs({{"axis", axis}, {"count", count}})));
  KILN_ASSIGN_OR_RETURN(Expr ok, NonzeroCountIs(ctx, condition, count));
  KILN_ASSIGN_OR_RETURN(out, GuardCondition(ctx, out, ok,
                                            absl::StrCat("input 1 must select ", count,
                                                         " slices (the count the model declares "
                                                         "and was compiled for)")));
  return Outputs(out);
}

}  // namespace

void RegisterIndexConverters(ConverterTable& table) {
  table.Add("Gather", ConvertGather);
  table.Add("GatherElements", ConvertGatherElements);
  table.Add("GatherND", ConvertGatherND);
  table.Add("ScatterElements", ConvertScatterElements);
  table.Add("Scatter", ConvertScatterElements);  // the opset 9 name, same semantics
  table.Add("ScatterND", ConvertScatterND);
  table.Add("OneHot", ConvertOneHot);
  table.Add("TopK", ConvertTopK);
  table.Add("CumSum", ConvertCumSum);
  table.Add("Trilu", ConvertTrilu);
  table.Add("EyeLike", ConvertEyeLike);
  table.Add("ReverseSequence", ConvertReverseSequence);
  table.Add("NonZero", ConvertNonZero);
  table.Add("Unique", ConvertUnique);
  table.Add("Compress", ConvertCompress);
}

}  // namespace kiln::onnx_frontend
