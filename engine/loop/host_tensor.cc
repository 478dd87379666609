// HostTensor construction and conversions.
#include "engine/loop/host_tensor.h"

#include <cstdlib>

#include "engine/loop/interpreter_values.h"
#include "engine/support/huge_pages.h"

namespace kiln::loop {

int64_t HostTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

HostTensor HostTensor::Zeros(DataType dtype, std::vector<int64_t> shape) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  for (int64_t d : tensor.shape) KILN_CHECK(d >= 0) << "negative dimension " << d;
  tensor.bytes = ZeroedBytes(static_cast<size_t>(tensor.NumElements() * DataTypeBytes(dtype)));
  return tensor;
}

HostTensor HostTensor::FromTensorData(const TensorData& data) {
  HostTensor tensor;
  tensor.dtype = data->dtype;
  tensor.shape = data->shape;
  tensor.bytes = data->bytes;
  return tensor;
}

HostTensor HostTensor::FromStrings(std::vector<int64_t> shape, std::vector<std::string> values) {
  HostTensor tensor = Zeros(DataType::kString, std::move(shape));
  KILN_CHECK(static_cast<int64_t>(values.size()) == tensor.NumElements())
      << values.size() << " strings for a tensor of " << tensor.NumElements() << " elements";
  auto storage = std::make_shared<std::vector<std::string>>(std::move(values));
  for (size_t i = 0; i < storage->size(); ++i) {
    const char* word = (*storage)[i].c_str();
    std::memcpy(tensor.bytes.data() + i * sizeof(word), &word, sizeof(word));
  }
  tensor.strings = std::move(storage);
  return tensor;
}

std::vector<std::string> HostTensor::Strings() const {
  KILN_CHECK(dtype == DataType::kString) << "Strings() of a " << DataTypeName(dtype) << " tensor";
  std::vector<std::string> values(bytes.size() / sizeof(const char*));
  for (size_t i = 0; i < values.size(); ++i) {
    const char* word;
    std::memcpy(&word, bytes.data() + i * sizeof(word), sizeof(word));
    if (word != nullptr) values[i] = word;
  }
  return values;
}

void HostTensor::AdoptMallocedStrings() {
  KILN_CHECK(dtype == DataType::kString) << "a " << DataTypeName(dtype) << " tensor";
  std::vector<std::string> values = Strings();
  for (size_t i = 0; i < values.size(); ++i) {
    char* word;
    std::memcpy(&word, bytes.data() + i * sizeof(word), sizeof(word));
    std::free(word);
  }
  *this = FromStrings(shape, std::move(values));
}

TensorData HostTensor::ToTensorData() const { return MakeTensorData(dtype, shape, bytes); }

HostTensor HostTensor::FromDoubles(DataType dtype, std::vector<int64_t> shape,
                                   const std::vector<double>& values) {
  HostTensor tensor = Zeros(dtype, std::move(shape));
  KILN_CHECK(static_cast<int64_t>(values.size()) == tensor.NumElements())
      << values.size() << " values for a tensor of " << tensor.NumElements() << " elements";
  auto* out = reinterpret_cast<uint8_t*>(tensor.bytes.data());
  interp::VisitDataType(dtype, [&](auto traits) {
    using T = decltype(traits);
    for (size_t i = 0; i < values.size(); ++i) {
      T::Store(out + i * T::kBytes, T::FromDouble(values[i]));
    }
  });
  return tensor;
}

std::vector<double> HostTensor::ToDoubles() const {
  int64_t n = NumElements();
  KILN_CHECK(static_cast<int64_t>(bytes.size()) == n * DataTypeBytes(dtype))
      << "tensor holds " << bytes.size() << " bytes for " << n << " elements";
  std::vector<double> values(static_cast<size_t>(n));
  const auto* in = reinterpret_cast<const uint8_t*>(bytes.data());
  interp::VisitDataType(dtype, [&](auto traits) {
    using T = decltype(traits);
    for (size_t i = 0; i < values.size(); ++i) values[i] = T::ToDouble(T::Load(in + i * T::kBytes));
  });
  return values;
}

}  // namespace kiln::loop
