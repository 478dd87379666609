// What one compile may spend: bytes of tensor data it materializes, steps of
// the interpreter it runs (constant folding), and whether it should stop at
// all (a client that left, a deadline that passed). One object per compile,
// made by the driver and handed to every stage: the importer, the passes
// (through the PassContext), the interpreter, lowering and schedule
// expansion. Every stage charges before it allocates and polls between units
// of work, so a 140-byte model cannot make kilnd allocate gigabytes or hold a
// worker past its deadline.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/status.h"

namespace kiln {

struct CompileLimits {
  // Bytes of tensor data the compile materializes: constants from the model
  // and from folding (counted until the compile ends, even when a later fold
  // drops them: a conservative bound), interpreter buffers (given back when
  // a run ends). Requests themselves are bounded elsewhere.
  int64_t max_bytes = int64_t{4} << 30;
  // Interpreter steps (statements, iterations, expression nodes) summed over
  // every constant-folding run of the compile: a few ns each.
  int64_t max_interpreter_steps = int64_t{4'000'000'000};
};

class CompileBudget {
 public:
  explicit CompileBudget(CompileLimits limits = {}, std::function<bool()> is_cancelled = {})
      : limits_(limits), is_cancelled_(std::move(is_cancelled)) {}
  CompileBudget(const CompileBudget&) = delete;
  CompileBudget& operator=(const CompileBudget&) = delete;

  // Reserves `bytes` before they are allocated. Over the budget:
  // ResourceExhausted that starts with `what` (the ONNX node or IR node and
  // the tensor) and says how much was asked and how much is left.
  absl::Status Charge(int64_t bytes, std::string_view what);
  // Gives back bytes that were freed (interpreter buffers after a run).
  void Release(int64_t bytes);
  // Counts interpreter steps; ResourceExhausted once the compile's total
  // passes the limit.
  absl::Status ChargeSteps(int64_t steps);

  // True once the compile should stop (polled between units of work).
  bool cancelled() const { return is_cancelled_ && is_cancelled_(); }
  // Cancelled "the compile was cancelled <where>" when cancelled(), else OK.
  absl::Status CheckCancelled(std::string_view where) const;
  const std::function<bool()>& is_cancelled() const { return is_cancelled_; }

  const CompileLimits& limits() const { return limits_; }
  int64_t live_bytes() const { return live_bytes_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }
  int64_t steps() const { return steps_.load(std::memory_order_relaxed); }

 private:
  const CompileLimits limits_;
  const std::function<bool()> is_cancelled_;
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
  std::atomic<int64_t> steps_{0};
};

}  // namespace kiln
