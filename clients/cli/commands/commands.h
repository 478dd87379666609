// The kiln subcommands. Each runs one command line against kilnd and returns
// the process exit code (exit_codes.h), having printed any error itself.
#pragma once

#include "clients/cli/channel.h"
#include "clients/cli/command_line.h"

namespace kiln::cli {

int RunCompile(const CommandLine& line, const Connection& connection);
int RunTrace(const CommandLine& line, const Connection& connection);
int RunBisect(const CommandLine& line, const Connection& connection);
int RunSchedule(const CommandLine& line, const Connection& connection);
int RunPasses(const CommandLine& line, const Connection& connection);
int RunHealth(const CommandLine& line, const Connection& connection);

}  // namespace kiln::cli
