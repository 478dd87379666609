// Buffer constructors and layout queries.
#include "engine/loop/buffer.h"

namespace kiln::loop {

int64_t BufferNode::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> BufferNode::EffectiveStrides() const {
  if (!strides.empty()) return strides;
  std::vector<int64_t> result(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) result[i - 2] = result[i - 1] * shape[i - 1];
  return result;
}

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape,
                  std::string scope) {
  Var data = MakeVar(name, PrimType{dtype, 1});
  return MakeBufferView(std::move(name), std::move(data), dtype, std::move(shape), 0, {},
                        std::move(scope));
}

Buffer MakeBufferView(std::string name, Var data, DataType dtype, std::vector<int64_t> shape,
                      int64_t elem_offset, std::vector<int64_t> strides, std::string scope) {
  return Buffer(new BufferNode(std::move(name), std::move(data), dtype, std::move(shape),
                               std::move(strides), elem_offset, std::move(scope)));
}

}  // namespace kiln::loop
