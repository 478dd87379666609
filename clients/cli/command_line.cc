// The argv parser. Flags may come before or after the subcommand; each is
// checked against the command's flag list once the command is known, so a
// typo is a usage error naming the flag instead of being ignored.
#include "clients/cli/command_line.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {
namespace {

bool IsOptLevelShorthand(const std::string& arg) {
  return arg.size() == 3 && arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '9';
}

bool AcceptedBy(const CommandSpec& command, absl::string_view flag) {
  const auto& global = GlobalFlagNames();
  return std::find(global.begin(), global.end(), flag) != global.end() ||
         std::find(command.flags.begin(), command.flags.end(), flag) != command.flags.end();
}

}  // namespace

bool CommandLine::Has(absl::string_view flag) const { return values_.find(flag) != values_.end(); }

std::optional<std::string> CommandLine::Value(absl::string_view flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> CommandLine::List(absl::string_view flag) const {
  std::vector<std::string> items;
  auto it = values_.find(flag);
  if (it == values_.end()) return items;
  const FlagSpec* spec = FindFlag(flag);
  for (const std::string& value : it->second) {
    if (spec != nullptr && spec->comma_list) {
      for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
        items.emplace_back(absl::StripAsciiWhitespace(item));
      }
    } else {
      items.push_back(value);
    }
  }
  return items;
}

bool CommandLine::Bool(absl::string_view flag) const {
  std::optional<std::string> value = Value(flag);
  return value.has_value() && *value == "true";
}

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine line;
  std::vector<std::string> words;  // the command and its positionals, in order
  std::vector<std::pair<std::string, std::string>> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // everything after is positional (a model named -x.onnx)
      words.insert(words.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "-h") {
      flags.emplace_back("help", "true");
      continue;
    }
    if (IsOptLevelShorthand(arg)) {
      flags.emplace_back("opt-level", arg.substr(2));
      continue;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg.size() > 1 && arg[0] == '-') {
        return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "'"));
      }
      words.push_back(arg);
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::replace(name.begin(), name.end(), '_', '-');
    const FlagSpec* spec = FindFlag(name);
    if (spec == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      if (spec->value_name.empty() && value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " is a switch: give it no value, or true/false"));
      }
    } else if (spec->value_name.empty()) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " needs a value (--", name, "=", spec->value_name, ")"));
    }
    flags.emplace_back(std::move(name), std::move(value));
  }

  if (!words.empty() && words.front() == "help") {  // kiln help [COMMAND]
    words.erase(words.begin());
    flags.emplace_back("help", "true");
  }
  if (!words.empty()) {
    line.command_ = words.front();
    line.positionals_.assign(words.begin() + 1, words.end());
  }
  const CommandSpec* command = line.command_.empty() ? nullptr : FindCommand(line.command_);
  if (!line.command_.empty() && command == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown command '", line.command_, "'"));
  }

  for (auto& [name, value] : flags) {
    if (command != nullptr && !AcceptedBy(*command, name)) {
      return absl::InvalidArgumentError(absl::StrCat(command->name, " does not take --", name));
    }
    std::vector<std::string>& values = line.values_[name];
    if (!values.empty() && !FindFlag(name)->repeatable && name != "help") {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given more than once"));
    }
    values.push_back(std::move(value));
  }
  if (line.help()) return line;

  if (command == nullptr) return absl::InvalidArgumentError("no command given");
  size_t wanted = command->positional.empty() ? 0 : 1;
  if (line.positionals_.size() != wanted) {
    return absl::InvalidArgumentError(
        wanted == 0 ? absl::StrCat(command->name, " takes no arguments, got '",
                                   line.positionals_.front(), "'")
                    : absl::StrCat(command->name, " takes exactly one ", command->positional,
                                   ", got ", line.positionals_.size()));
  }
  return line;
}

}  // namespace kiln::cli
