// Maps gRPC status codes onto kiln's exit codes and prints errors. The table
// here is the one --help and clients/README.md document.
#include "clients/cli/exit_codes.h"

#include <iostream>

namespace kiln::cli {

int ExitCodeFor(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return kExitOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return kExitInvalidArgument;
    case grpc::StatusCode::NOT_FOUND:
      return kExitNotFound;
    case grpc::StatusCode::UNIMPLEMENTED:
      return kExitUnimplemented;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return kExitResourceExhausted;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return kExitDeadlineExceeded;
    case grpc::StatusCode::UNAVAILABLE:
      return kExitUnavailable;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return kExitUnauthenticated;
    case grpc::StatusCode::CANCELLED:
      return kExitCancelled;
    default:
      return kExitOther;
  }
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

std::string ExitCodeTable() {
  return "   0  ok\n"
         "   1  any other error (local I/O, other gRPC codes, health not SERVING,\n"
         "      a schedule step that failed --verify)\n"
         "   2  usage error (bad flag, missing model file)\n"
         "   3  INVALID_ARGUMENT (bad model, unknown pass or config key)\n"
         "   4  NOT_FOUND (unknown schedule selector)\n"
         "   5  UNIMPLEMENTED (unsupported operator)\n"
         "   6  RESOURCE_EXHAUSTED (server queue full, message too large)\n"
         "   7  DEADLINE_EXCEEDED\n"
         "   8  UNAVAILABLE (server not reachable)\n"
         "   9  UNAUTHENTICATED or PERMISSION_DENIED\n"
         "  10  CANCELLED\n";
}

int ReportRpcError(const grpc::Status& status) {
  std::cerr << "kiln: " << StatusCodeName(status.error_code()) << ": " << status.error_message()
            << "\n";
  return ExitCodeFor(status.error_code());
}

int ReportUsageError(std::string_view message) {
  std::cerr << "kiln: " << message << "\n";
  return kExitUsage;
}

int ReportLocalError(std::string_view message) {
  std::cerr << "kiln: " << message << "\n";
  return kExitOther;
}

}  // namespace kiln::cli
