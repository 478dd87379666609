// Types of graph expressions: tensors (static or symbolic dims and a dtype),
// tuples and function types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/dtype.h"
#include "engine/ir/object.h"

namespace kiln {

// One tensor dimension: a static extent (>= 0) or a symbolic one. A symbolic
// dim may carry a name ("N", "batch"); an unnamed one prints as `?`.
struct Dim {
  static constexpr int64_t kSymbolic = -1;

  static Dim Static(int64_t extent) { return Dim{extent, {}}; }
  static Dim Symbolic(std::string name = "") { return Dim{kSymbolic, std::move(name)}; }

  bool is_static() const { return value >= 0; }
  bool operator==(const Dim& other) const {
    return value == other.value && symbol == other.symbol;
  }
  bool operator!=(const Dim& other) const { return !(*this == other); }

  int64_t value = kSymbolic;
  std::string symbol;  // only for symbolic dims
};

class TypeNode : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k >= ObjectKind::kTensorType && k <= ObjectKind::kFuncType;
  }

 protected:
  explicit TypeNode(ObjectKind kind) : Object(kind) {}
};
using Type = Ref<TypeNode>;

class TensorTypeNode final : public TypeNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kTensorType; }
  TensorTypeNode(std::vector<Dim> shape, DataType dtype)
      : TypeNode(ObjectKind::kTensorType), shape(std::move(shape)), dtype(dtype) {}
  const std::vector<Dim> shape;
  const DataType dtype;
};
using TensorType = Ref<TensorTypeNode>;

class TupleTypeNode final : public TypeNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kTupleType; }
  explicit TupleTypeNode(std::vector<Type> fields)
      : TypeNode(ObjectKind::kTupleType), fields(std::move(fields)) {}
  const std::vector<Type> fields;
};
using TupleType = Ref<TupleTypeNode>;

class FuncTypeNode final : public TypeNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kFuncType; }
  FuncTypeNode(std::vector<Type> arg_types, Type ret_type)
      : TypeNode(ObjectKind::kFuncType),
        arg_types(std::move(arg_types)),
        ret_type(std::move(ret_type)) {}
  const std::vector<Type> arg_types;
  const Type ret_type;
};
using FuncType = Ref<FuncTypeNode>;

inline TensorType MakeTensorType(std::vector<Dim> shape, DataType dtype) {
  return MakeRef<TensorTypeNode>(std::move(shape), dtype);
}
// Convenience for static shapes: MakeTensorType({1, 3, 224, 224}, DataType::kFloat32).
TensorType MakeTensorType(std::initializer_list<int64_t> shape, DataType dtype);
inline TupleType MakeTupleType(std::vector<Type> fields) {
  return MakeRef<TupleTypeNode>(std::move(fields));
}
inline FuncType MakeFuncType(std::vector<Type> args, Type ret) {
  return MakeRef<FuncTypeNode>(std::move(args), std::move(ret));
}

}  // namespace kiln
