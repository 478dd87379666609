// kiln-opt --check-numerics: after every graph and loop pass, the numeric drift of the module against the
// model as imported (engine/driver/numeric_drift.h), one line on stderr per pass, and after the
// compile the native code's; at the first pass past the tolerance (an output over both rtol and
// atol), the layers it changed; after the native code's, every kernel that loses precision on its own (fast-math,
// approximate transcendentals: DriftChecker::CheckKernels).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "engine/driver/numeric_drift.h"

namespace kiln::tools {

class DriftPrinter {
 public:
  // Instruments `options` (the compile kiln-opt is about to run).
  DriftPrinter(uint64_t seed, driver::DriftBackend backend, double rtol, double atol,
               driver::CompileOptions* options, std::ostream& out);
  void PrintNative(const driver::CompileResult& compiled);

  // The first pass (or the native code) whose drift passed the tolerance, with its drift and
  // layers, as one message; empty when none did.
  const std::string& first_excess() const { return first_excess_; }

 private:
  bool Over(const absl::StatusOr<driver::DriftReport>& report) const;

  double rtol_, atol_;
  std::string first_excess_;
  std::ostream& out_;
  std::shared_ptr<driver::DriftTracker> tracker_;
};

}  // namespace kiln::tools
