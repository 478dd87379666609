// Which ONNX nodes a bounded value may flow through, and where its bounded axis lands.
//
// A bounded value (ConvertContext::MarkBounded: NonZero, Compress, Unique, NonMaxSuppression or
// TopK whose outputs the model declares with no static shape) is compiled at its static bound
// along one axis, with its run-time length beside it; only the first `length` entries along that
// axis are filled. A node may read it when each entry of its output along the bounded axis
// depends on the entries at that one position only: then the output is bounded too, with the
// same length, and the entries past it are computed from padding and cut after the run like the
// value's own. The ops that keep positions apart: elementwise ops (a non-bounded operand
// broadcast along the axis), Transpose, Unsqueeze, Squeeze of named other axes, Slice and Split
// along other axes, Concat along another axis of parts bounded alike, reductions (and ArgMax,
// ArgMin) along other axes, Gather with bounded indices or of bounded data along another axis,
// and GatherND with bounded index rows: the exports of `x[mask]` (NonZero, Transpose, GatherND),
// `torch.where(c)` (NonZero, Transpose, Split, Squeeze) and detection post-processing
// (NonMaxSuppression's rows, their box column gathered and squeezed, the boxes and scores
// gathered by it, each box's best class, the columns concatenated). Anything else (a reduction
// over the axis, a matmul, a reshape) would read the padding as data. Padding is some valid value of its type (NonZero's index 0, Compress's first slice), not
// a chosen one: an integer divisor or a shift amount is refused.
#ifndef KILN_ENGINE_FRONTEND_ONNX_BOUNDED_FLOW_H_
#define KILN_ENGINE_FRONTEND_ONNX_BOUNDED_FLOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/ir/expr.h"

namespace kiln::onnx_frontend {

// Input `input` of a node is bounded along `axis`.
struct BoundedOperand {
  int input;
  int64_t axis;
};

// The bounded axis of an output `output` of the node `ctx` converted, whose bounded inputs are
// `operands` (all of one length), or an error whose message says why the node cannot take them
// (for the caller to put after the node and the value it names).
absl::StatusOr<int64_t> BoundedAxisThrough(const ConvertContext& ctx,
                                           const std::vector<BoundedOperand>& operands,
                                           const Expr& output);

}  // namespace kiln::onnx_frontend

#endif  // KILN_ENGINE_FRONTEND_ONNX_BOUNDED_FLOW_H_
