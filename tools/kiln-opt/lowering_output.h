// kiln-opt's lowering outputs: `--emit=loop` (the lowered module after the
// default loop pipeline, as script, or JSON with --format=json) and
// `--schedule-record=SELECTOR` (the schedule record of the selected kernels,
// as text or JSON lines).
#pragma once

#include <string>
#include <vector>

#include "engine/ir/module.h"
#include "engine/pass/pass_context.h"
#include "engine/printer/printer.h"

namespace kiln_opt {

struct LoweringOutputOptions {
  // The loop pipeline run on the lowered module (empty: none).
  std::string loop_pipeline;
  // Empty: print the lowered module; else the kernels' schedule records.
  std::string schedule_record;
  bool json = false;
  kiln::PrintOptions print_options;
};

// Lowers `optimized` under `context` (the graph pipeline's, still current, so
// its config and instruments apply to lowering and the loop passes as well)
// and writes the requested output to stdout (errors to stderr). Returns the
// process exit code.
int EmitLowered(const kiln::IRModule& optimized, kiln::PassContext& context,
                const LoweringOutputOptions& options);

}  // namespace kiln_opt
