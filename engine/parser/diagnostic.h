// Parse errors as users read them: "<source>:LINE:COL: error: MESSAGE", then
// the offending line and a caret under the column (columns count bytes from 1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"

namespace kiln {

// Concatenates strings and integers into a message. (The installed abseil's
// StrCat takes absl::string_view, which is not std::string_view there.)
template <typename... Parts>
std::string MessageCat(const Parts&... parts) {
  std::string out;
  auto append = [&out](const auto& part) {
    using T = std::decay_t<decltype(part)>;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char>) {
      out += std::to_string(part);
    } else {
      out += part;
    }
  };
  (append(parts), ...);
  return out;
}

struct LineColumn {
  int line = 1;
  int column = 1;
};

// The 1-based line and byte column of `offset` in `text` (an offset past the
// end maps to the end).
LineColumn OffsetToLineColumn(std::string_view text, size_t offset);

// An InvalidArgumentError reading as described above. Control bytes of the
// quoted line are shown as '?' and very long lines are cut around the column.
absl::Status MakeParseError(std::string_view source_name, std::string_view text, size_t offset,
                            std::string_view message);

}  // namespace kiln
