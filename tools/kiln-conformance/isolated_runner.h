// Runs conformance cases in forked children, a few at a time, so a case that
// crashes, loops or exhausts memory costs only itself: each child has a wall
// clock limit (then SIGKILL) and an address-space limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "tools/kiln-conformance/conformance_case.h"

namespace kiln::conformance {

struct IsolationLimits {
  int jobs = 2;
  std::chrono::seconds timeout{60};
  uint64_t max_address_space_bytes = uint64_t{8} << 30;
};

// Runs `run(dir)` for every dir in a child process and calls `report(index,
// outcome)` in the parent as each one finishes (in completion order).
void RunIsolated(const std::vector<std::filesystem::path>& dirs, const IsolationLimits& limits,
                 const std::function<CaseOutcome(const std::filesystem::path&)>& run,
                 const std::function<void(size_t, const CaseOutcome&)>& report);

}  // namespace kiln::conformance
