// Import-time shape arithmetic: a small evaluator over int64/int32/bool
// values whose elements may be unknown (symbolic dims).
#include "engine/frontend/onnx/shape_folding.h"

#include <cstring>
#include <functional>
#include <limits>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "engine/op/transform_ops.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

bool ShapeTensor::AllKnown() const {
  for (const ShapeElement& e : elements) {
    if (!e.known) return false;
  }
  return true;
}

namespace {

// Chains longer than this are not shape arithmetic worth following.
constexpr int kMaxDepth = 32;

using Result = absl::StatusOr<std::optional<ShapeTensor>>;

bool IsShapeDType(DataType dtype) {
  return dtype == DataType::kInt64 || dtype == DataType::kInt32 || dtype == DataType::kBool;
}

ShapeElement Known(int64_t value) { return ShapeElement{true, value, ""}; }
ShapeElement Unknown(std::string symbol = "") { return ShapeElement{false, 0, std::move(symbol)}; }

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The static shape of a small shape-dtype tensor type, or nullopt.
std::optional<std::vector<int64_t>> SmallStaticShape(const Type& type) {
  const auto* t = type.as<TensorTypeNode>();
  if (t == nullptr || !IsShapeDType(t->dtype)) return std::nullopt;
  std::vector<int64_t> shape;
  int64_t n = 1;
  for (const Dim& d : t->shape) {
    if (!d.is_static() || (d.value > 0 && n > kMaxFoldElements / d.value)) return std::nullopt;
    n *= d.value;
    shape.push_back(d.value);
  }
  return shape;
}

std::optional<ShapeTensor> FromConstant(const TensorData& data) {
  if (!IsShapeDType(data->dtype) || data->NumElements() > kMaxFoldElements) return std::nullopt;
  ShapeTensor t{data->dtype, data->shape, {}};
  int64_t n = data->NumElements();
  t.elements.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    switch (data->dtype) {
      case DataType::kInt64:
        t.elements.push_back(Known(data->data<int64_t>()[k]));
        break;
      case DataType::kInt32:
        t.elements.push_back(Known(data->data<int32_t>()[k]));
        break;
      default:
        t.elements.push_back(Known(data->data<uint8_t>()[k] != 0));
        break;
    }
  }
  return t;
}

TensorData ToTensorData(const ShapeTensor& t) {
  int width = DataTypeBytes(t.dtype);
  std::string bytes(t.elements.size() * width, '\0');
  for (size_t k = 0; k < t.elements.size(); ++k) {
    int64_t v = t.elements[k].value;
    char* out = bytes.data() + k * width;
    if (t.dtype == DataType::kInt64) {
      std::memcpy(out, &v, 8);
    } else if (t.dtype == DataType::kInt32) {
      int32_t narrow = static_cast<int32_t>(v);
      std::memcpy(out, &narrow, 4);
    } else {
      *out = v != 0 ? 1 : 0;
    }
  }
  return MakeTensorData(t.dtype, t.shape, std::move(bytes));
}

// Row-major coordinates of flat index `flat` in `shape`.
std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = shape[i] == 0 ? 0 : flat % shape[i];
    flat = shape[i] == 0 ? 0 : flat / shape[i];
  }
  return coords;
}

// The flat index in `in_shape` that numpy broadcasting reads for output
// coordinates `coords` (aligned from the right).
int64_t BroadcastOffset(const std::vector<int64_t>& coords, const std::vector<int64_t>& in_shape) {
  size_t offset = coords.size() - in_shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < in_shape.size(); ++i) {
    flat = flat * in_shape[i] + (in_shape[i] == 1 ? 0 : coords[offset + i]);
  }
  return flat;
}

ShapeElement Narrow(ShapeElement e, DataType dtype) {
  if (!e.known) {
    if (dtype == DataType::kBool) e.symbol.clear();
    return e;
  }
  if (dtype == DataType::kInt32) e.value = static_cast<int32_t>(e.value);
  if (dtype == DataType::kBool) e.value = e.value != 0;
  return e;
}

