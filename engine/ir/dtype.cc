// Names and sizes of element types.
#include "engine/ir/dtype.h"

namespace kiln {

const char* DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kInt8: return "int8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kUInt8: return "uint8";
    case DataType::kUInt16: return "uint16";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kBool: return "bool";
    case DataType::kString: return "string";
  }
  return "<invalid dtype>";
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (DataType dtype : kAllDataTypes) {
    if (std::string_view(DataTypeName(dtype)) == name) return dtype;
  }
  if (name == "string") return DataType::kString;
  return std::nullopt;
}

int DataTypeBytes(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kBool: return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt16:
    case DataType::kUInt16: return 2;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUInt32: return 4;
    case DataType::kFloat64:
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kString: return 8;
  }
  return 0;
}

}  // namespace kiln
