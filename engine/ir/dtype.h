// Element types of tensors, with their canonical names ("float32", "int64", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

enum class DataType : uint8_t {
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
  // ONNX string tensors: one 8-byte word per element, a pointer to NUL-terminated bytes
  // (engine/runtime/strings.c). Only data movement, casts and the string ops touch them (the
  // ONNX importer refuses any other op on a string); code that just moves elements handles them
  // as the uint64 words they are (DispatchDataType).
  kString,
};

// The numeric element types (every one but kString).
inline constexpr DataType kAllDataTypes[] = {
    DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
    DataType::kInt8,    DataType::kInt16,    DataType::kInt32,   DataType::kInt64,
    DataType::kUInt8,   DataType::kUInt16,   DataType::kUInt32,  DataType::kUInt64,
    DataType::kBool};

// A C string so it mixes with std::string, std::string_view and absl::StrCat alike
// (the installed abseil's string_view is not std::string_view).
const char* DataTypeName(DataType dtype);
std::optional<DataType> ParseDataType(std::string_view name);
// Storage size of one element in bytes (bool takes one byte).
int DataTypeBytes(DataType dtype);
// constexpr so that per-dtype code (DispatchDataType in dtype_dispatch.h) can branch on them
// with `if constexpr`.
constexpr bool IsFloat(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 ||
         dtype == DataType::kFloat32 || dtype == DataType::kFloat64;
}
constexpr bool IsSignedInt(DataType dtype) {
  return dtype == DataType::kInt8 || dtype == DataType::kInt16 || dtype == DataType::kInt32 ||
         dtype == DataType::kInt64;
}
constexpr bool IsUnsignedInt(DataType dtype) {
  return dtype == DataType::kUInt8 || dtype == DataType::kUInt16 ||
         dtype == DataType::kUInt32 || dtype == DataType::kUInt64;
}

}  // namespace kiln
