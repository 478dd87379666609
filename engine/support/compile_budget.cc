#include "engine/support/compile_budget.h"

#include <algorithm>

#include <string>

#include "absl/strings/str_cat.h"

namespace kiln {

absl::Status CompileBudget::Charge(int64_t bytes, std::string_view what) {
  if (bytes < 0) bytes = limits_.max_bytes + 1;  // an overflowed size: refuse it
  int64_t live = live_bytes_.load(std::memory_order_relaxed);
  while (true) {
    if (bytes > limits_.max_bytes - live) {
      return absl::ResourceExhaustedError(absl::StrCat(
          std::string(what), " needs ", bytes, " bytes, over the compile's memory budget of ",
          limits_.max_bytes, " bytes (", live, " already in use; raise it with --max-compile-bytes)"));
    }
    if (live_bytes_.compare_exchange_weak(live, live + bytes, std::memory_order_relaxed)) break;
  }
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (live + bytes > peak &&
         !peak_bytes_.compare_exchange_weak(peak, live + bytes, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

void CompileBudget::Release(int64_t bytes) {
  live_bytes_.fetch_sub(std::max<int64_t>(bytes, 0), std::memory_order_relaxed);
}

absl::Status CompileBudget::ChargeSteps(int64_t steps) {
  int64_t total = steps_.fetch_add(steps, std::memory_order_relaxed) + steps;
  if (total <= limits_.max_interpreter_steps) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "constant folding exhausted the compile's budget of ", limits_.max_interpreter_steps,
      " interpreter steps"));
}

absl::Status CompileBudget::CheckCancelled(std::string_view where) const {
  if (!cancelled()) return absl::OkStatus();
  return absl::CancelledError(absl::StrCat("the compile was cancelled ", std::string(where)));
}

}  // namespace kiln
