// Elementwise and broadcast operators: unary math, binary arithmetic with
// numpy broadcasting, comparisons, logic, cast, where, clip and the
// parameterized activations.
#include "absl/strings/str_cat.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

enum class DTypeClass { kAny, kFloat, kNumeric, kInteger, kBool };

bool Accepts(DTypeClass cls, DataType dtype) {
  switch (cls) {
    case DTypeClass::kAny: return true;
    case DTypeClass::kFloat: return IsFloat(dtype);
    case DTypeClass::kNumeric: return dtype != DataType::kBool;
    case DTypeClass::kInteger: return IsSignedInt(dtype) || IsUnsignedInt(dtype);
    case DTypeClass::kBool: return dtype == DataType::kBool;
  }
  return false;
}

const char* DescribeClass(DTypeClass cls) {
  switch (cls) {
    case DTypeClass::kAny: return "any dtype";
    case DTypeClass::kFloat: return "a float dtype";
    case DTypeClass::kNumeric: return "a numeric dtype";
    case DTypeClass::kInteger: return "an integer dtype";
    case DTypeClass::kBool: return "bool";
  }
  return "?";
}

// Wraps `relation` with a dtype check on every argument.
TypeRelation WithDTypeCheck(DTypeClass cls, TypeRelation relation) {
  return [cls, relation = std::move(relation)](const TypeRelationInput& in)
             -> absl::StatusOr<Type> {
    for (size_t i = 0; i < in.args.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, i));
      if (!Accepts(cls, t->dtype)) {
        return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has dtype ",
                                                       DataTypeName(t->dtype), ", expected ",
                                                       DescribeClass(cls)));
      }
    }
    return relation(in);
  };
}

OpEntry& Unary(OpRegistry& registry, const char* name, DTypeClass cls, const char* summary,
               TypeRelation relation = IdentityRelation) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.relation = WithDTypeCheck(cls, std::move(relation));
  entry.pattern = OpPattern::kElementwise;
  return registry.Register(std::move(entry));
}

OpEntry& Binary(OpRegistry& registry, const char* name, DTypeClass cls, const char* summary,
                TypeRelation relation = BroadcastRelation) {
  OpEntry entry;
  entry.name = name;
  entry.summary = summary;
  entry.min_args = entry.max_args = 2;
  entry.relation = WithDTypeCheck(cls, std::move(relation));
  entry.pattern = OpPattern::kBroadcast;
  return registry.Register(std::move(entry));
}

