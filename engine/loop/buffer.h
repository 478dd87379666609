// Buffer: a typed, shaped view of storage. Several buffers may view one
// storage (the `data` variable) at different element offsets: that is how
// memory planning and StorageRewrite share memory.
//
// A dimension known only at run time (a model's symbolic sequence length) is -1 in `shape`, and
// `symbolic_shape` then holds every dimension as an index expression of the run's symbols
// (IntImms for the static ones); static buffers leave it empty, so code that only ever meets
// static buffers reads `shape` as before. Symbolic buffers are dense row-major.
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
             std::vector<int64_t> strides, int64_t elem_offset, std::string scope,
             std::vector<PrimExpr> symbolic_shape = {})
      : Object(ObjectKind::kBuffer),
        name(std::move(name)),
        data(std::move(data)),
        dtype(dtype),
        shape(std::move(shape)),
        strides(std::move(strides)),
        elem_offset(elem_offset),
        scope(std::move(scope)),
        symbolic_shape(std::move(symbolic_shape)) {}

  bool is_symbolic() const { return !symbolic_shape.empty(); }
  // Static buffers only (KILN_CHECK).
  int64_t NumElements() const;
  // Strides in elements: `strides` when given, otherwise dense row-major. Static or flat
  // (rank <= 1) buffers only.
  std::vector<int64_t> EffectiveStrides() const;
  // The same for any buffer, as index expressions (constants for static buffers).
  PrimExpr Extent(size_t dim) const;
  std::vector<PrimExpr> ShapeExprs() const;
  PrimExpr NumElementsExpr() const;
  std::vector<PrimExpr> StrideExprs() const;

  const std::string name;
  // The storage this buffer views. Its type is the storage's element type.
  const Var data;
  const DataType dtype;
  const std::vector<int64_t> shape;
  const std::vector<int64_t> strides;  // empty: dense row-major
  const int64_t elem_offset;            // in elements, into `data`
  const std::string scope;              // "global" or "local"
  const std::vector<PrimExpr> symbolic_shape;  // empty: static (see above)
};

// A dense buffer with its own fresh storage variable named after it.
Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape,
                  std::string scope = "global");
// A dense buffer whose dimensions are index expressions; when all are constants this is
// MakeBuffer's static buffer.
Buffer MakeSymbolicBuffer(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                          std::string scope = "global");
// A dense view of `data` with the given (possibly symbolic) dimensions at element 0.
Buffer MakeSymbolicBufferView(std::string name, Var data, DataType dtype,
                              std::vector<PrimExpr> shape, std::string scope = "global");
// A buffer viewing existing storage.
Buffer MakeBufferView(std::string name, Var data, DataType dtype, std::vector<int64_t> shape,
                      int64_t elem_offset = 0, std::vector<int64_t> strides = {},
                      std::string scope = "global");

}  // namespace kiln::loop
