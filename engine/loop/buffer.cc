// Buffer constructors and layout queries.
#include "engine/loop/buffer.h"

#include "engine/loop/arith/analyzer.h"
#include "engine/support/check.h"

namespace kiln::loop {

int64_t BufferNode::NumElements() const {
  KILN_CHECK(!is_symbolic()) << "NumElements of the symbolic buffer " << name;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> BufferNode::EffectiveStrides() const {
  // A flat symbolic buffer's one stride is 1 (FlattenBuffer leaves only those).
  KILN_CHECK(!is_symbolic() || shape.size() <= 1)
      << "EffectiveStrides of the symbolic buffer " << name;
  if (!strides.empty()) return strides;
  std::vector<int64_t> result(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) result[i - 2] = result[i - 1] * shape[i - 1];
  return result;
}

PrimExpr BufferNode::Extent(size_t dim) const {
  return is_symbolic() ? symbolic_shape[dim] : IntImm(shape[dim]);
}

std::vector<PrimExpr> BufferNode::ShapeExprs() const {
  std::vector<PrimExpr> result;
  for (size_t d = 0; d < shape.size(); ++d) result.push_back(Extent(d));
  return result;
}

PrimExpr BufferNode::NumElementsExpr() const {
  if (!is_symbolic()) return IntImm(NumElements());
  PrimExpr n = IntImm(1);
  for (const PrimExpr& extent : symbolic_shape) n = n * extent;
  return arith::Simplify(n);
}

std::vector<PrimExpr> BufferNode::StrideExprs() const {
  if (!is_symbolic()) {
    std::vector<PrimExpr> result;
    for (int64_t stride : EffectiveStrides()) result.push_back(IntImm(stride));
    return result;
  }
  std::vector<PrimExpr> result(shape.size(), IntImm(1));
  for (size_t i = shape.size(); i > 1; --i) {
    result[i - 2] = arith::Simplify(result[i - 1] * symbolic_shape[i - 1]);
  }
  return result;
}

Buffer MakeSymbolicBufferView(std::string name, Var data, DataType dtype,
                              std::vector<PrimExpr> shape, std::string scope) {
  std::vector<int64_t> static_shape;
  bool symbolic = false;
  for (const PrimExpr& extent : shape) {
    int64_t value;
    bool known = AsConstInt(extent, &value);
    symbolic |= !known;
    static_shape.push_back(known ? value : -1);
  }
  if (!symbolic) shape.clear();
  return Buffer(new BufferNode(std::move(name), std::move(data), dtype, std::move(static_shape),
                               {}, 0, std::move(scope), std::move(shape)));
}

Buffer MakeSymbolicBuffer(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                          std::string scope) {
  Var data = MakeVar(name, PrimType{dtype, 1});
  return MakeSymbolicBufferView(std::move(name), std::move(data), dtype, std::move(shape),
                                std::move(scope));
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
