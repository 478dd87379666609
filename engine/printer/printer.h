// The public printing API: graph IR (modules, any expression as a fragment, types) as the
// canonical Relay-style text of docs/graph-text-format.md or as a Python-like script, with
// underlines under chosen nodes for diagnostics, and the structural-equality failure report.
// Loop IR (PrimFuncs, statements, expressions, buffers; docs/loop-script-format.md) prints as
// script whatever the format; in a module printed as Relay text, a PrimFunc keeps the script's
// constructs in Relay spelling (`#[T.prim_func]`, `%` locals, braces, `/* si=... */`).
// Output is deterministic: the same IR prints the same bytes, on any thread.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ir/module.h"
#include "engine/ir/structural_equal.h"
#include "engine/printer/doc.h"

namespace kiln {

struct PrintOptions {
  enum class Format { kRelay, kScript };
  Format format = Format::kRelay;
  // `/* si=... */` comments (Relay) or `# si=...` (script).
  bool show_spans = true;
  // The `#[metadata]` table of constants printed as `meta[Constant][K]`.
  bool show_metadata = false;
};

std::string PrintModule(const IRModule& module, const PrintOptions& options = {});
// Any expression on its own: a body of bindings and a result whose free variables are named
// at first use (a Function prints as `fn (...) {...}`).
std::string PrintExpr(const Expr& expr, const PrintOptions& options = {});
std::string PrintType(const Type& type, const PrintOptions& options = {});
// Any of the above, or a loop-dialect node (null prints as "None").
std::string PrintNode(const ObjectRef& node, const PrintOptions& options = {});

// A module as script, with the 1-based line each loop statement (and function) starts on:
// the source text and line table native code's debug info refers to.
std::string PrintModuleWithSourceLines(const IRModule& module, const PrintOptions& options,
                                       std::unordered_map<const Object*, int>* lines);

// As above, with a line of `^^^` under the text of each of `nodes` (every place it prints).
std::string PrintModuleWithUnderlines(const IRModule& module, const std::vector<ObjectRef>& nodes,
                                      const PrintOptions& options = {});
std::string PrintExprWithUnderlines(const Expr& expr, const std::vector<ObjectRef>& nodes,
                                    const PrintOptions& options = {});
std::string PrintNodeWithUnderlines(const ObjectRef& node, const std::vector<ObjectRef>& nodes,
                                    const PrintOptions& options = {});

// The report of a failed structural-equality check:
//   StructuralEqual check failed, first mismatch at <path>: <reason>
//   <lhs printed, mismatch.lhs underlined>
//   <blank line>
//   <rhs printed, mismatch.rhs underlined>
std::string RenderStructuralMismatch(const ObjectRef& lhs, const ObjectRef& rhs,
                                     const StructuralMismatch& mismatch,
                                     const PrintOptions& options = {});

namespace printer {
// Stage one alone (for tests and tools that render Docs themselves).
Doc BuildDoc(const ObjectRef& node, const PrintOptions& options = {});
}  // namespace printer

}  // namespace kiln
