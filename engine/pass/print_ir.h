// PrintIR: dumps the module before and/or after passes, all of them or the
// named ones, optionally only after passes that changed it (change = the
// result is not `same_as` the input: nodes are immutable, so an untouched
// module is the same object). Halide's LoweringLogger and MLIR's
// enableIRPrinting, as one instrument instead of PrintIR passes spliced into
// pipelines.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/pass/instrument.h"
#include "engine/printer/printer.h"

namespace kiln {

// Which passes to print around; shared with kiln-opt's JSON event stream so
// both select the same passes.
struct PrintIRFilter {
  bool before_all = false;
  bool after_all = false;
  std::vector<std::string> before;  // pass names
  std::vector<std::string> after;
  // After-dumps only when the pass changed the module.
  bool only_changed = false;

  // `*_all` skip Sequential containers (their dump would repeat the last
  // pass's); a container is printed when it is named.
  bool PrintBefore(std::string_view pass, bool is_sequential) const;
  bool PrintAfter(std::string_view pass, bool is_sequential, bool changed) const;
  bool empty() const { return !before_all && !after_all && before.empty() && after.empty(); }
};

class PrintIR final : public PassInstrument {
 public:
  // Receives "IR Dump Before InferType" (or After) and the module.
  using Sink = std::function<void(const std::string& title, const IRModule& module)>;

  // Writes `// -----// IR Dump After InferType //----- //` and the printed module.
  PrintIR(PrintIRFilter filter, std::ostream* out, PrintOptions print_options = {});
  PrintIR(PrintIRFilter filter, Sink sink);

  absl::Status RunBeforePass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPassFailed(const IRModule& module_before, const PassInvocation& pass,
                                  const absl::Status& error) override;

 private:
  PrintIRFilter filter_;
  Sink sink_;
  // The inputs of the passes running now, to tell whether each changed them.
  std::vector<IRModule> inputs_;
};

}  // namespace kiln
