// The immutable, shared storage behind a Constant: dtype, shape and raw
// little-endian bytes. Rewrites share it; weights are never copied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/dtype.h"
#include "engine/ir/object.h"

namespace kiln {

class TensorDataNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kTensorData; }
  // `bytes.size()` must equal NumElements() * DataTypeBytes(dtype); callers
  // that read untrusted input validate before constructing (see MakeTensorData).
  TensorDataNode(DataType dtype, std::vector<int64_t> shape, std::string bytes)
      : Object(ObjectKind::kTensorData),
        dtype(dtype),
        shape(std::move(shape)),
        bytes(std::move(bytes)) {}

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }

  const DataType dtype;
  const std::vector<int64_t> shape;
  const std::string bytes;
};
using TensorData = Ref<TensorDataNode>;

// Checks the byte count against dtype and shape (KILN_CHECK: for data the
// engine made itself; importers validate user data before calling this).
TensorData MakeTensorData(DataType dtype, std::vector<int64_t> shape, std::string bytes);

// Scalars, for tests and simple folding.
TensorData MakeScalar(float value);
TensorData MakeScalar(double value);
TensorData MakeScalar(int32_t value);
TensorData MakeScalar(int64_t value);
TensorData MakeScalar(bool value);

}  // namespace kiln
