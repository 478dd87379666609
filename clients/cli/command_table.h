// What the kiln command accepts: every flag (its value, whether it repeats,
// its help line) and every subcommand with the flags it takes. The parser,
// the commands and --help all read these two tables.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kiln::cli {

struct FlagSpec {
  absl::string_view name;        // dashed form, e.g. "opt-level"
  absl::string_view value_name;  // e.g. "N"; empty for a boolean flag
  // Repeated occurrences accumulate instead of being an error.
  bool repeatable = false;
  // Each value is a comma-separated list (--disable-pass=A,B).
  bool comma_list = false;
  absl::string_view help;
};

struct CommandSpec {
  absl::string_view name;
  absl::string_view positional;          // "MODEL", or empty when the command takes none
  absl::string_view brief;               // one line for the command list
  absl::string_view description;         // what `kiln help COMMAND` says
  std::vector<absl::string_view> flags;  // besides the global ones
};

// Every flag of every command (global ones included); null when unknown.
const FlagSpec* FindFlag(absl::string_view name);
// The flags every command accepts (--server, --token, ...).
const std::vector<absl::string_view>& GlobalFlagNames();

const std::vector<CommandSpec>& Commands();
const CommandSpec* FindCommand(absl::string_view name);

// `kiln --help` (command == nullptr) or `kiln help COMMAND`.
std::string HelpText(const CommandSpec* command);

}  // namespace kiln::cli