absl::StatusOr<Type> BoolOfInput(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  return Type(MakeTensorType(t->shape, DataType::kBool));
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  using C = DTypeClass;
  // Unary math.
  Unary(registry, "negative", C::kNumeric, "-x");
  Unary(registry, "abs", C::kNumeric, "|x|");
  Unary(registry, "sign", C::kNumeric, "-1, 0 or 1 by the sign of x");
  Unary(registry, "ceil", C::kFloat, "round up");
  Unary(registry, "floor", C::kFloat, "round down");
  Unary(registry, "round", C::kFloat, "round half to even");
  Unary(registry, "exp", C::kFloat, "e^x");
  Unary(registry, "log", C::kFloat, "natural logarithm");
  Unary(registry, "sqrt", C::kFloat, "square root");
  Unary(registry, "rsqrt", C::kFloat, "1 / sqrt(x)");
  Unary(registry, "reciprocal", C::kFloat, "1 / x");
  Unary(registry, "sigmoid", C::kFloat, "1 / (1 + e^-x)");
  Unary(registry, "tanh", C::kFloat, "hyperbolic tangent");
  Unary(registry, "erf", C::kFloat, "Gauss error function");
  for (const char* trig : {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                           "acosh", "atanh"}) {
    Unary(registry, trig, C::kFloat, "trigonometric function");
  }
  Unary(registry, "nn.relu", C::kNumeric, "max(x, 0)").scale_axis = ScaleAxisRule::kChannelwise;
  Unary(registry, "softplus", C::kFloat, "log(1 + e^x)");
  Unary(registry, "logical_not", C::kBool, "not x");
  Unary(registry, "bitwise_not", C::kInteger, "~x");
  Unary(registry, "isnan", C::kFloat, "x is NaN", BoolOfInput);
  Unary(registry, "isfinite", C::kFloat, "x is finite", BoolOfInput);
  Unary(registry, "isinf", C::kFloat, "x is +inf or -inf", BoolOfInput);

  // Binary arithmetic with broadcasting.
  Binary(registry, "add", C::kNumeric, "a + b").scale_axis = ScaleAxisRule::kChannelwise;
  Binary(registry, "subtract", C::kNumeric, "a - b");
  Binary(registry, "multiply", C::kNumeric, "a * b");
  Binary(registry, "divide", C::kNumeric, "a / b (integers truncate toward zero)");
  Binary(registry, "power", C::kNumeric, "a ^ b");
  Binary(registry, "maximum", C::kNumeric, "max(a, b)");
  Binary(registry, "minimum", C::kNumeric, "min(a, b)");
  Binary(registry, "mod", C::kNumeric, "remainder with the sign of a (C fmod)");
  Binary(registry, "floor_mod", C::kNumeric, "remainder with the sign of b (Python %)");
  Binary(registry, "bitwise_and", C::kInteger, "a & b");
  Binary(registry, "bitwise_or", C::kInteger, "a | b");
  Binary(registry, "bitwise_xor", C::kInteger, "a ^ b");
  Binary(registry, "left_shift", C::kInteger, "a << b");
  Binary(registry, "right_shift", C::kInteger, "a >> b (logical for unsigned)");
  Binary(registry, "logical_and", C::kBool, "a and b");
  Binary(registry, "logical_or", C::kBool, "a or b");
  Binary(registry, "logical_xor", C::kBool, "a xor b");
  for (const char* cmp : {"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"}) {
    Binary(registry, cmp, C::kAny, "elementwise comparison", BroadcastToBoolRelation);
  }

  {
    OpEntry entry;
    entry.name = "where";
    entry.summary = "cond ? a : b, broadcasting all three";
    entry.min_args = entry.max_args = 3;
    entry.pattern = OpPattern::kBroadcast;
    entry.relation = [](const TypeRelationInput& in) -> absl::StatusOr<Type> {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* cond, TensorArg(in, 0));
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* a, TensorArg(in, 1));
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* b, TensorArg(in, 2));
      if (cond->dtype != DataType::kBool) {
        return absl::InvalidArgumentError(absl::StrCat("condition has dtype ",
                                                       DataTypeName(cond->dtype),
                                                       ", expected bool"));
      }
      if (a->dtype != b->dtype) {
        return absl::InvalidArgumentError(absl::StrCat("branches have dtypes ",
                                                       DataTypeName(a->dtype), " and ",
                                                       DataTypeName(b->dtype)));
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Dim> shape, BroadcastShapes(cond->shape, a->shape));
      KILN_ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, b->shape));
      return Type(MakeTensorType(std::move(shape), a->dtype));
    };
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "cast";
    entry.summary = "convert elements to another dtype";
    entry.attrs = {{"dtype", AttrKind::kDataType, std::nullopt, "target dtype", nullptr}};
    entry.pattern = OpPattern::kElementwise;
    entry.relation = [](const TypeRelationInput& in) -> absl::StatusOr<Type> {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
      const DataType to = DataTypeAttr(in.attrs, "dtype");
      if ((t->dtype == DataType::kString) != (to == DataType::kString)) {
        // Strings convert through libkiln_rt, which reads and prints float32, float64 and the
        // integers only.
        DataType number = to == DataType::kString ? t->dtype : to;
        if (number == DataType::kFloat16 || number == DataType::kBFloat16 ||
            number == DataType::kBool) {
          return absl::InvalidArgumentError(absl::StrCat(
              "casts between string and ", DataTypeName(number),
              " are not supported (float32, float64 and the integer types are)"));
        }
      }
      return Type(MakeTensorType(t->shape, to));
    };
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "clip";
    entry.summary = "min(max(x, a_min), a_max)";
    entry.attrs = {{"a_min", AttrKind::kFloat, AttrValue(-INFINITY), "lower bound", nullptr},
                   {"a_max", AttrKind::kFloat, AttrValue(INFINITY), "upper bound", nullptr}};
    entry.pattern = OpPattern::kElementwise;
    entry.relation = WithDTypeCheck(DTypeClass::kNumeric, IdentityRelation);
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "nn.leaky_relu";
    entry.summary = "x if x > 0 else alpha * x";
    entry.attrs = {{"alpha", AttrKind::kFloat, AttrValue(0.01), "negative slope", nullptr}};
    entry.pattern = OpPattern::kElementwise;
    entry.relation = WithDTypeCheck(DTypeClass::kFloat, IdentityRelation);
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
