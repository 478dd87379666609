// Tensor files: TensorProto through ONNX's protobuf API, .npy by its (small, documented) header:
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "tools/common/tensor_files.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/driver/onnx_tensor.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/support/status_macros.h"

namespace kiln::tools {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// NumPy's descr of each dtype NumPy has (bfloat16 has none).
struct NpyType {
  DataType dtype;
  const char* descr;
};
constexpr NpyType kNpyTypes[] = {
    {DataType::kFloat16, "<f2"}, {DataType::kFloat32, "<f4"}, {DataType::kFloat64, "<f8"},
    {DataType::kInt8, "|i1"},    {DataType::kInt16, "<i2"},   {DataType::kInt32, "<i4"},
    {DataType::kInt64, "<i8"},   {DataType::kUInt8, "|u1"},   {DataType::kUInt16, "<u2"},
    {DataType::kUInt32, "<u4"},  {DataType::kUInt64, "<u8"},  {DataType::kBool, "|b1"},
};

// The value of `key` in the header dict: the text after "'key':" up to the next top-level
// comma or closing brace.
std::string DictValue(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  at = header.find(':', at);
  if (at == std::string::npos) return "";
  int depth = 0;
  size_t end = at + 1;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string value = header.substr(at + 1, end - at - 1 + (header[end] == ')' ? 1 : 0));
  size_t first = value.find_first_not_of(" ");
  size_t last = value.find_last_not_of(" ");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

absl::StatusOr<loop::HostTensor> ParseNpy(const std::string& path, const std::string& bytes,
                                          int64_t max_elements) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a NumPy .npy file we read: ", what));
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("no \\x93NUMPY magic");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    offset = 12;
  } else {
    return bad(absl::StrCat("format version ", major));
  }
  if (offset + header_len > bytes.size()) return bad("truncated header");
  std::string header = bytes.substr(offset, header_len);
  std::string descr = DictValue(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);  // quotes
  const NpyType* type = nullptr;
  for (const NpyType& candidate : kNpyTypes) {
    std::string alt = candidate.descr;
    if (descr == alt || (alt[0] == '|' && descr == "<" + alt.substr(1))) type = &candidate;
  }
  if (type == nullptr) return bad(absl::StrCat("dtype '", descr, "' (little-endian numbers and bool only)"));
  if (DictValue(header, "fortran_order") != "False") return bad("Fortran order");
  std::string shape_text = DictValue(header, "shape");
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') {
    return bad("no shape tuple");
  }
  std::vector<int64_t> shape;
  int64_t elements = 1;
  std::stringstream dims(shape_text.substr(1, shape_text.size() - 2));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(" ") == std::string::npos) continue;
    char* end = nullptr;
    long long value = std::strtoll(dim.c_str(), &end, 10);
    if (value < 0 || value > max_elements) return bad(absl::StrCat("dimension '", dim, "'"));
    shape.push_back(value);
    elements *= value;
    if (elements > max_elements) return bad(absl::StrCat("more than ", max_elements, " elements"));
  }
  size_t data_bytes = static_cast<size_t>(elements) * DataTypeBytes(type->dtype);
  if (bytes.size() - offset - header_len != data_bytes) {
    return bad(absl::StrCat("data of ", bytes.size() - offset - header_len, " bytes for shape ",
                            shape_text, " of ", descr, " (", data_bytes, " bytes)"));
  }
  loop::HostTensor tensor = loop::HostTensor::Zeros(type->dtype, shape);
  if (data_bytes > 0) std::memcpy(tensor.bytes.data(), bytes.data() + offset + header_len, data_bytes);
  return tensor;
}

std::string NpyBytes(const loop::HostTensor& tensor) {
  const char* descr = nullptr;
  for (const NpyType& type : kNpyTypes) {
    if (type.dtype == tensor.dtype) descr = type.descr;
  }
  std::string shape = absl::StrJoin(tensor.shape, ", ");
  if (tensor.shape.size() == 1) shape += ",";
  std::string header = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (",
                                    shape, "), }");
  // The header, with its 10 bytes of preamble, pads to a multiple of 64 and ends in '\n'.
  size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + tensor.bytes;
}

