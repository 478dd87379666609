// EliminateCommonSubexpr: computes each distinct value once. ONNX exports
// repeat work (the same Shape/Gather/Cast chain per attention head, the same
// constant per layer); after CSE each is computed once.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Calls of the same (non-stateful) operator with equal attributes and the same
// arguments, tuples of the same fields, projections of the same tuple, and
// small constants with equal contents become one node. The survivor's span is
// the SequentialSpan of every merged node, first occurrence first (as MLIR's
// CSE fuses the locations of the ops it merges), so no origin is lost.
// Nested functions are handled on their own (a node never moves into or out
// of a function); fused (Primitive) functions are left alone.
// Opt level 3; requires InferType (attributes compare after normalization).
Pass EliminateCommonSubexpr();

}  // namespace kiln::transform
