// kiln-opt --check-numerics: after every graph and loop pass, the numeric drift of the module against the
// model as imported (engine/driver/numeric_drift.h), one line on stderr per pass, and after the
// compile the native code's; at the first pass past 1e-5 relative and 1e-6 absolute, the layers
// it changed.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>

#include "engine/driver/numeric_drift.h"

namespace kiln::tools {

class DriftPrinter {
 public:
  // Instruments `options` (the compile kiln-opt is about to run).
  DriftPrinter(uint64_t seed, driver::CompileOptions* options, std::ostream& out);
  void PrintNative(const driver::CompileResult& compiled);

 private:
  std::ostream& out_;
  std::shared_ptr<driver::DriftTracker> tracker_;
};

}  // namespace kiln::tools
