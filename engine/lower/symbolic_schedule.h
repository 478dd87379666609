// The schedule of a kernel over a symbolic dimension (a sequence length known only at run time).
//
// The default schedule (default_schedule.h) sizes tiles, splits and vector lanes from static
// extents; a loop whose extent only a run knows can be none of those. This one keeps the loop
// nest each computation defines and decides only what needs no extent: elementwise stages are
// inlined into their readers; the statistics of a row normalization (softmax, layer norm) are
// computed inside the output's row loop, so they need a row's worth of storage rather than a
// tensor of run-time size, and so is a reduction that an output of its shape reads (a matmul's
// bias and activation): per row when the row's length is static, else per element; a
// reduction's static innermost axis goes inside its reduce loops, vectorized (a matmul walks
// rows of its right operand, not columns); and the outermost loop over a symbolic dimension of
// each stage computed at root runs in parallel.
#pragma once

#include <vector>

#include "engine/te/schedule.h"

namespace kiln::lower {

// `vector_lanes`: the target's float32 lanes, the width static innermost loops are vectorized by.
te::Schedule CreateSymbolicSchedule(const std::vector<te::Tensor>& outputs, int64_t vector_lanes);

}  // namespace kiln::lower
