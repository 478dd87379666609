// Reads kiln's argv: a subcommand, its positional arguments and --name=value
// flags checked against command_table.h. Dashes and underscores in flag names
// are the same; `--name value` works for flags that take a value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clients/cli/command_table.h"

namespace kiln::cli {

class CommandLine {
 public:
  // Empty when only help was asked for (`kiln --help`).
  const std::string& command() const { return command_; }
  const std::vector<std::string>& positionals() const { return positionals_; }
  bool help() const { return Has("help"); }

  bool Has(absl::string_view flag) const;
  // The flag's value, or nullopt when absent. For a repeatable flag, the last.
  std::optional<std::string> Value(absl::string_view flag) const;
  // Every value of a repeatable flag, comma lists split (empty items dropped).
  std::vector<std::string> List(absl::string_view flag) const;
  // A boolean flag: absent is false; `--verify`, `--verify=true|false`.
  bool Bool(absl::string_view flag) const;

 private:
  friend absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args);
  std::string command_;
  std::vector<std::string> positionals_;
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// `args` excludes the program name. `kiln help [COMMAND]` parses as the
// command with --help. Errors name the offending argument (a usage error).
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

}  // namespace kiln::cli
