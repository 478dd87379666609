// Typed node construction for graph passes.
#include "engine/transform/expr_builder.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/dtype_dispatch.h"
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
  return DispatchDataType(dtype, [&]<DataType D>() { return Bytes(ElementFromDouble<D>(value)); });
}

template <typename T>
T Read(const TensorDataNode& data, int64_t index) {
  T value;
  std::memcpy(&value, data.bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

Expr MakeTypedScalar(DataType dtype, double value, Span span) {
  TensorData data = MakeTensorData(dtype, {}, ScalarBytes(dtype, value));
  return MakeRef<ConstantNode>(std::move(data),
                               ExprFields{std::move(span), MakeTensorType({}, dtype), nullptr});
}

double ConstantElement(const TensorDataNode& data, int64_t index) {
  return DispatchDataType(data.dtype, [&]<DataType D>() {
    return ElementToDouble<D>(Read<DataTypeStorage<D>>(data, index));
  });
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
