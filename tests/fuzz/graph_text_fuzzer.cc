// libFuzzer target: arbitrary text into the graph-text parser with the
// limits a request gets (the service's nesting bound); whatever parses is
// printed (the printer recurses over what the parser accepted). Crashes,
// hangs, stack overflows and sanitizer reports are bugs; error statuses are
// the expected answer to most inputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/parser/parser.h"
#include "engine/printer/printer.h"
#include "engine/support/request_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::ParseOptions options;
  options.source_name = "graph_ir_text";
  options.max_nesting_depth = kiln::kMaxSyntaxNesting;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kiln::IRModule> module = kiln::ParseModule(text, options);
  if (!module.ok()) return 0;
  kiln::PrintOptions print;
  print.show_metadata = true;
  (void)kiln::PrintModule(*module, print);
  return 0;
}
