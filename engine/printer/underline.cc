// Caret lines under highlighted ranges.
#include "engine/printer/underline.h"

#include <algorithm>
#include <map>

namespace kiln::printer {

std::string AddUnderlines(std::string_view text, std::vector<TextRange> ranges) {
  if (ranges.empty()) return std::string(text);
  // Per line start offset: the [begin, end) columns to underline on that line.
  std::map<size_t, std::vector<std::pair<size_t, size_t>>> marks;
  for (TextRange range : ranges) {
    size_t begin = std::min(range.begin, text.size());
    size_t end = std::min(std::max(range.end, begin), text.size());
    while (begin < end && (text[begin] == ' ' || text[begin] == '\n')) ++begin;
    size_t line_start = 0;
    if (begin > 0) {
      size_t newline = text.rfind('\n', begin - 1);
      if (newline != std::string_view::npos) line_start = newline + 1;
    }
    size_t line_end = text.find('\n', begin);
    if (line_end == std::string_view::npos) line_end = text.size();
    end = std::min(end, line_end);
    while (end > begin && text[end - 1] == ' ') --end;
    size_t column = begin - line_start;
    size_t width = std::max<size_t>(end - begin, 1);
    marks[line_start].emplace_back(column, column + width);
  }

  std::string out;
  out.reserve(text.size() + text.size() / 4);
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    const bool terminated = line_end != std::string_view::npos;
    if (!terminated) line_end = text.size();
    if (!terminated && line_start == text.size()) break;  // no text after the last newline
    out.append(text.substr(line_start, line_end - line_start));
    auto it = marks.find(line_start);
    if (it != marks.end()) {
      std::string carets;
      for (auto [from, to] : it->second) {
        if (carets.size() < to) carets.resize(to, ' ');
        std::fill(carets.begin() + static_cast<std::ptrdiff_t>(from),
                  carets.begin() + static_cast<std::ptrdiff_t>(to), '^');
      }
      out.push_back('\n');
      out.append(carets);
    }
    if (terminated) out.push_back('\n');
    line_start = line_end + 1;
  }
  return out;
}

}  // namespace kiln::printer
