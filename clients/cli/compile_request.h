// Builds the kiln.v1.CompileRequest the model-taking commands (compile, trace,
// schedule) send: the model file's bytes and the pass and artifact flags.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "clients/cli/command_line.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::cli {

// Reads the MODEL positional (`.kir`/`.txt`: graph IR text, anything else:
// ONNX bytes) and --opt-level, --pipeline, --disable-pass, --required-pass,
// --config, --input-shape and --artifacts. A missing file or a malformed
// flag is an error naming it (a usage error).
absl::StatusOr<kiln::v1::CompileRequest> CompileRequestFromFlags(const CommandLine& line);

// The bytes of a file a flag names (`what`: "model", "numerics input"); a missing or unreadable
// file is an InvalidArgument error naming it.
absl::StatusOr<std::string> ReadFileFlag(const std::string& path, const std::string& what);

// NAME=D0,D1,... (an --input-shape value) into `shape`; errors name the bad part.
absl::Status ParseInputShape(const std::string& spec, kiln::v1::InputShape* shape);

}  // namespace kiln::cli
