// `kiln passes`: the server's pass registry, one pass per line (name, stage,
// opt level, required passes, summary), or the ListPasses response as JSON.
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/proto_json.h"
#include "kiln/v1/compiler.grpc.pb.h"

namespace kiln::cli {

int RunPasses(const CommandLine& line, const Connection& connection) {
  std::string format = line.Value("format").value_or("text");
  if (format != "text" && format != "json") {
    return ReportUsageError(absl::StrCat("--format: '", format, "' is neither text nor json"));
  }
  std::unique_ptr<kiln::v1::Compiler::Stub> stub =
      kiln::v1::Compiler::NewStub(MakeChannel(connection));
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  kiln::v1::ListPassesResponse response;
  grpc::Status status = stub->ListPasses(context.get(), kiln::v1::ListPassesRequest(), &response);
  if (!status.ok()) return ReportRpcError(status);

  if (format == "json") {
    std::cout << ToJsonLine(response) << "\n";
    return kExitOk;
  }
  size_t name_width = 0, required_width = 1;
  std::vector<std::string> required(response.passes_size());
  for (int i = 0; i < response.passes_size(); ++i) {
    const kiln::v1::PassDescription& pass = response.passes(i);
    required[i] = pass.required().empty() ? "-" : absl::StrJoin(pass.required(), ",");
    name_width = std::max(name_width, pass.name().size());
    required_width = std::max(required_width, required[i].size());
  }
  for (int i = 0; i < response.passes_size(); ++i) {
    const kiln::v1::PassDescription& pass = response.passes(i);
    std::cout << absl::StrFormat("%-*s  %-5s  O%d  %-*s  %s\n", name_width, pass.name(),
                                 pass.stage(), pass.opt_level(), required_width, required[i],
                                 pass.summary());
  }
  return kExitOk;
}

}  // namespace kiln::cli
