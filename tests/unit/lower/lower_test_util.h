// Helpers for lowering tests: graph text -> the default pipeline of an opt
// level -> LowerModule, and running the result on host tensors.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "engine/loop/host_tensor.h"
#include "engine/loop_transform/register_loop_passes.h"
#include "engine/lower/lower_module.h"
#include "engine/lower/run_lowered_module.h"
#include "engine/parser/parser.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/pipeline.h"
#include "engine/support/status_macros.h"
#include "engine/transform/builtin_passes.h"

namespace kiln::testing {

// `text` parsed and optimized by DefaultPipeline(opt_level).
inline absl::StatusOr<IRModule> Optimize(std::string_view text, int opt_level = 3) {
  KILN_ASSIGN_OR_RETURN(IRModule module, ParseModule(text));
  PassRegistry registry;
  RegisterBuiltinPasses(registry);
  PassContext context;
  context.set_opt_level(opt_level);
  context.set_pass_registry(&registry);
  PassContext::Scope scope(context);
  KILN_RETURN_IF_ERROR(scope.status());
  KILN_ASSIGN_OR_RETURN(Pass pipeline, ParsePipeline(DefaultPipeline(opt_level), registry));
  return (*pipeline)(module, context);
}

inline absl::StatusOr<lower::LoweredModule> OptimizeAndLower(std::string_view text,
                                                             int opt_level = 3,
                                                             const lower::LowerOptions& options = {}) {
  KILN_ASSIGN_OR_RETURN(IRModule optimized, Optimize(text, opt_level));
  return lower::LowerModule(optimized, options);
}

// `lowered` with its module through the default loop pipeline.
inline absl::StatusOr<lower::LoweredModule> RunLoopPipeline(lower::LoweredModule lowered) {
  PassRegistry registry;
  loop::transform::RegisterLoopPasses(registry);
  PassContext context;
  context.set_pass_registry(&registry);
  PassContext::Scope scope(context);
  KILN_RETURN_IF_ERROR(scope.status());
  KILN_ASSIGN_OR_RETURN(Pass pipeline,
                        ParsePipeline(loop::transform::DefaultLoopPipeline(), registry));
  KILN_ASSIGN_OR_RETURN(lowered.module, (*pipeline)(lowered.module, context));
  return lowered;
}

// Runs main on float32 inputs; returns each output's values.
inline std::vector<std::vector<double>> RunFloat(const lower::LoweredModule& lowered,
                                                 std::vector<loop::HostTensor> inputs) {
  std::vector<loop::HostTensor> outputs = lower::MakeOutputTensors(lowered);
  std::vector<loop::HostTensor*> input_ptrs, output_ptrs;
  for (loop::HostTensor& t : inputs) input_ptrs.push_back(&t);
  for (loop::HostTensor& t : outputs) output_ptrs.push_back(&t);
  absl::Status status = lower::RunLoweredModule(lowered, input_ptrs, output_ptrs);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<std::vector<double>> values;
  for (const loop::HostTensor& t : outputs) values.push_back(t.ToDoubles());
  return values;
}

inline loop::HostTensor F32(std::vector<int64_t> shape, const std::vector<double>& values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}

}  // namespace kiln::testing
