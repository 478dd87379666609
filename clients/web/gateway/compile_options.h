// What the page asks kilnd to do with a model (opt level, pipeline, disabled passes, config,
// the bisection cut, stages), read from query parameters and checked, turned into the
// kiln.v1 request, and into the `kiln` / `kiln-opt` command lines that reproduce it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "clients/web/gateway/http_exchange.h"
#include "clients/web/gateway/model_store.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::explorer {

struct CompileOptions {
  int opt_level = -1;  // -1: kilnd's default (3)
  std::string pipeline;
  std::vector<std::string> disabled_passes;
  std::vector<std::pair<std::string, std::string>> config;
  int64_t max_pass_index = -1;  // bisection: only the first N passes that are not required
  std::vector<std::string> stages;  // trace stages (empty: graph and loop)
  std::vector<std::string> input_shapes;  // NAME=D0,D1,... for inputs with symbolic dims
  bool fast_math = false;       // fast-math flags on the native code's float arithmetic
  bool check_numerics = false;  // traces: each graph pass's numeric drift
  // The drift tolerance at whose first excess the layers are named (unset: kilnd's 1e-5, 1e-6).
  std::optional<double> numerics_rtol, numerics_atol;
};

// opt_level=0..3, pipeline=, disable=NAME (repeatable, or comma-separated), config=KEY=VALUE
// (repeatable), max_pass_index=N, stages=graph,loop,llvm, input_shape=NAME=D0,D1,...
// (repeatable), fast_math=1, check_numerics=1, numerics_rtol=R, numerics_atol=A. Errors name the parameter.
absl::StatusOr<CompileOptions> CompileOptionsFromQuery(const HttpExchange& exchange);

// The request for `model` with `options` (input shapes were checked by CompileOptionsFromQuery).
v1::CompileRequest MakeCompileRequest(const StoredModel& model, const CompileOptions& options);

// `kiln trace 'NAME' --opt-level=...`: the same trace from the command line.
std::string KilnTraceCommand(const StoredModel& model, const CompileOptions& options);
// `kiln schedule 'NAME' --selector=S --verify ...`: the same schedule record from the command line.
std::string KilnScheduleCommand(const StoredModel& model, const CompileOptions& options,
                                const std::string& selector);
// `kiln-opt 'NAME' -O3 ...`: the options as kiln-opt flags, to which KilnOptCommand adds a pass.
std::string KilnOptPrefix(const StoredModel& model, const CompileOptions& options);
// `PREFIX --print-after=PASS`: prints the IR after `pass_name` (its `occurrence`-th run is the
// one meant, counted from 1; loop passes with --emit=loop; not for LLVM's passes).
std::string KilnOptCommand(const std::string& prefix, const std::string& stage,
                           const std::string& pass_name, int occurrence);

}  // namespace kiln::explorer
