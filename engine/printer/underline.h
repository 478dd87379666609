// Underline annotations for diagnostics: given rendered text and the byte ranges of the docs
// to highlight, inserts under each affected line a line of `^` at exactly those columns, as in
// the unified printer RFC's structural-equality example.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::printer {

// [begin, end) byte offsets into the rendered text.
struct TextRange {
  size_t begin;
  size_t end;
};

// A range spanning several lines (a whole function, an if) is underlined on its first line
// only, from its start to the end of that line: the first line names the construct, and
// underlining every line would bury the text. Leading whitespace and newlines inside a range
// are skipped, so a statement's range starts at its first character. An empty range gets a
// single `^`. Lines without highlights are copied unchanged.
std::string AddUnderlines(std::string_view text, std::vector<TextRange> ranges);

}  // namespace kiln::printer
