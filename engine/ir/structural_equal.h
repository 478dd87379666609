// Structural equality and hashing of IR: two values are equal when they have
// the same shape, with bound variables mapped to each other (a parameter or
// let variable on the left corresponds to the one at the same place on the
// right). Spans are ignored unless asked for; checked types are derived data
// and never compared; virtual devices are compared where the text format
// keeps them (variables and function results), or on every expression with
// compare_all_virtual_devices. A loop-dialect PrimFunc (a module may hold
// both dialects) compares by identity for now: equal only to itself; its hash
// mixes only its kind and attributes.
//
// Neither walk recurses along dataflow: both use explicit stacks, so 20,000-
// node chains compare and hash in constant stack depth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/ir/module.h"

namespace kiln {

struct StructuralEqualOptions {
  // Compare spans too (element-wise for SequentialSpans).
  bool compare_spans = false;
  // Free variables (not bound inside the compared values) are mapped like
  // bound ones instead of having to be the same node.
  bool map_free_vars = false;
  // Compare the virtual device of every expression, not only where the text
  // format keeps them (variables and function results): for checking the
  // complete device representation (PlanDevices, DPL).
  bool compare_all_virtual_devices = false;
};

// Where two values first differ, in a pre-order walk that visits children in
// print order. `path` reads like `@main.body.args[1].attrs["strides"][0]`;
// `lhs` / `rhs` are the innermost IR nodes (expressions, types or functions)
// containing the difference, for the printer to underline.
struct StructuralMismatch {
  std::string path;
  std::string reason;
  ObjectRef lhs;
  ObjectRef rhs;
};

// Accepts IRModule, Expr and Type handles (and null).
std::optional<StructuralMismatch> FindFirstMismatch(const ObjectRef& lhs, const ObjectRef& rhs,
                                                    const StructuralEqualOptions& options = {});

inline bool StructuralEqual(const ObjectRef& lhs, const ObjectRef& rhs,
                            const StructuralEqualOptions& options = {}) {
  return !FindFirstMismatch(lhs, rhs, options).has_value();
}

// Consistent with StructuralEqual under default options (equal values hash
// equally; spans and variable identities do not contribute).
uint64_t StructuralHash(const ObjectRef& value);

}  // namespace kiln
