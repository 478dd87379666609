// Converters for ONNX operators whose result is known at import: Constant,
// ConstantOfShape, Range on constant inputs, and Shape / Size of tensors with
// static shapes. They produce Constants (with the node's span); Shape and Size
// of symbolic shapes, and Range of run-time inputs, stay ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/shape_folding.h"
#include "engine/frontend/onnx/transform_converters.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

template <typename T>
TensorData VectorData(DataType dtype, const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return MakeTensorData(dtype, {static_cast<int64_t>(values.size())}, std::move(bytes));
}

absl::Status CheckElementLimit(const ConvertContext& ctx, int64_t count, const char* what) {
  if (count > ctx.options().max_tensor_elements) {
    return ctx.Error(absl::StrCat(what, " would have ", count, " elements, more than the limit of ",
                                  ctx.options().max_tensor_elements));
  }
  return absl::OkStatus();
}

// Constant: exactly one of value (a tensor), value_float(s), value_int(s).
absl::StatusOr<std::vector<Expr>> ConvertConstant(ConvertContext& ctx) {
  if (ctx.node().attribute_size() != 1) {
    return ctx.Error(
        absl::StrCat("expected exactly one value attribute, got ", ctx.node().attribute_size()));
  }
  const std::string& name = ctx.node().attribute(0).name();
  TensorData data;
  if (name == "value") {
    KILN_ASSIGN_OR_RETURN(data, ctx.TensorAttr("value"));
  } else if (name == "value_float") {
    KILN_ASSIGN_OR_RETURN(double v, ctx.FloatAttr(name, std::nullopt));
    data = MakeScalar(v);
  } else if (name == "value_int") {
    KILN_ASSIGN_OR_RETURN(int64_t v, ctx.IntAttr(name, std::nullopt));
    data = MakeScalar(v);
  } else if (name == "value_floats") {
    KILN_ASSIGN_OR_RETURN(std::vector<float> v, ctx.FloatsAttr(name, std::nullopt));
    KILN_RETURN_IF_ERROR(CheckElementLimit(ctx, static_cast<int64_t>(v.size()), name.c_str()));
    data = VectorData(DataType::kFloat32, v);
  } else if (name == "value_ints") {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.IntsAttr(name, std::nullopt));
    KILN_RETURN_IF_ERROR(CheckElementLimit(ctx, static_cast<int64_t>(v.size()), name.c_str()));
    data = VectorData(DataType::kInt64, v);
  } else if (name == "value_string" || name == "value_strings") {
    return ctx.Error(absl::StrCat("attribute '", name, "': string tensors are not supported"));
  } else if (name == "sparse_value") {
    return ctx.Error("attribute 'sparse_value': sparse tensors are not supported");
  } else {
    return ctx.Error(absl::StrCat("unknown attribute '", name, "'"));
  }
  return Outputs(ctx.Constant(std::move(data)));
}

// The attribute `value` of ConstantOfShape: one element, float32 0 by default.
absl::StatusOr<TensorData> FillValue(const ConvertContext& ctx) {
  if (!ctx.HasAttr("value")) return MakeScalar(0.0f);
  KILN_ASSIGN_OR_RETURN(TensorData value, ctx.TensorAttr("value"));
  if (value->NumElements() != 1) {
    return ctx.Error(
        absl::StrCat("attribute 'value' must hold one element, got ", value->NumElements()));
  }
  return value;
}

// ConstantOfShape whose shape is known only at run time: the value broadcast (at run time, so
// nothing is materialized at import) to the shape the model declares, checked.
absl::StatusOr<std::vector<Expr>> FillDeclaredShape(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 0, "shape"));
  KILN_ASSIGN_OR_RETURN(OperandRule rule, ExactShapeRule(ctx, 0, "shape", declared));
  KILN_ASSIGN_OR_RETURN(TensorData value, FillValue(ctx));
  Expr scalar = ctx.Constant(ReshapeTensorData(value, {}));
  std::vector<Dim> dims;
  for (int64_t d : declared) dims.push_back(Dim::Static(d));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("broadcast_to", {scalar}, MakeAttrs({{"shape", ShapeValue{dims}}})));
  KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 0, rule,
                                          absl::StrCat("give the shape ", DimsString(declared))));
  return Outputs(out);
}

