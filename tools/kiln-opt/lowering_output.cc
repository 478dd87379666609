// Lowering, the loop pipeline and schedule records for kiln-opt.
#include "tools/kiln-opt/lowering_output.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "engine/lower/kernel_selector.h"
#include "engine/lower/lower_module.h"
#include "engine/lower/schedule_record.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pipeline.h"
#include "engine/printer/json_printer.h"

namespace kiln_opt {
namespace {

int Fail(const std::string& message) {
  std::cerr << "kiln-opt: " << message << "\n";
  return 1;
}

void Write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

int EmitLowered(const kiln::IRModule& optimized, kiln::PassContext& context,
                const LoweringOutputOptions& options) {
  absl::StatusOr<kiln::lower::LoweredModule> lowered =
      kiln::lower::LowerModule(optimized, kiln::lower::LowerOptionsFromContext(context));
  if (!lowered.ok()) return Fail(std::string(lowered.status().message()));

  if (!options.schedule_record.empty()) {
    absl::StatusOr<std::vector<const kiln::lower::LoweredKernel*>> kernels =
        kiln::lower::SelectKernels(*lowered, options.schedule_record);
    if (!kernels.ok()) return Fail(std::string(kernels.status().message()));
    for (const kiln::lower::LoweredKernel* kernel : *kernels) {
      absl::StatusOr<std::vector<kiln::lower::ScheduleRecordStep>> steps =
          kiln::lower::ExpandScheduleRecord(*kernel);
      if (!steps.ok()) return Fail(std::string(steps.status().message()));
      Write(options.json
                ? kiln::lower::RenderScheduleRecordJson(*kernel, *steps, options.print_options)
                : kiln::lower::RenderScheduleRecordText(*kernel, *steps, options.print_options));
    }
    return 0;
  }

  absl::StatusOr<kiln::IRModule> module = lowered->module;
  if (!options.loop_pipeline.empty()) {
    absl::StatusOr<kiln::Pass> loop_pipeline = kiln::ParsePipeline(options.loop_pipeline);
    if (!loop_pipeline.ok()) {
      return Fail(absl::StrCat("--loop-passes: ", std::string(loop_pipeline.status().message())));
    }
    module = (**loop_pipeline)(lowered->module, context);
  }
  if (!module.ok()) return Fail(std::string(module.status().message()));
  if (options.json) {
    Write(kiln::PrintModuleJson(*module));
    return 0;
  }
  kiln::PrintOptions print_options = options.print_options;
  print_options.format = kiln::PrintOptions::Format::kScript;  // loop IR prints as script
  Write(kiln::PrintModule(*module, print_options));
  return 0;
}

}  // namespace kiln_opt
