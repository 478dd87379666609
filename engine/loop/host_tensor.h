// HostTensor: a mutable tensor in host memory (dtype, shape, little-endian
// bytes), the argument type of the loop-IR interpreter. Converts to and from
// the immutable TensorData behind graph constants.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/ir/dtype.h"
#include "engine/ir/tensor_data.h"
#include "engine/support/check.h"

namespace kiln::loop {

struct HostTensor {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::string bytes;  // NumElements() * DataTypeBytes(dtype), little-endian
  // A string tensor's words in `bytes` are `const char*`s (null reads as "") into `strings`,
  // which copies of the tensor share (strings are never changed in place).
  std::shared_ptr<const std::vector<std::string>> strings;

  // A string tensor holding `values` (row-major).
  static HostTensor FromStrings(std::vector<int64_t> shape, std::vector<std::string> values);
  // A string tensor's elements.
  std::vector<std::string> Strings() const;
  // After a run left strings it allocated with malloc in this string tensor's words (an
  // output; kiln_rt_strings_keep): copies them into `strings`, repoints the words, frees them.
  void AdoptMallocedStrings();

  int64_t NumElements() const;

  // Zero-filled. Dimensions must be non-negative (a Kiln bug otherwise).
  static HostTensor Zeros(DataType dtype, std::vector<int64_t> shape);
  static HostTensor FromTensorData(const TensorData& data);
  TensorData ToTensorData() const;

  // Each value converted to `dtype` with the interpreter's cast rules
  // (float16/bfloat16 round to nearest even, integers truncate and saturate,
  // bool is `!= 0`). For tests and tools.
  static HostTensor FromDoubles(DataType dtype, std::vector<int64_t> shape,
                                const std::vector<double>& values);
  std::vector<double> ToDoubles() const;

  // Raw elements: T must have the dtype's size (uint16_t holds the bits of
  // float16/bfloat16, uint8_t the bytes of bool).
  template <typename T>
  static HostTensor FromValues(DataType dtype, std::vector<int64_t> shape,
                               const std::vector<T>& values) {
    HostTensor tensor = Zeros(dtype, std::move(shape));
    KILN_CHECK(sizeof(T) == static_cast<size_t>(DataTypeBytes(dtype)) &&
               static_cast<int64_t>(values.size()) == tensor.NumElements())
        << values.size() << " values of " << sizeof(T) << " bytes for a "
        << DataTypeName(dtype) << " tensor of " << tensor.NumElements() << " elements";
    if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
    return tensor;
  }
  template <typename T>
  std::vector<T> Values() const {
    KILN_CHECK(sizeof(T) == static_cast<size_t>(DataTypeBytes(dtype)))
        << "reading " << DataTypeName(dtype) << " elements as " << sizeof(T) << "-byte values";
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
  }
};

}  // namespace kiln::loop
