// LLVM's passes as Kiln pass events: new-pass-manager instrumentation callbacks that report each
// pass through CodegenOptions::on_pass (the driver forwards to the PassContext's instruments, so
// TracePass streams them and Prometheus times them like graph and loop passes). Module passes
// are reported at their depth; function, loop and CGSCC passes, which run once per kernel, are
// summed per pass name and reported one level below the module pass that ran them.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/pass/instrument.h"
#include "llvm/IR/PassInstrumentation.h"

namespace kiln::codegen {

class LlvmPassReporter {
 public:
  using Report = std::function<void(const BackendPassRun&)>;
  explicit LlvmPassReporter(Report report) : report_(std::move(report)) {}

  void Register(llvm::PassInstrumentationCallbacks& callbacks);

 private:
  using Clock = std::chrono::steady_clock;
  struct Open {
    std::string name;
    Clock::time_point start;
  };
  struct Summed {
    std::string name;
    double ms = 0;
    bool changed = false;
  };

  void Before(llvm::StringRef name, llvm::Any ir);
  void After(llvm::StringRef name, const llvm::Module* module, bool changed);

  Report report_;
  std::vector<Open> module_passes_;  // open module-level passes, outermost first
  std::vector<Open> inner_passes_;   // open function/loop/CGSCC-level passes
  std::vector<Summed> summed_;       // inner passes since the innermost module pass began
};

// The functions of `module` as LLVM IR text (no globals: weights would dwarf the code), at most
// `max_bytes` of it.
std::string PrintFunctions(const llvm::Module& module, size_t max_bytes);

}  // namespace kiln::codegen
