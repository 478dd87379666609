// The kiln command's exit codes: one per gRPC status a script may want to
// tell apart, and the one place that reports an RPC or usage error on stderr
// in the `kiln: CODE: message` form.
#pragma once

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

namespace kiln::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitOther = 1,  // any other failure (local I/O, other gRPC codes, not serving)
  kExitUsage = 2,  // bad command line, missing model file
  kExitInvalidArgument = 3,
  kExitNotFound = 4,
  kExitUnimplemented = 5,
  kExitResourceExhausted = 6,
  kExitDeadlineExceeded = 7,
  kExitUnavailable = 8,
  kExitUnauthenticated = 9,  // also PERMISSION_DENIED
  kExitCancelled = 10,
};

// The exit code a failed (or successful) call ends the command with.
int ExitCodeFor(grpc::StatusCode code);

// "INVALID_ARGUMENT", "NOT_FOUND", ... as gRPC spells the code.
std::string StatusCodeName(grpc::StatusCode code);

// The exit-code table as printed by --help (one "  N  meaning" line each).
std::string ExitCodeTable();

// Prints `kiln: CODE: message` to stderr and returns ExitCodeFor(code).
int ReportRpcError(const grpc::Status& status);

// Prints `kiln: message` to stderr and returns kExitUsage.
int ReportUsageError(std::string_view message);

// Prints `kiln: message` to stderr and returns kExitOther.
int ReportLocalError(std::string_view message);

}  // namespace kiln::cli
