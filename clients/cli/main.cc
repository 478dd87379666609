// kiln: the command-line client of kilnd. Parses the command line, prints
// help, builds the connection from the global flags and dispatches to the
// subcommand (commands/). Every failure ends with an exit code from
// exit_codes.h.
#include <iostream>
#include <string>
#include <vector>

#include "clients/cli/channel.h"
#include "clients/cli/command_line.h"
#include "clients/cli/command_table.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"

namespace {

using kiln::cli::CommandLine;
using kiln::cli::Connection;

struct Dispatch {
  const char* command;
  int (*run)(const CommandLine&, const Connection&);
};
constexpr Dispatch kDispatch[] = {
    {"compile", kiln::cli::RunCompile},   {"trace", kiln::cli::RunTrace},
    {"schedule", kiln::cli::RunSchedule}, {"passes", kiln::cli::RunPasses},
    {"health", kiln::cli::RunHealth},     {"bisect", kiln::cli::RunBisect},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kiln::cli::HelpText(nullptr);
    return kiln::cli::kExitUsage;
  }
  absl::StatusOr<CommandLine> line = kiln::cli::ParseCommandLine(args);
  if (!line.ok()) {
    kiln::cli::ReportUsageError(std::string(line.status().message()));
    std::cerr << "Run `kiln --help` for usage.\n";
    return kiln::cli::kExitUsage;
  }
  if (line->help()) {
    std::cout << kiln::cli::HelpText(kiln::cli::FindCommand(line->command()));
    return kiln::cli::kExitOk;
  }
  absl::StatusOr<Connection> connection = kiln::cli::ConnectionFromFlags(*line);
  if (!connection.ok()) {
    return kiln::cli::ReportUsageError(std::string(connection.status().message()));
  }
  for (const Dispatch& entry : kDispatch) {
    if (line->command() == entry.command) return entry.run(*line, *connection);
  }
  // ParseCommandLine only accepts commands of the table.
  return kiln::cli::ReportUsageError("unknown command '" + line->command() + "'");
}
