// ONNX control flow: If with a condition the importer can see (a constant, a folded value, or a
// graph input the caller gives a value for) imports the branch taken; with a run-time
// condition, a graph `if` whose branches must give outputs of one type (lowering makes it a
// branch of main). Loop and Scan are unrolled into straight-line graph code when their
// iteration counts and conditions are known at import and they are short
// (kMaxUnrolledLoopIterations): Loop for its trip count, stopping where its condition turns
// false; Scan over its scan axis (forward or reverse per input and output), batched Scan-8 per
// batch entry (unrolled at any length up to kMaxUnrolledIterations). Every other Loop and Scan
// is a graph while_loop (run_time_loop.cc), a loop of main in native code.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

inline constexpr int64_t kMaxUnrolledIterations = 4096;
// Loops of more iterations (or of iterations not known at import) run as loops.
inline constexpr int64_t kMaxUnrolledLoopIterations = 64;
// At most this many Ifs on run-time conditions per model: each is a scope of the graph that
// passes, printers and lowering walk recursively (a chain of Ifs, each reading the last one's
// result, nests that deep in the graph text).
inline constexpr int64_t kMaxRunTimeIfs = 256;

// Converts a subgraph once: its formal inputs bound to `inputs`, the enclosing graph's values
// visible, its outputs returned in order (names it binds do not leak out).
using RunSubgraph = std::function<absl::StatusOr<std::vector<Expr>>(
    const onnx::GraphProto& body, const std::vector<Expr>& inputs)>;

bool IsControlFlowOp(const std::string& op_type);

// The outputs of a Loop whose trip count or condition is known only at run time (or that runs
// more iterations than Kiln unrolls): a graph while_loop (run_time_loop.cc).
absl::StatusOr<std::vector<Expr>> ConvertRunTimeLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                     const onnx::GraphProto& body);

// A Scan (opset 9+) of more steps than Kiln unrolls, as a graph while_loop: each iteration
// takes one slice of every scan input, each scan output is stacked along its axis.
struct ScanLoop {
  const onnx::GraphProto* body;
  std::vector<Expr> state, inputs;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
  int64_t steps;
};
absl::StatusOr<std::vector<Expr>> ConvertScanAsLoop(ConvertContext& ctx, const RunSubgraph& run,
                                                    const ScanLoop& scan);

// The outputs of the If, Loop or Scan node `ctx` converts.
absl::StatusOr<std::vector<Expr>> ConvertControlFlow(ConvertContext& ctx, const RunSubgraph& run);

}  // namespace kiln::onnx_frontend
