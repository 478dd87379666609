// --help for Kiln's command-line tools (tools/*, kilnd): absl's --help lists
// only the flags defined in a file named after the program (kiln-opt.cc) and
// prints "No flags matched" for a main.cc, so each tool names the files that
// define its flags.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace kiln::tools {

// Sets the program's usage message and makes --help and --helpshort list the
// flags defined in `flag_files`: pass __FILE__ from the file that defines
// them (it is the path absl records for its flags). Call before
// absl::ParseCommandLine.
inline void SetToolUsage(absl::string_view usage_message,
                         std::initializer_list<absl::string_view> flag_files) {
  absl::SetProgramUsageMessage(usage_message);
  std::vector<std::string> files;
  for (absl::string_view file : flag_files) {
    // absl filters and shows flag files with their leading slashes removed.
    while (!file.empty() && (file.front() == '/' || file.front() == '\\')) file.remove_prefix(1);
    files.emplace_back(file.data(), file.size());
  }
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [files = std::move(files)](absl::string_view path) {
    for (const std::string& file : files) {
      if (absl::EndsWith(path, file)) return true;
    }
    return false;
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
}

}  // namespace kiln::tools
