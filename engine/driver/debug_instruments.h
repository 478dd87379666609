// What a person debugging a compile asks of the pass manager (kiln-opt's
// --time-passes, --print-after, --reproducer-dir ...), built by the driver so
// every consumer gets the same instruments in the same order, and what they
// report when the compile ends, whether it succeeded or failed.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_diagnostic.h"
#include "engine/pass/print_ir.h"
#include "engine/printer/printer.h"

namespace kiln::driver {

enum class TimePasses { kOff, kTree, kList };

struct DebugOptions {
  TimePasses time_passes = TimePasses::kOff;
  // Which passes' IR to dump, to `out`: as text, or as one JSON pass event
  // per line (docs/ir-json.md) with `dump_json`.
  PrintIRFilter print_ir;
  bool dump_json = false;
  PrintOptions print_options;
  // Where dumps and bisection decisions go (null: nowhere).
  std::ostream* out = nullptr;
  // On a pass failure, write the failing pass's input IR and a RUN line here.
  std::string reproducer_dir;
};

// What the instruments found, filled when the compile ends.
struct CompileReport {
  // Notes and warnings the passes reported, in order.
  std::vector<PassDiagnostic> diagnostics;
  std::string timing;         // with time_passes
  std::string span_coverage;  // with the config pass.span_coverage=report
  std::vector<std::string> reproducers;  // paths written
};

// The debugging instruments of one compile.
class DebugInstruments {
 public:
  // Adds, in order: timing (first, so the others' hooks are not timed), IR
  // dumps, `instruments` (the caller's), then the ones `context`'s config asks
  // for (verifier, span coverage, bisection) and the crash reproducer.
  // `pipeline` is recorded in reproducers.
  static absl::StatusOr<DebugInstruments> Add(
      const DebugOptions& options, const std::vector<std::shared_ptr<PassInstrument>>& instruments,
      const std::string& pipeline, PassContext& context);

  CompileReport Report(const PassContext& context) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace kiln::driver
