// Identifier rules of the graph text (docs/graph-text-format.md "Names").
#include <string>
#include <string_view>
#include <utility>

#include "engine/printer/graph/graph_builders.h"
#include "engine/support/identifier.h"

namespace kiln::printer::graph {

std::string SanitizeName(std::string_view hint) {
  std::string name = ReplaceNonIdentChars(hint, ".");
  // A dot must start a new identifier part, so `%x.0` can only mean tuple access.
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '.') continue;
    const bool part_follows = i + 1 < name.size() && IsIdentStart(name[i + 1]);
    if (!part_follows) name[i] = '_';
  }
  return PrefixToIdentStart(std::move(name));
}

}  // namespace kiln::printer::graph
