// The type of a loop-dialect value: an element type and a vector width.
// Index arithmetic is int64 throughout Kiln's loop IR (one index type keeps
// the simplifier and the interpreter free of width conversions).
#pragma once

#include <string>

#include "engine/ir/dtype.h"

namespace kiln::loop {

struct PrimType {
  DataType dtype = DataType::kInt64;
  int lanes = 1;

  bool is_vector() const { return lanes > 1; }
  PrimType element() const { return PrimType{dtype, 1}; }
  PrimType with_lanes(int n) const { return PrimType{dtype, n}; }
  bool operator==(const PrimType&) const = default;
};

inline constexpr PrimType kIndexType{DataType::kInt64, 1};
inline constexpr PrimType kBoolType{DataType::kBool, 1};
inline constexpr PrimType kFloat32Type{DataType::kFloat32, 1};

// "float32", or "float32x8" for vectors.
std::string PrimTypeName(const PrimType& type);

}  // namespace kiln::loop
