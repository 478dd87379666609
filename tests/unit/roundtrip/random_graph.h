// A seeded generator of random, well-scoped graph modules for property tests
// and benchmarks: calls to several operators with attributes of every kind,
// tuples, tuple indices, lets (also in non-tail position), ifs, nested
// functions and closures, calls of globals, shared subexpressions (a DAG),
// scalar and metadata constants, spans of every form and virtual devices on
// parameters, let variables and function results.
//
// What it never makes, because the text format cannot say it: free variables
// in a module, a variable bound twice, a tuple index on a constant, operators
// outside callee position, empty or one-element SequentialSpans, non-canonical
// NaN payloads, and a `virtual_device` key among function attributes.
#pragma once

#include <cstdint>

#include "engine/ir/module.h"

namespace kiln::test {

struct RandomGraphOptions {
  // Rough cap on the expression nodes of one top-level function.
  int max_nodes_per_function = 40;
  // Nesting of scopes (if-branches, nested functions, let blocks).
  int max_scope_depth = 3;
  int max_functions = 3;
  bool spans = true;
  bool virtual_devices = true;
  // Non-scalar constants (printed as meta[Constant][K]).
  bool metadata_constants = true;
};

// The same seed and options always give the same module.
IRModule RandomModule(uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace kiln::test