int32_t OnnxDataType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return onnx::TensorProto::FLOAT16;
    case DataType::kBFloat16: return onnx::TensorProto::BFLOAT16;
    case DataType::kFloat32: return onnx::TensorProto::FLOAT;
    case DataType::kFloat64: return onnx::TensorProto::DOUBLE;
    case DataType::kInt8: return onnx::TensorProto::INT8;
    case DataType::kInt16: return onnx::TensorProto::INT16;
    case DataType::kInt32: return onnx::TensorProto::INT32;
    case DataType::kInt64: return onnx::TensorProto::INT64;
    case DataType::kUInt8: return onnx::TensorProto::UINT8;
    case DataType::kUInt16: return onnx::TensorProto::UINT16;
    case DataType::kUInt32: return onnx::TensorProto::UINT32;
    case DataType::kUInt64: return onnx::TensorProto::UINT64;
    case DataType::kBool: return onnx::TensorProto::BOOL;
    case DataType::kString: return onnx::TensorProto::STRING;
  }
  return onnx::TensorProto::UNDEFINED;
}

}  // namespace

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<loop::HostTensor> ReadTensorFile(const std::string& path, int64_t max_elements) {
  absl::StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (EndsWith(path, ".npy")) return ParseNpy(path, *bytes, max_elements);
  absl::StatusOr<loop::HostTensor> tensor = driver::HostTensorFromOnnx(*bytes, max_elements);
  if (!tensor.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", tensor.status().message(),
        " (a .npy file or an ONNX TensorProto; sequences and optionals are read elsewhere)"));
  }
  return tensor;
}

namespace {

// The tensors of `sequence`, at most `max_elements` elements in all.
absl::StatusOr<std::vector<loop::HostTensor>> SequenceTensors(const std::string& path,
                                                              const onnx::SequenceProto& sequence,
                                                              int64_t max_elements) {
  if (sequence.elem_type() != onnx::SequenceProto::TENSOR && sequence.tensor_values_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a sequence of non-tensors"));
  }
  std::vector<loop::HostTensor> tensors;
  int64_t elements = 0;
  for (const onnx::TensorProto& tensor : sequence.tensor_values()) {
    absl::StatusOr<TensorData> data = onnx_frontend::TensorFromProto(tensor, max_elements - elements);
    if (!data.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", data.status().message()));
    }
    elements += (*data)->NumElements();
    tensors.push_back(loop::HostTensor::FromTensorData(*data));
  }
  return tensors;
}

}  // namespace

absl::StatusOr<TensorContainer> ReadTensorContainerFile(const std::string& path, bool optional,
                                                        int64_t max_elements) {
  absl::StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  TensorContainer container;
  if (!optional) {
    onnx::SequenceProto sequence;
    if (!sequence.ParseFromString(*bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(path, " is not an ONNX SequenceProto"));
    }
    KILN_ASSIGN_OR_RETURN(container.tensors, SequenceTensors(path, sequence, max_elements));
    return container;
  }
  onnx::OptionalProto proto;
  if (!proto.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ONNX OptionalProto"));
  }
  if (proto.has_tensor_value()) {
    absl::StatusOr<TensorData> data = onnx_frontend::TensorFromProto(proto.tensor_value(), max_elements);
    if (!data.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", data.status().message()));
    }
    container.kind = TensorContainer::kOptionalTensor;
    container.tensors.push_back(loop::HostTensor::FromTensorData(*data));
  } else if (proto.has_sequence_value()) {
    container.kind = TensorContainer::kSequence;
    KILN_ASSIGN_OR_RETURN(container.tensors,
                          SequenceTensors(path, proto.sequence_value(), max_elements));
  } else {
    container.kind = TensorContainer::kEmptyOptional;
  }
  return container;
}

absl::Status WriteTensorFile(const std::string& path, const loop::HostTensor& tensor,
                             const std::string& name) {
  std::string bytes;
  if (EndsWith(path, ".npy")) {
    if (tensor.dtype == DataType::kBFloat16 || tensor.dtype == DataType::kString) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": Kiln writes no .npy of ", DataTypeName(tensor.dtype), "; write .pb"));
    }
    bytes = NpyBytes(tensor);
  } else {
    onnx::TensorProto proto;
    proto.set_name(name);
    proto.set_data_type(OnnxDataType(tensor.dtype));
    for (int64_t d : tensor.shape) proto.add_dims(d);
    if (tensor.dtype == DataType::kString) {
      for (std::string& text : tensor.Strings()) proto.add_string_data(std::move(text));
    } else {
      proto.set_raw_data(tensor.bytes);
    }
    bytes = proto.SerializeAsString();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace kiln::tools
