// Type inference for graph IR: every expression gets its checked_type, calls
// get their attributes normalized against the op schema, and let variables
// without annotation get the type of their value.
//
// Incremental by construction: a node that already has a checked type was
// typed together with its whole subtree (nodes are immutable), so inference
// stops there. After a pass rewrites a few nodes, InferType touches only the
// new nodes and the path from them to the root, instead of the whole module
// (re-inferring everything after every pass is what made TVM slow).
#pragma once

#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/op/op_registry.h"

namespace kiln {

// The result type of calling `op` on arguments of `arg_types` with `attrs`
// (normalized or not). Errors name the op and say what was expected.
absl::StatusOr<Type> InferCallType(const OpEntry& op, const std::vector<Type>& arg_types,
                                   const Attrs& attrs);

// Types `expr` (an expression or a function). Free variables must carry type
// annotations. Errors name the node (op and source span) and what was wrong.
absl::StatusOr<Expr> InferType(const Expr& expr);

// Types every function of `module`; functions already typed are shared.
absl::StatusOr<IRModule> InferType(const IRModule& module);

// Shorthand for tests and converters: the checked type as a TensorType, or null.
const TensorTypeNode* TensorTypeOf(const Expr& expr);

}  // namespace kiln
