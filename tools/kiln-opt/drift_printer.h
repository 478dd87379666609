// kiln-opt --check-numerics: after every graph pass, the numeric drift of the module against the
// model as imported (engine/driver/numeric_drift.h), one line on stderr per pass, and after the
// compile the native code's; at the first pass past 1e-5 relative and 1e-6 absolute, the layers
// it changed.
#pragma once

#include <cstdint>
#include <ostream>

#include "engine/driver/numeric_drift.h"
#include "engine/pass/pass_event.h"

namespace kiln::tools {

class DriftPrinter : public PassObserver {
 public:
  DriftPrinter(uint64_t seed, const driver::CompileOptions& base, std::ostream& out)
      : tracker_(seed, base), out_(out) {}
  void OnPassEvent(const PassEvent& event) override;
  void PrintNative(const driver::CompileResult& compiled);

 private:
  driver::DriftTracker tracker_;
  std::ostream& out_;
  bool attributed_ = false;
};

}  // namespace kiln::tools