// ConstantOfShape(shape) filled with `value` (default float32 0). The element
// count is checked against the limit before anything is allocated.
absl::StatusOr<std::vector<Expr>> ConvertConstantOfShape(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* shape_type, ctx.InputTensorType(0));
  if (shape_type->shape.size() != 1) {
    return ctx.Error(
        absl::StrCat("input 0 (shape) must be 1-D, got shape ", ShapeToString(shape_type->shape)));
  }
  if (KnownOnlyAtRunTime(ctx, 0)) return FillDeclaredShape(ctx);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstantInts(0, "shape"));
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error(absl::StrCat("shape has negative extent ", d));
    if (d != 0 && count > INT64_MAX / d) {
      return ctx.Error(absl::StrCat("the element count of shape (", absl::StrJoin(shape, ", "),
                                    ") overflows int64"));
    }
    count *= d;
  }
  KILN_RETURN_IF_ERROR(CheckElementLimit(
      ctx, count,
      absl::StrCat("the filled tensor of shape (", absl::StrJoin(shape, ", "), ")").c_str()));
  KILN_ASSIGN_OR_RETURN(TensorData value, FillValue(ctx));
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(
      count * static_cast<int64_t>(value->bytes.size()),
      absl::StrCat("the filled tensor of shape (", absl::StrJoin(shape, ", "), ")")));
  std::string bytes;
  bytes.reserve(value->bytes.size() * count);
  for (int64_t i = 0; i < count; ++i) bytes += value->bytes;
  return Outputs(ctx.Constant(MakeTensorData(value->dtype, std::move(shape), std::move(bytes))));
}

// Shape (with opset 15's start/end, clamped to [0, rank]): a constant when the
// selected dims are static, else shape_of (and a slice of it).
absl::StatusOr<std::vector<Expr>> ConvertShape(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  int64_t rank = static_cast<int64_t>(type->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t start, ctx.IntAttr("start", 0));
  KILN_ASSIGN_OR_RETURN(int64_t end, ctx.IntAttr("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (!type->shape[i].is_static()) break;
    dims.push_back(type->shape[i].value);
  }
  if (static_cast<int64_t>(dims.size()) == end - start) {
    return Outputs(ctx.Constant(VectorData(DataType::kInt64, dims)));
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("shape_of", {x}));
  if (start != 0 || end != rank) {
    KILN_ASSIGN_OR_RETURN(
        out, ctx.Call("strided_slice", {out},
                      MakeAttrs({{"begin", IntArray({start})}, {"end", IntArray({end})}})));
  }
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertSize(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  auto count = NumElements(type->shape);
  if (!count.ok()) return ctx.Error(count.status().message());
  if (*count >= 0) return Outputs(ctx.Constant(MakeScalar(*count)));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("size", {x}));
  return Outputs(out);
}

// Range on constants: output[i] = start + i * delta for
// i < max(ceil((limit - start) / delta), 0).
template <typename T>
absl::StatusOr<TensorData> RangeData(const ConvertContext& ctx, DataType dtype, T start, T limit,
                                     T delta) {
  // The count in a wide type, so huge ranges are reported, not wrapped.
  long double count = 0;
  if constexpr (std::is_floating_point_v<T>) {
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      return ctx.Error("Range needs finite bounds and a nonzero delta");
    }
    count = std::ceil((static_cast<long double>(limit) - start) / delta);
  } else {
    if (delta == 0) return ctx.Error("Range needs a nonzero delta");
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 n = span / delta + ((span % delta != 0 && (span > 0) == (delta > 0)) ? 1 : 0);
    count = static_cast<long double>(n);
  }
  if (count > static_cast<long double>(ctx.options().max_tensor_elements)) {
    return ctx.Error(absl::StrCat("the range would have more than the limit of ",
                                  ctx.options().max_tensor_elements, " elements"));
  }
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  // Twice: the values, then their bytes in the constant.
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(2 * n * static_cast<int64_t>(sizeof(T)),
                                       absl::StrCat("the range of ", n, " elements")));
  std::vector<T> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<T>(start + i * delta);
  return VectorData(dtype, values);
}

