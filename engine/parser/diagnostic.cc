// Formatting of parse errors with the offending line and a caret.
#include "engine/parser/diagnostic.h"

#include <algorithm>
#include <string>

namespace kiln {

namespace {

// Wider lines are shown as a window around the column.
constexpr size_t kMaxShownLine = 160;

}  // namespace

LineColumn OffsetToLineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  LineColumn lc;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++lc.line;
      line_start = i + 1;
    }
  }
  lc.column = static_cast<int>(offset - line_start) + 1;
  return lc;
}

absl::Status MakeParseError(std::string_view source_name, std::string_view text, size_t offset,
                            std::string_view message) {
  offset = std::min(offset, text.size());
  LineColumn lc = OffsetToLineColumn(text, offset);
  size_t line_start = offset - static_cast<size_t>(lc.column - 1);
  size_t line_end = text.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = text.size();
  if (line_end > line_start && text[line_end - 1] == '\r') --line_end;

  // The shown part of the line: all of it, or a window around the column.
  size_t show_begin = line_start;
  size_t show_end = line_end;
  std::string prefix, suffix;
  if (line_end - line_start > kMaxShownLine) {
    show_begin = offset >= line_start + kMaxShownLine / 2 ? offset - kMaxShownLine / 2 : line_start;
    show_end = std::min(line_end, show_begin + kMaxShownLine);
    if (show_begin > line_start) prefix = "...";
    if (show_end < line_end) suffix = "...";
  }
  std::string shown = prefix;
  std::string caret(prefix.size(), ' ');
  for (size_t i = show_begin; i < show_end; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool printable = c == '\t' || (c >= 0x20 && c != 0x7f);
    shown.push_back(printable ? static_cast<char>(c) : '?');
    // Tabs are copied so the caret lines up whatever the tab width.
    // UTF-8 continuation bytes take no column on screen.
    if (i < offset && (c & 0xC0) != 0x80) caret.push_back(c == '\t' ? '\t' : ' ');
  }
  shown += suffix;
  caret.push_back('^');
  return absl::InvalidArgumentError(MessageCat(source_name, ":", lc.line, ":", lc.column,
                                               ": error: ", message, "\n", shown, "\n", caret));
}

}  // namespace kiln
