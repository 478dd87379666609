// Buffer: a typed, shaped view of storage. Several buffers may view one
// storage (the `data` variable) at different element offsets: that is how
// memory planning and StorageRewrite share memory. Kiln's loop IR has static
// shapes only; lowering rejects symbolic dimensions with a clear error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/loop/expr.h"

namespace kiln::loop {

class BufferNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kBuffer; }
  BufferNode(std::string name, Var data, DataType dtype, std::vector<int64_t> shape,
             std::vector<int64_t> strides, int64_t elem_offset, std::string scope)
      : Object(ObjectKind::kBuffer),
        name(std::move(name)),
        data(std::move(data)),
        dtype(dtype),
        shape(std::move(shape)),
        strides(std::move(strides)),
        elem_offset(elem_offset),
        scope(std::move(scope)) {}

  int64_t NumElements() const;
  // Strides in elements: `strides` when given, otherwise dense row-major.
  std::vector<int64_t> EffectiveStrides() const;

  const std::string name;
  // The storage this buffer views. Its type is the storage's element type.
  const Var data;
  const DataType dtype;
  const std::vector<int64_t> shape;
  const std::vector<int64_t> strides;  // empty: dense row-major
  const int64_t elem_offset;            // in elements, into `data`
  const std::string scope;              // "global" or "local"
};

// A dense buffer with its own fresh storage variable named after it.
Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape,
                  std::string scope = "global");
// A buffer viewing existing storage.
Buffer MakeBufferView(std::string name, Var data, DataType dtype, std::vector<int64_t> shape,
                      int64_t elem_offset = 0, std::vector<int64_t> strides = {},
                      std::string scope = "global");

}  // namespace kiln::loop
