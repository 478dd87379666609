// The numerics check as the CLI shows it (`kiln trace --check-numerics`, `kiln bisect`): the
// flags that ask kilnd for it, and one line per checked module.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "clients/cli/command_line.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::cli {

// --check-numerics (or `force`), --numerics-seed, --numerics-backend and --numerics-input (the
// files' bytes) into `request`; a malformed value or an unreadable file is a usage error.
absl::Status SetNumericsFlags(const CommandLine& line, kiln::v1::TraceRequest* request,
                              bool force = false);

// "max rel 1.2e-07, max abs 3.0e-08 (interp)", the worst output named when there are several,
// or "not checked: WHY".
std::string DriftLine(const kiln::v1::NumericDrift& drift);

// The summary's kernel precision: a heading naming the reference, the `top` kernels that lost
// the most (relative error, then absolute), and how many computed exactly; one line saying why
// when the kernels were not compared; empty when the drift carries none.
std::string KernelPrecisionText(const kiln::v1::NumericDrift& drift, int top);

}  // namespace kiln::cli
