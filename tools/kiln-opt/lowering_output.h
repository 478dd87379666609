// kiln-opt's lowering outputs: `--emit=loop` (the lowered module after the
// default loop pipeline, as script, or JSON with --format=json) and
// `--schedule-record=SELECTOR` (the schedule record of the selected kernels,
// as text or JSON lines).
#pragma once

#include <string>
#include <vector>

#include "engine/ir/module.h"
#include "engine/printer/printer.h"

namespace kiln_opt {

struct LoweringOutputOptions {
  // --config assignments (te.keep_schedule_record among them) and the -O
  // level (-1: the default) for the loop pipeline's context.
  std::vector<std::string> configs;
  int opt_level = -1;
  // Empty: print the lowered module; else the kernels' schedule records.
  std::string schedule_record;
  bool json = false;
  kiln::PrintOptions print_options;
};

// Lowers `optimized` and writes the requested output to stdout (errors to
// stderr). Returns the process exit code.
int EmitLowered(const kiln::IRModule& optimized, const LoweringOutputOptions& options);

}  // namespace kiln_opt
