// Unified diffs: dtl computes the shortest edit script (Wu-Manber-Myers
// O(NP)); the hunks are grouped here rather than with dtl's own
// composeUnifiedHunks, whose headers differ from GNU diff's (`-1,0` for an
// empty side, no merging of nearby hunks), so the output matches what
// `patch` and reviewers expect.
#include "clients/cli/unified_diff.h"

#include <algorithm>
#include <dtl/dtl.hpp>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln::cli {
namespace {

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

struct EditLine {
  char mark;  // ' ', '-' or '+'
  const std::string* text;
};

// `@@ -start,count` as GNU prints it: the count is left out when it is 1, and
// an empty range starts at the line before it.
std::string Range(int64_t first_line, int64_t count) {
  if (count == 1) return absl::StrCat(first_line);
  return absl::StrCat(count == 0 ? first_line - 1 : first_line, ",", count);
}

}  // namespace

std::string UnifiedDiff(std::string_view before, std::string_view after,
                        std::string_view before_label, std::string_view after_label, int context) {
  std::vector<std::string> old_lines = SplitLines(before);
  std::vector<std::string> new_lines = SplitLines(after);
  if (old_lines == new_lines) return "";

  dtl::Diff<std::string> diff(old_lines, new_lines);
  diff.onHuge();  // bounds the memory of the path search on large modules
  diff.compose();
  const auto script = diff.getSes().getSequence();

  std::vector<EditLine> edits;
  std::vector<size_t> changes;  // indices into `edits` that are not common
  edits.reserve(script.size());
  for (const auto& [text, info] : script) {
    char mark = info.type == dtl::SES_ADD ? '+' : info.type == dtl::SES_DELETE ? '-' : ' ';
    if (mark != ' ') changes.push_back(edits.size());
    edits.push_back({mark, &text});
  }
  if (changes.empty()) return "";
  // dtl may put an insertion before a deletion in the same run of changes;
  // diff and git print the deleted lines first, which reads as "this became
  // that". Reordering within a run keeps the script valid.
  for (size_t run = 0; run < edits.size();) {
    size_t end = run;
    while (end < edits.size() && edits[end].mark != ' ') ++end;
    std::stable_partition(edits.begin() + run, edits.begin() + end,
                          [](const EditLine& edit) { return edit.mark == '-'; });
    run = end == run ? run + 1 : end;
  }

  const size_t span = static_cast<size_t>(std::max(context, 0));
  std::string out = "--- " + std::string(before_label) + "\n+++ " + std::string(after_label) + "\n";
  // Old and new line numbers (1-based) of edits[position].
  int64_t old_line = 1, new_line = 1;
  size_t position = 0;
  auto advance_to = [&](size_t target) {
    for (; position < target; ++position) {
      if (edits[position].mark != '+') ++old_line;
      if (edits[position].mark != '-') ++new_line;
    }
  };
  for (size_t group_begin = 0; group_begin < changes.size();) {
    // Extend the hunk while the next change is within 2*context common lines.
    size_t group_end = group_begin + 1;
    while (group_end < changes.size() &&
           changes[group_end] - changes[group_end - 1] <= 2 * span + 1) {
      ++group_end;
    }
    size_t first = changes[group_begin] >= span ? changes[group_begin] - span : 0;
    size_t last = std::min(changes[group_end - 1] + span + 1, edits.size());
    advance_to(first);
    int64_t old_count = 0, new_count = 0;
    for (size_t i = first; i < last; ++i) {
      if (edits[i].mark != '+') ++old_count;
      if (edits[i].mark != '-') ++new_count;
    }
    absl::StrAppend(&out, "@@ -", Range(old_line, old_count), " +", Range(new_line, new_count),
                    " @@\n");
    for (size_t i = first; i < last; ++i) {
      out.push_back(edits[i].mark);
      absl::StrAppend(&out, *edits[i].text, "\n");
    }
    group_begin = group_end;
  }
  return out;
}

}  // namespace kiln::cli