absl::StatusOr<ShapeElement> Binary(std::string_view op, const ShapeElement& a,
                                    const ShapeElement& b) {
  bool both = a.known && b.known;
  int64_t x = a.value, y = b.value, r = 0;
  if (op == "add") {
    if (b.known && y == 0) return a;
    if (a.known && x == 0) return b;
    if (!both || __builtin_add_overflow(x, y, &r)) return Unknown();
    return Known(r);
  }
  if (op == "subtract") {
    if (b.known && y == 0) return a;
    if (!both || __builtin_sub_overflow(x, y, &r)) return Unknown();
    return Known(r);
  }
  if (op == "multiply") {
    if (b.known && y == 1) return a;
    if (a.known && x == 1) return b;
    if ((a.known && x == 0) || (b.known && y == 0)) return Known(0);
    if (!both || __builtin_mul_overflow(x, y, &r)) return Unknown();
    return Known(r);
  }
  if (op == "divide" || op == "mod" || op == "floor_mod") {
    if (b.known && y == 0) {
      return absl::InvalidArgumentError("integer division by zero in shape arithmetic");
    }
    if (op == "divide" && b.known && y == 1) return a;
    if (!both || (x == INT64_MIN && y == -1)) return Unknown();
    if (op == "divide") return Known(x / y);  // truncates, like the divide op
    r = x % y;
    if (op == "floor_mod" && r != 0 && ((r < 0) != (y < 0))) r += y;
    return Known(r);
  }
  if (op == "equal" && !a.known && !b.known && !a.symbol.empty() && a.symbol == b.symbol) {
    return Known(1);
  }
  if (!both) return Unknown();
  if (op == "maximum") return Known(std::max(x, y));
  if (op == "minimum") return Known(std::min(x, y));
  if (op == "equal") return Known(x == y);
  if (op == "less") return Known(x < y);
  if (op == "greater") return Known(x > y);
  return Unknown();
}

bool IsBinary(std::string_view op) {
  for (std::string_view name : {"add", "subtract", "multiply", "divide", "mod", "floor_mod",
                                "maximum", "minimum", "equal", "less", "greater"}) {
    if (op == name) return true;
  }
  return false;
}

bool IsSupported(std::string_view op) {
  if (IsBinary(op)) return true;
  for (std::string_view name : {"shape_of", "where", "cast", "take", "concatenate", "expand_dims",
                                "squeeze", "reshape", "strided_slice", "broadcast_to", "negative",
                                "abs", "logical_not"}) {
    if (op == name) return true;
  }
  return false;
}

// Evaluates a call of `op` on known-shape arguments; the result has `shape`
// and `dtype` (the call's checked type).
Result Evaluate(std::string_view op, const AttrsNode& attrs, const std::vector<ShapeTensor>& args,
                const std::vector<int64_t>& shape, DataType dtype) {
  ShapeTensor out{dtype, shape, {}};
  int64_t n = Count(shape);
  out.elements.reserve(n);
  if (IsBinary(op) || op == "where" || op == "broadcast_to") {
    for (int64_t k = 0; k < n; ++k) {
      std::vector<int64_t> coords = Unravel(k, shape);
      auto at = [&](size_t i) -> const ShapeElement& {
        return args[i].elements[BroadcastOffset(coords, args[i].shape)];
      };
      if (op == "broadcast_to") {
        out.elements.push_back(at(0));
      } else if (op == "where") {
        const ShapeElement& cond = at(0);
        out.elements.push_back(!cond.known ? Unknown() : cond.value ? at(1) : at(2));
      } else {
        KILN_ASSIGN_OR_RETURN(ShapeElement e, Binary(op, at(0), at(1)));
        out.elements.push_back(Narrow(std::move(e), dtype));
      }
    }
    return out;
  }
  if (op == "cast" || op == "expand_dims" || op == "squeeze" || op == "reshape") {
    for (const ShapeElement& e : args[0].elements) out.elements.push_back(Narrow(e, dtype));
    return out;
  }
  if (op == "logical_not") {  // a Loop body's Not(OptionalHasElement(...)) selects an If branch
    for (const ShapeElement& e : args[0].elements) {
      out.elements.push_back(e.known ? Known(e.value == 0) : Unknown());
    }
    return out;
  }
  if (op == "negative" || op == "abs") {  // LayerNormalization's body negates its axis
    for (const ShapeElement& e : args[0].elements) {
      if (!e.known) {
        out.elements.push_back(Unknown());
      } else if (e.value == std::numeric_limits<int64_t>::min()) {
        return absl::InvalidArgumentError("negating the smallest int64 overflows");
      } else {
        out.elements.push_back(Known(op == "negative" || e.value < 0 ? -e.value : e.value));
      }
    }
    return out;
  }
  const ShapeTensor& data = args[0];
  int64_t rank = static_cast<int64_t>(data.shape.size());
  if (op == "take") {
    int64_t axis = IntAttr(attrs, "axis");
    if (axis < 0) axis += rank;
    int64_t extent = data.shape[axis];
    int64_t outer = Count({data.shape.begin(), data.shape.begin() + axis});
    int64_t inner = Count({data.shape.begin() + axis + 1, data.shape.end()});
    for (int64_t o = 0; o < outer; ++o) {
      for (const ShapeElement& index : args[1].elements) {
        int64_t i = index.value;
        if (index.known && i < 0) i += extent;
        if (index.known && (i < 0 || i >= extent)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "index ", index.value, " is out of range for axis ", axis, " of extent ", extent));
        }
        for (int64_t j = 0; j < inner; ++j) {
          out.elements.push_back(index.known ? data.elements[(o * extent + i) * inner + j]
                                             : Unknown());
        }
      }
    }
    return out;
  }
  if (op == "concatenate") {
    int64_t axis = IntAttr(attrs, "axis");
    if (axis < 0) axis += rank;
    int64_t outer = Count({shape.begin(), shape.begin() + axis});
    for (int64_t o = 0; o < outer; ++o) {
      for (const ShapeTensor& arg : args) {
        int64_t chunk = Count({arg.shape.begin() + axis, arg.shape.end()});
        for (int64_t j = 0; j < chunk; ++j) out.elements.push_back(arg.elements[o * chunk + j]);
      }
    }
    return out;
  }
  if (op == "strided_slice") {
    std::vector<int64_t> begin = IntArrayAttr(attrs, "begin");
    std::vector<int64_t> end = IntArrayAttr(attrs, "end");
    std::vector<int64_t> strides = IntArrayAttr(attrs, "strides");
    std::vector<int64_t> axes = IntArrayAttr(attrs, "axes");
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    for (size_t i = 0; i < begin.size(); ++i) {
      int64_t axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
      if (axis < 0) axis += rank;
      int64_t stride = strides.empty() ? 1 : strides[i];
      first[axis] = ClampSlice(data.shape[axis], begin[i], end[i], stride).begin;
      step[axis] = stride;
    }
    for (int64_t k = 0; k < n; ++k) {
      std::vector<int64_t> coords = Unravel(k, shape);
      int64_t flat = 0;
      for (int64_t a = 0; a < rank; ++a) {
        flat = flat * data.shape[a] + first[a] + coords[a] * step[a];
      }
      out.elements.push_back(data.elements[flat]);
    }
    return out;
  }
  return std::nullopt;
}

