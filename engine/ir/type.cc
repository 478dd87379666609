// Type construction helpers.
#include "engine/ir/type.h"

namespace kiln {

TensorType MakeTensorType(std::initializer_list<int64_t> shape, DataType dtype) {
  std::vector<Dim> dims;
  dims.reserve(shape.size());
  for (int64_t extent : shape) dims.push_back(Dim::Static(extent));
  return MakeTensorType(std::move(dims), dtype);
}

}  // namespace kiln
