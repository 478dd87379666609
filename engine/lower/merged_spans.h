// Spans for a kernel shared by structurally equal primitive functions (lower_module.cc lowers
// one kernel for all of them): the first function rebuilt with, on every node, the sequential
// span of that node and its counterparts in the others. Lowered from it, every statement of the
// kernel names each layer it computes (`# si=[q, k, v]`), so the printed loop IR, the assembly
// provenance and kernel profiles attribute the kernel to all its layers.
#pragma once

#include <vector>

#include "engine/ir/expr.h"

namespace kiln::lower {

// `functions` must be structurally equal; the first is returned unchanged when there is one,
// or when their node walks do not line up node for node (a DAG shared differently).
Function MergedSpans(const std::vector<Function>& functions);

}  // namespace kiln::lower
