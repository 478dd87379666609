// Identifier rules of the graph text (docs/graph-text-format.md "Names").
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

std::string SanitizeName(std::string_view hint) {
  std::string name(hint);
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
  }
  // A dot must start a new identifier part, so `%x.0` can only mean tuple access.
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '.') continue;
    const bool part_follows =
        i + 1 < name.size() &&
        (absl::ascii_isalpha(static_cast<unsigned char>(name[i + 1])) || name[i + 1] == '_');
    if (!part_follows) name[i] = '_';
  }
  if (name.empty() ||
      !(absl::ascii_isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    name = absl::StrCat("v", name);  // (insert(0, ...) trips a GCC 12 -Wrestrict false positive)
  }
  return name;
}

}  // namespace kiln::printer::graph
