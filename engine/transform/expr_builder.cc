// Typed node construction for graph passes.
#include "engine/transform/expr_builder.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/float16.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"

namespace kiln {

absl::StatusOr<Expr> MakeTypedCall(std::string_view op_name, std::vector<Expr> args, Attrs attrs,
                                   Span span) {
  const OpEntry* entry = OpRegistry::Global().Find(op_name);
  if (entry == nullptr) {
    return absl::InternalError(absl::StrCat("pass built a call of unknown operator ",
                                            std::string(op_name)));
  }
  std::vector<Type> arg_types;
  arg_types.reserve(args.size());
  for (const Expr& arg : args) {
    if (!arg->checked_type) {
      return Expr(MakeCall(GetOp(op_name), std::move(args), std::move(attrs), std::move(span)));
    }
    arg_types.push_back(arg->checked_type);
  }
  absl::StatusOr<Attrs> normalized = NormalizeAttrs(*entry, attrs);
  if (!normalized.ok()) {
    return absl::InternalError(absl::StrCat("pass built an invalid ", std::string(op_name),
                                            " call: ", std::string(normalized.status().message())));
  }
  absl::StatusOr<Type> type = InferCallType(*entry, arg_types, *normalized);
  if (!type.ok()) {
    return absl::InternalError(absl::StrCat("pass built an ill-typed ", std::string(op_name),
                                            " call: ", std::string(type.status().message())));
  }
  return Expr(MakeRef<CallNode>(GetOp(op_name), std::move(args), *std::move(normalized),
                                ExprFields{std::move(span), *std::move(type), nullptr}));
}

namespace {

template <typename T>
std::string Bytes(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

std::string ScalarBytes(DataType dtype, double value) {
  switch (dtype) {
    case DataType::kFloat16: return Bytes(FloatToHalf(static_cast<float>(value)));
    case DataType::kBFloat16: return Bytes(FloatToBFloat16(static_cast<float>(value)));
    case DataType::kFloat32: return Bytes(static_cast<float>(value));
    case DataType::kFloat64: return Bytes(value);
    case DataType::kInt8: return Bytes(static_cast<int8_t>(value));
    case DataType::kInt16: return Bytes(static_cast<int16_t>(value));
    case DataType::kInt32: return Bytes(static_cast<int32_t>(value));
    case DataType::kInt64: return Bytes(static_cast<int64_t>(value));
    case DataType::kUInt8: return Bytes(static_cast<uint8_t>(value));
    case DataType::kUInt16: return Bytes(static_cast<uint16_t>(value));
    case DataType::kUInt32: return Bytes(static_cast<uint32_t>(value));
    case DataType::kUInt64: return Bytes(static_cast<uint64_t>(value));
    case DataType::kBool: return Bytes(static_cast<uint8_t>(value != 0 ? 1 : 0));
  }
  KILN_UNREACHABLE() << "dtype " << static_cast<int>(dtype);
  return {};
}

template <typename T>
double Read(const TensorDataNode& data, int64_t index) {
  T value;
  std::memcpy(&value, data.bytes.data() + index * sizeof(T), sizeof(T));
  return static_cast<double>(value);
}

}  // namespace

Expr MakeTypedScalar(DataType dtype, double value, Span span) {
  TensorData data = MakeTensorData(dtype, {}, ScalarBytes(dtype, value));
  return MakeRef<ConstantNode>(std::move(data),
                               ExprFields{std::move(span), MakeTensorType({}, dtype), nullptr});
}

double ConstantElement(const TensorDataNode& data, int64_t index) {
  switch (data.dtype) {
    case DataType::kFloat16: {
      uint16_t bits;
      std::memcpy(&bits, data.bytes.data() + index * 2, 2);
      return HalfToFloat(bits);
    }
    case DataType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, data.bytes.data() + index * 2, 2);
      return BFloat16ToFloat(bits);
    }
    case DataType::kFloat32: return Read<float>(data, index);
    case DataType::kFloat64: return Read<double>(data, index);
    case DataType::kInt8: return Read<int8_t>(data, index);
    case DataType::kInt16: return Read<int16_t>(data, index);
    case DataType::kInt32: return Read<int32_t>(data, index);
    case DataType::kInt64: return Read<int64_t>(data, index);
    case DataType::kUInt8: return Read<uint8_t>(data, index);
    case DataType::kUInt16: return Read<uint16_t>(data, index);
    case DataType::kUInt32: return Read<uint32_t>(data, index);
    case DataType::kUInt64: return Read<uint64_t>(data, index);
    case DataType::kBool: return Read<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
  }
  KILN_UNREACHABLE() << "dtype " << static_cast<int>(data.dtype);
  return 0;
}

bool AllElementsEqual(const TensorDataNode& data, double value) {
  int64_t n = data.NumElements();
  if (n == 0) return false;
  for (int64_t i = 0; i < n; ++i) {
    if (ConstantElement(data, i) != value) return false;
  }
  return true;
}

}  // namespace kiln