// Input `i` of a Range as a constant scalar: a constant, a graph input whose value the caller
// fixed, or a cast of either (the window functions' bodies cast their size input), else null.
TensorData ScalarBound(ConvertContext& ctx, size_t i) {
  if (TensorData data = ctx.ConstantInput(i)) return data;
  const auto* call = ctx.HasInput(i) ? ctx.Input(i)->as<CallNode>() : nullptr;
  const auto* op = call ? call->op.as<OpNode>() : nullptr;
  if (op == nullptr || op->name != "cast" || call->args.size() != 1) return nullptr;
  TensorData source;
  if (const auto* constant = call->args[0].as<ConstantNode>()) source = constant->data;
  if (const auto* var = call->args[0].as<VarNode>()) {
    auto it = ctx.options().input_values.find(var->name_hint);
    if (it != ctx.options().input_values.end()) source = it->second;
  }
  std::optional<double> value = source ? ScalarValue(source) : std::nullopt;
  const auto* type = call->checked_type.as<TensorTypeNode>();
  if (!value || type == nullptr) return nullptr;
  return ScalarTensor(type->dtype, *value);
}

absl::StatusOr<std::vector<Expr>> ConvertRange(ConvertContext& ctx) {
  TensorData start = ScalarBound(ctx, 0), limit = ScalarBound(ctx, 1), delta = ScalarBound(ctx, 2);
  if (!start || !limit || !delta) {
    KILN_ASSIGN_OR_RETURN(Expr s, ctx.Input(0));
    KILN_ASSIGN_OR_RETURN(Expr l, ctx.Input(1));
    KILN_ASSIGN_OR_RETURN(Expr d, ctx.Input(2));
    std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0);
    if (!declared || declared->size() != 1) {
      KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("arange", {s, l, d}));
      return Outputs(out);
    }
    // Bounds known only at run time: as many elements as the output is declared with, checked
    // (max(ceil((limit - start) / delta), 0), computed in float64 as the spec's formula).
    int64_t count = (*declared)[0];
    KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("arange", {s, l, d}, MakeAttrs({{"count", count}})));
    std::vector<Expr> wide;
    for (const Expr& bound : {s, l, d}) {
      KILN_ASSIGN_OR_RETURN(Expr w, ctx.Call("cast", {bound}, MakeAttrs({{"dtype", DataType::kFloat64}})));
      wide.push_back(w);
    }
    KILN_ASSIGN_OR_RETURN(Expr span, ctx.Call("subtract", {wide[1], wide[0]}));
    KILN_ASSIGN_OR_RETURN(Expr steps, ctx.Call("divide", {span, wide[2]}));
    KILN_ASSIGN_OR_RETURN(steps, ctx.Call("ceil", {steps}));
    KILN_ASSIGN_OR_RETURN(steps, ctx.Call("maximum", {steps, ctx.Constant(MakeScalar(0.0))}));
    KILN_ASSIGN_OR_RETURN(Expr ok, ctx.Call("equal", {steps, ctx.Constant(MakeScalar(static_cast<double>(count)))}));
    KILN_ASSIGN_OR_RETURN(out, GuardCondition(ctx, out, ok,
                                              absl::StrCat("start, limit and delta must give ", count,
                                                           " elements (the count the model declares "
                                                           "and was compiled for)")));
    return Outputs(out);
  }
  DataType dtype = start->dtype;
  for (const TensorData& t : {start, limit, delta}) {
    if (t->dtype != dtype || t->NumElements() != 1) {
      return ctx.Error("start, limit and delta must be scalars of one dtype");
    }
  }
  absl::StatusOr<TensorData> data =
      DispatchDataType(dtype, [&]<DataType D>() -> absl::StatusOr<TensorData> {
        if constexpr (D == DataType::kInt16 || D == DataType::kInt32 || D == DataType::kInt64 ||
                      D == DataType::kFloat32 || D == DataType::kFloat64) {
          using T = DataTypeStorage<D>;
          return RangeData<T>(ctx, dtype, *start->data<T>(), *limit->data<T>(),
                              *delta->data<T>());
        } else {
          return ctx.Error(absl::StrCat("Range does not accept dtype ", DataTypeName(dtype)));
        }
      });
  if (!data.ok()) return data.status();
  return Outputs(ctx.Constant(*std::move(data)));
}

}  // namespace

void RegisterConstantConverters(ConverterTable& table) {
  table.Add("Constant", ConvertConstant);
  table.Add("ConstantOfShape", ConvertConstantOfShape);
  table.Add("Shape", ConvertShape);
  table.Add("Size", ConvertSize);
  table.Add("Range", ConvertRange);
}

}  // namespace kiln::onnx_frontend
