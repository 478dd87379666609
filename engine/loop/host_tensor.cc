// HostTensor construction and conversions.
#include "engine/loop/host_tensor.h"

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
