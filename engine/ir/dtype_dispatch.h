// DispatchDataType: code written once for every element type, with the dtype as a compile-time
// constant, instead of a switch with one case per dtype. DataTypeStorage<D> is the C++ type of
// one element in TensorData bytes; ElementToDouble / ElementFromDouble convert it.
#pragma once

#include <cstdint>

#include "engine/ir/dtype.h"
#include "engine/ir/float16.h"
#include "engine/support/check.h"

namespace kiln {

namespace dtype_internal {

template <DataType D>
struct Storage;
template <>
struct Storage<DataType::kFloat16> {
  using type = uint16_t;
};
template <>
struct Storage<DataType::kBFloat16> {
  using type = uint16_t;
};
template <>
struct Storage<DataType::kFloat32> {
  using type = float;
};
template <>
struct Storage<DataType::kFloat64> {
  using type = double;
};
template <>
struct Storage<DataType::kInt8> {
  using type = int8_t;
};
template <>
struct Storage<DataType::kInt16> {
  using type = int16_t;
};
template <>
struct Storage<DataType::kInt32> {
  using type = int32_t;
};
template <>
struct Storage<DataType::kInt64> {
  using type = int64_t;
};
template <>
struct Storage<DataType::kUInt8> {
  using type = uint8_t;
};
template <>
struct Storage<DataType::kUInt16> {
  using type = uint16_t;
};
template <>
struct Storage<DataType::kUInt32> {
  using type = uint32_t;
};
template <>
struct Storage<DataType::kUInt64> {
  using type = uint64_t;
};
template <>
struct Storage<DataType::kBool> {
  using type = uint8_t;
};

}  // namespace dtype_internal

// The C++ type of one element of `D` in TensorData bytes: float16 and bfloat16 are their
// uint16_t bits, bool is one uint8_t byte (any nonzero byte reads as true).
template <DataType D>
using DataTypeStorage = typename dtype_internal::Storage<D>::type;

// Calls `fn.template operator()<D>()` with D the value of `dtype` as a compile-time constant and
// returns its result (every instantiation must return the same type). Write `fn` as
// `[&]<DataType D>() { using T = DataTypeStorage<D>; ... }`, with `if constexpr` (IsFloat(D),
// D == DataType::kBool, ...) for the dtypes that differ.
template <typename Fn>
decltype(auto) DispatchDataType(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DataType::kFloat16: return fn.template operator()<DataType::kFloat16>();
    case DataType::kBFloat16: return fn.template operator()<DataType::kBFloat16>();
    case DataType::kFloat32: return fn.template operator()<DataType::kFloat32>();
    case DataType::kFloat64: return fn.template operator()<DataType::kFloat64>();
    case DataType::kInt8: return fn.template operator()<DataType::kInt8>();
    case DataType::kInt16: return fn.template operator()<DataType::kInt16>();
    case DataType::kInt32: return fn.template operator()<DataType::kInt32>();
    case DataType::kInt64: return fn.template operator()<DataType::kInt64>();
    case DataType::kUInt8: return fn.template operator()<DataType::kUInt8>();
    case DataType::kUInt16: return fn.template operator()<DataType::kUInt16>();
    case DataType::kUInt32: return fn.template operator()<DataType::kUInt32>();
    case DataType::kUInt64: return fn.template operator()<DataType::kUInt64>();
    case DataType::kBool: return fn.template operator()<DataType::kBool>();
    // A string element is a pointer word: moved, compared for identity and zero-filled as one.
    case DataType::kString: return fn.template operator()<DataType::kUInt64>();
  }
  KILN_UNREACHABLE() << "data type " << static_cast<int>(dtype);
  return fn.template operator()<DataType::kBool>();
}

// One stored element of `D` as a double: float16 and bfloat16 widen from their bits, bool is 0
// or 1, the others convert as static_cast does.
template <DataType D>
double ElementToDouble(DataTypeStorage<D> stored) {
  if constexpr (D == DataType::kFloat16) {
    return HalfToFloat(stored);
  } else if constexpr (D == DataType::kBFloat16) {
    return BFloat16ToFloat(stored);
  } else if constexpr (D == DataType::kBool) {
    return stored != 0 ? 1.0 : 0.0;
  } else {
    return static_cast<double>(stored);
  }
}

// `value` as the stored element of `D`: float16 and bfloat16 round through float to nearest
// even, bool is `value != 0`, the others convert as static_cast does (an integer out of range is
// the caller's to avoid).
template <DataType D>
DataTypeStorage<D> ElementFromDouble(double value) {
  if constexpr (D == DataType::kFloat16) {
    return FloatToHalf(static_cast<float>(value));
  } else if constexpr (D == DataType::kBFloat16) {
    return FloatToBFloat16(static_cast<float>(value));
  } else if constexpr (D == DataType::kBool) {
    return static_cast<uint8_t>(value != 0 ? 1 : 0);
  } else {
    return static_cast<DataTypeStorage<D>>(value);
  }
}

}  // namespace kiln
