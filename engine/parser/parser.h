// Text -> IR for the graph dialect: reads the format of docs/graph-text-format.md
// (what engine/printer/ writes) back into an IRModule, an expression fragment
// or a type. Errors are InvalidArgumentError values reading
// "<source>:LINE:COL: error: ..." followed by the offending line and a caret.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"

namespace kiln {

struct ParseOptions {
  // Names the text in error messages (usually the file path).
  std::string source_name = "<input>";
  // Inputs nesting deeper than this (parentheses, brackets, function and if
  // scopes, inline expressions) are rejected instead of exhausting the stack.
  size_t max_nesting_depth = 1000;
};

// A whole module: optional `#[attrs(...)]`, `def`s, optional `#[metadata]`.
absl::StatusOr<IRModule> ParseModule(std::string_view text, const ParseOptions& options = {});

// A fragment: bindings and a result expression, optionally followed by a
// `#[metadata]` table. Variables it uses without binding are free variables.
absl::StatusOr<Expr> ParseExpr(std::string_view text, const ParseOptions& options = {});

// A single type, e.g. `Tensor[(1, ?, N), float32]`.
absl::StatusOr<Type> ParseType(std::string_view text, const ParseOptions& options = {});

}  // namespace kiln
