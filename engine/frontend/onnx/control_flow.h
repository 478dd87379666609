// ONNX control flow imported as straight-line graph code: If, Loop and Scan whose iteration
// counts and conditions the importer can see (constants, folded values, or graph inputs the
// caller gives values for). If with a known condition imports the branch taken; with a run-time
// condition, both branches (which must give outputs of one type) and a `where`. Loop is unrolled
// for its trip count, stopping where its condition turns false; Scan is unrolled over its scan
// axis (forward or reverse per input and output), batched Scan-8 per batch entry. Unrolling is
// bounded (kMaxUnrolledIterations, and the graph's node limit counts every converted body node).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

inline constexpr int64_t kMaxUnrolledIterations = 4096;

// Converts a subgraph once: its formal inputs bound to `inputs`, the enclosing graph's values
// visible, its outputs returned in order (names it binds do not leak out).
using RunSubgraph = std::function<absl::StatusOr<std::vector<Expr>>(
    const onnx::GraphProto& body, const std::vector<Expr>& inputs)>;

bool IsControlFlowOp(const std::string& op_type);

// The outputs of the If, Loop or Scan node `ctx` converts.
absl::StatusOr<std::vector<Expr>> ConvertControlFlow(ConvertContext& ctx, const RunSubgraph& run);

}  // namespace kiln::onnx_frontend
