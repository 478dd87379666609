// `kiln compile`: sends the model, writes every returned artifact into --out
// under the name the server gave it, and lists them. On a terminal it first
// follows the compile through TracePass to draw progress; the Compile call
// after it is answered from the server's cache (same compile id).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/compile_request.h"
#include "clients/cli/diagnostics.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/pass_progress.h"
#include "kiln/v1/compiler.grpc.pb.h"

namespace kiln::cli {
namespace {

constexpr char kDefaultOutDir[] = "kiln-out";

// Streams the compile's pass events into a progress line; no IR is asked for.
grpc::Status FollowWithProgress(kiln::v1::Compiler::Stub& stub, const Connection& connection,
                                const kiln::v1::CompileRequest& request) {
  kiln::v1::TraceRequest trace;
  *trace.mutable_compile() = request;
  PassProgress progress(std::cerr, request.name());
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  std::unique_ptr<grpc::ClientReader<kiln::v1::PassEvent>> reader =
      stub.TracePass(context.get(), trace);
  kiln::v1::PassEvent event;
  while (reader->Read(&event)) progress.Update(event);
  grpc::Status status = reader->Finish();
  progress.Finish();
  return status;
}

// The server names artifacts; a name is only ever a plain file name, so a
// compromised or buggy server cannot write outside --out.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

int WriteArtifacts(const kiln::v1::CompileResponse& response, const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return ReportLocalError(
        absl::StrCat("cannot create output directory '", dir.string(), "': ", error.message()));
  }
  size_t name_width = 0;
  for (const kiln::v1::Artifact& artifact : response.artifacts()) {
    name_width = std::max(name_width, artifact.name().size());
  }
  for (const kiln::v1::Artifact& artifact : response.artifacts()) {
    if (!IsPlainFileName(artifact.name())) {
      return ReportLocalError(
          absl::StrCat("the server sent an artifact named '", artifact.name(),
                       "', which is not a plain file name; nothing more written"));
    }
    std::filesystem::path path = dir / artifact.name();
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(artifact.content().data(), static_cast<std::streamsize>(artifact.content().size()));
    file.close();
    if (!file) return ReportLocalError(absl::StrCat("cannot write '", path.string(), "'"));
    std::cout << absl::StrFormat("%-*s %10d bytes  sha256:%s\n", name_width, artifact.name(),
                                 artifact.content().size(), artifact.sha256().substr(0, 12));
  }
  return kExitOk;
}

}  // namespace

int RunCompile(const CommandLine& line, const Connection& connection) {
  absl::StatusOr<kiln::v1::CompileRequest> request = CompileRequestFromFlags(line);
  if (!request.ok()) return ReportUsageError(std::string(request.status().message()));
  std::filesystem::path out_dir = line.Value("out").value_or(kDefaultOutDir);

  std::unique_ptr<kiln::v1::Compiler::Stub> stub =
      kiln::v1::Compiler::NewStub(MakeChannel(connection));
  if (isatty(STDERR_FILENO)) {
    grpc::Status status = FollowWithProgress(*stub, connection, *request);
    if (!status.ok()) return ReportRpcError(status);
  }

  kiln::v1::CompileResponse response;
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  grpc::Status status = stub->Compile(context.get(), *request, &response);
  if (!status.ok()) return ReportRpcError(status);

  PrintDiagnostics(response);
  if (int code = WriteArtifacts(response, out_dir); code != kExitOk) return code;
  std::cout << "compile id: " << response.compile_id() << "\n"
            << response.artifacts_size() << " artifacts in " << out_dir.string() << "\n";
  return kExitOk;
}

}  // namespace kiln::cli