Result EvaluateAt(const Expr& expr, int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  if (const auto* constant = expr.as<ConstantNode>()) return FromConstant(constant->data);
  const auto* call = expr.as<CallNode>();
  const auto* op = call ? call->op.as<OpNode>() : nullptr;
  if (op == nullptr || !IsSupported(op->name)) return std::nullopt;
  if (op->name == "shape_of") {
    const auto* arg = call->args[0]->checked_type.as<TensorTypeNode>();
    if (arg == nullptr) return std::nullopt;
    ShapeTensor t{DataType::kInt64, {static_cast<int64_t>(arg->shape.size())}, {}};
    for (const Dim& d : arg->shape) {
      t.elements.push_back(d.is_static() ? Known(d.value) : Unknown(d.symbol));
    }
    return t;
  }
  std::optional<std::vector<int64_t>> shape = SmallStaticShape(expr->checked_type);
  if (!shape || !call->attrs) return std::nullopt;  // untyped calls are not ours
  std::vector<ShapeTensor> args;
  for (const Expr& arg : call->args) {
    KILN_ASSIGN_OR_RETURN(std::optional<ShapeTensor> value, EvaluateAt(arg, depth + 1));
    if (!value) return std::nullopt;
    args.push_back(std::move(*value));
  }
  return Evaluate(op->name, *call->attrs, args, *shape,
                  expr->checked_type.as<TensorTypeNode>()->dtype);
}

}  // namespace

absl::StatusOr<std::optional<ShapeTensor>> EvaluateShapeValue(const Expr& expr) {
  return EvaluateAt(expr, 0);
}

absl::StatusOr<std::optional<ShapeTensor>> EvaluateShapeInput(const ConvertContext& ctx, size_t i) {
  if (TensorData fixed = ctx.ConstantInput(i)) return FromConstant(fixed);
  KILN_ASSIGN_OR_RETURN(Expr input, ctx.Input(i));
  return EvaluateShapeValue(input);
}

absl::StatusOr<Expr> FoldShapeArithmetic(ConvertContext& ctx, const Expr& call) {
  // Cheap rejections first: this runs on every converted elementwise op.
  const auto* node = call.as<CallNode>();
  const auto* op = node ? node->op.as<OpNode>() : nullptr;
  if (op == nullptr || !IsSupported(op->name) || !SmallStaticShape(call->checked_type)) {
    return call;
  }
  auto value = EvaluateAt(call, 0);
  if (!value.ok()) return ctx.Error(value.status().message());
  if (!*value || !(*value)->AllKnown()) return call;
  return ctx.Constant(ToTensorData(**value));
}

}  // namespace kiln::onnx_frontend
