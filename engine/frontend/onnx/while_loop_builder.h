// Building a graph while_loop (engine/op/while_loop.cc) inside a converter: ONNX Loop and Scan
// with run-time trip counts (run_time_loop.cc) and operators whose algorithm is a sequential
// loop, like NonMaxSuppression's greedy selection. The loop's state is (condition, iteration,
// the loop-carried tensors..., accumulators...); the body is built with ordinary ctx.Call()s on
// the state parameters and closed over what it reads from outside (those values become
// invariant parameters, computed once before the loop).
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// The dims of a tensor type whose every dim is static; else an error naming `what`.
absl::StatusOr<std::vector<int64_t>> StaticLoopShape(ConvertContext& ctx, const Type& type,
                                                     const std::string& what);

// The position iteration `iteration` (an int64 scalar) of a loop over `steps` visits: the
// iteration itself, or steps - 1 - iteration when `reverse`.
absl::StatusOr<Expr> StepIndex(ConvertContext& ctx, const Expr& iteration, int64_t steps,
                               bool reverse);

class WhileLoopBuilder {
 public:
  explicit WhileLoopBuilder(ConvertContext& ctx);

  // The int64 scalar counting iterations from 0 (a body parameter).
  const Var& iteration() const { return params_[1]; }
  size_t num_states() const { return params_.size(); }
  const Expr& init(size_t k) const { return init_[k]; }

  // A loop-carried tensor of static shape: the body's parameter for it.
  absl::StatusOr<Var> AddState(const std::string& name, const Expr& init, const std::string& what);

  // Next values, in state order after the condition and the iteration.
  absl::Status SetNext(size_t k, const Expr& next, const std::string& what);

  // A scan output of `rows` rows: an accumulator whose row `row` (an int64 scalar) takes
  // `value` each iteration.
  absl::Status AddAccumulator(const std::string& name, int64_t rows, const Expr& value,
                              const Expr& row, const std::string& what);

  // while_loop(body, init..., invariants...), running while `init_cond`, then `next_cond`,
  // hold; the iteration counts up from 0. The result is the final state, a tuple.
  absl::StatusOr<Expr> Build(const Expr& init_cond, const Expr& next_cond);

  // i + 1 < limit, for the next condition.
  absl::StatusOr<Expr> NextBelow(const Expr& limit);

 private:
  absl::StatusOr<Expr> NextIteration();

  ConvertContext& ctx_;
  std::vector<Var> params_;
  std::vector<Expr> init_, next_;
  Expr next_iteration_;
};

}  // namespace kiln::onnx_frontend
