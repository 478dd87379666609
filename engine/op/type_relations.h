// Building blocks for type relations shared by the op families: argument
// checks, numpy broadcasting over static and symbolic dims, axis handling.
// Errors say what was expected, never which node (the caller adds that).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/op/op_registry.h"

namespace kiln {

// Argument `index` as a tensor type, or an error naming the argument.
absl::StatusOr<const TensorTypeNode*> TensorArg(const TypeRelationInput& in, size_t index);

// Numpy broadcasting of two shapes. Per aligned dim: equal dims stay; a
// static 1 yields the other; a symbolic dim against a static d > 1 yields d
// (it must be d at run time); two different symbols yield an unnamed symbol.
absl::StatusOr<std::vector<Dim>> BroadcastShapes(const std::vector<Dim>& a,
                                                 const std::vector<Dim>& b);

// Normalizes `axis` in [-rank, rank) to [0, rank), or an error.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what = "axis");

// Readers for normalized attributes (the schema guarantees the kind).
int64_t IntAttr(const AttrsNode& attrs, std::string_view key);
double FloatAttr(const AttrsNode& attrs, std::string_view key);
bool BoolAttr(const AttrsNode& attrs, std::string_view key);
const std::string& StringAttr(const AttrsNode& attrs, std::string_view key);
DataType DataTypeAttr(const AttrsNode& attrs, std::string_view key);
std::vector<int64_t> IntArrayAttr(const AttrsNode& attrs, std::string_view key);
std::vector<Dim> ShapeAttr(const AttrsNode& attrs, std::string_view key);

std::string ShapeToString(const std::vector<Dim>& dims);
std::string TypeToString(const Type& type);

// Product of static dims; -1 if any dim is symbolic; errors on int64 overflow.
absl::StatusOr<int64_t> NumElements(const std::vector<Dim>& dims);

// Common relations.
// Result = the type of argument 0 (elementwise unary ops).
absl::StatusOr<Type> IdentityRelation(const TypeRelationInput& in);
// All arguments share a dtype; result shape = broadcast of all shapes.
absl::StatusOr<Type> BroadcastRelation(const TypeRelationInput& in);
// As BroadcastRelation, but the result dtype is bool (comparisons).
absl::StatusOr<Type> BroadcastToBoolRelation(const TypeRelationInput& in);

// Attribute checks for AttrField::check.
std::string CheckNonNegative(const AttrValue& value);
std::string CheckPositive(const AttrValue& value);
std::string CheckAllPositive(const AttrValue& value);
std::string CheckAllNonNegative(const AttrValue& value);

}  // namespace kiln
