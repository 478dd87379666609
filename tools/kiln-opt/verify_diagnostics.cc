// Expectations read from the input, diagnostics read from kiln-opt's stderr,
// and the matching of the two (verify_diagnostics.h has the rules).
#include "tools/kiln-opt/verify_diagnostics.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

namespace kiln_opt {

namespace {

constexpr std::string_view kToolPrefix = "kiln-opt: ";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The characters of a bare span source name (docs/graph-text-format.md).
bool IsSpanNameChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '.' || c == '-' || c == '/';
}

// The lines of `text` without their '\n' (nor a '\r' before it); a last line
// without '\n' counts, nothing after a final '\n' does.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

std::string_view SkipSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

// A non-negative decimal that fits an int, or nullopt.
std::optional<int> ParseCount(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// What one line says about expectations.
struct LineExpectation {
  enum class Kind { kNone, kMalformed, kExpectation } kind = Kind::kNone;
  Severity severity = Severity::kError;
  std::string designator;  // without '@'; empty: this line
  std::string substring;
  std::string problem;  // for kMalformed
};

LineExpectation Malformed(std::string problem) {
  LineExpectation out;
  out.kind = LineExpectation::Kind::kMalformed;
  out.problem = std::move(problem);
  return out;
}

// Finds the expectation of one line: the first `expected-KIND` followed by a
// designator or `{{`.
LineExpectation ParseLine(std::string_view line) {
  constexpr std::string_view kExpected = "expected-";
  size_t at = line.find(kExpected);
  for (; at != std::string_view::npos; at = line.find(kExpected, at + 1)) {
    // "unexpected-error" and the like are words of prose.
    if (at > 0) {
      char before = line[at - 1];
      if (IsLetter(before) || IsDigit(before) || before == '_' || before == '-') continue;
    }
    std::string_view rest = line.substr(at + kExpected.size());
    LineExpectation found;
    std::string_view kind;
    for (std::string_view name : {"error", "warning", "note"}) {
      if (StartsWith(rest, name)) kind = name;
    }
    if (kind.empty()) continue;  // expected-remark, expected-output, prose
    found.severity = kind == "error"     ? Severity::kError
                     : kind == "warning" ? Severity::kWarning
                                         : Severity::kNote;
    rest.remove_prefix(kind.size());
    if (StartsWith(rest, "-re")) {
      return Malformed("regular-expression expectations (-re) are not supported");
    }
    // "expected-errors" and the like are prose too.
    if (!rest.empty() && (IsLetter(rest.front()) || IsDigit(rest.front()) || rest.front() == '_' ||
                          rest.front() == '-')) {
      continue;
    }
    rest = SkipSpaces(rest);
    bool has_designator = false;
    if (StartsWith(rest, "@")) {
      has_designator = true;
      rest.remove_prefix(1);
      size_t end = 0;
      while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t' && rest[end] != '{') {
        ++end;
      }
      std::string_view designator = rest.substr(0, end);
      rest.remove_prefix(end);
      bool offset = !designator.empty() &&
                    (designator.front() == '+' || designator.front() == '-') &&
                    ParseCount(designator.substr(1)).has_value();
      if (!offset && designator != "above" && designator != "below" && designator != "unknown") {
        return Malformed("unknown designator '@" + std::string(designator) +
                         "' (expected @+N, @-N, @above, @below or @unknown)");
      }
      found.designator = std::string(designator);
      rest = SkipSpaces(rest);
    }
    if (!StartsWith(rest, "{{")) {
      if (has_designator || StartsWith(rest, "{")) {
        return Malformed("the message must follow in double braces");
      }
      continue;  // prose mentioning expected-error
    }
    rest.remove_prefix(2);
    size_t close = rest.rfind("}}");
    if (close == std::string_view::npos) {
      return Malformed("the message has no closing double brace");
    }
    if (close == 0) return Malformed("an empty message would match any diagnostic");
    found.substring = std::string(rest.substr(0, close));
    found.kind = LineExpectation::Kind::kExpectation;
    return found;
  }
  return {};
}

// `SOURCE:LINE:COL: SEVERITY: ...` (the form of parse errors).
struct Location {
  std::string_view source;
  int line = 0;
  Severity severity = Severity::kError;
};

std::optional<Location> ParseLocation(std::string_view text) {
  // The earliest ": SEVERITY: " ends the location.
  size_t best = std::string_view::npos;
  Severity severity = Severity::kError;
  for (Severity candidate : {Severity::kError, Severity::kWarning, Severity::kNote}) {
    std::string marker = std::string(": ") + SeverityName(candidate) + ": ";
    size_t at = text.find(marker);
    if (at < best) {
      best = at;
      severity = candidate;
    }
  }
  if (best == std::string_view::npos) return std::nullopt;
  std::string_view location = text.substr(0, best);  // SOURCE:LINE:COL
  size_t column_colon = location.rfind(':');
  if (column_colon == std::string_view::npos || column_colon == 0) return std::nullopt;
  size_t line_colon = location.rfind(':', column_colon - 1);
  if (line_colon == std::string_view::npos) return std::nullopt;
  std::optional<int> column = ParseCount(location.substr(column_colon + 1));
  std::optional<int> line =
      ParseCount(location.substr(line_colon + 1, column_colon - line_colon - 1));
  if (!column || !line) return std::nullopt;
  Location out;
  out.source = location.substr(0, line_colon);
  out.line = *line;
  out.severity = severity;
  return out;
}

// A caret under a column: blanks, then '^'.
bool IsCaretLine(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty() || line.back() != '^') return false;
  line.remove_suffix(1);
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// The names inside every `OPEN ... CLOSE` of `text`, split at ", ".
void AppendNamesBetween(std::string_view text, std::string_view open, std::string_view close,
                        std::vector<std::string>* names) {
  size_t at = text.find(open);
  while (at != std::string_view::npos) {
    size_t begin = at + open.size();
    size_t end = text.find(close, begin);
    if (end == std::string_view::npos) return;
    std::string_view list = text.substr(begin, end - begin);
    while (!list.empty()) {
      size_t comma = list.find(", ");
      std::string_view name = list.substr(0, comma);
      if (!name.empty()) names->emplace_back(name);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 2);
    }
    at = text.find(open, end);
  }
}

// The span source names a reported message mentions.
std::vector<std::string> SpanNamesIn(std::string_view text) {
  std::vector<std::string> names;
  AppendNamesBetween(text, "(span ", ")", &names);  // type errors, device planning
  AppendNamesBetween(text, "(si=[", "])", &names);  // FormatDiagnostic
  return names;
}

// Whether the body of one span comment (what follows `si=`) names `name`,
// bare (`name`, `name:1:2-3:4`, `[a, name]`) or quoted (`"name"`).
bool SpanCommentNames(std::string_view comment, std::string_view name) {
  for (size_t at = comment.find(name); at != std::string_view::npos;
       at = comment.find(name, at + 1)) {
    char before = at == 0 ? '=' : comment[at - 1];
    size_t end = at + name.size();
    char after = end < comment.size() ? comment[end] : ' ';
    if (before == '"' && after == '"') return true;
    bool bare_start = before == '=' || before == '[' || before == ' ' || before == ',';
    if (bare_start && !IsSpanNameChar(after) && after != '"') return true;
  }
  return false;
}

std::string Located(std::string_view source_name, int line) {
  std::string out(source_name);
  if (line > 0) out += ":" + std::to_string(line);
  return out + ": error: ";
}

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string DescribeLines(const std::vector<int>& lines) {
  if (lines.empty()) return "tied to no line";
  std::string out = lines.size() == 1 ? "on line " : "on lines ";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(lines[i]);
  }
  return out;
}

bool LineMatches(const Expectation& expectation, const ReportedDiagnostic& diagnostic) {
  if (expectation.line == 0) return diagnostic.lines.empty();
  return std::find(diagnostic.lines.begin(), diagnostic.lines.end(), expectation.line) !=
         diagnostic.lines.end();
}

}  // namespace

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

ExpectationList ParseExpectations(std::string_view text) {
  ExpectationList out;
  std::vector<std::string_view> lines = Lines(text);
  int last_plain_line = 0;            // the last line holding no expectation
  std::vector<size_t> waiting_below;  // indices of @below expectations
  for (size_t i = 0; i < lines.size(); ++i) {
    int line_number = static_cast<int>(i) + 1;
    LineExpectation found = ParseLine(lines[i]);
    if (found.kind == LineExpectation::Kind::kNone) {
      for (size_t index : waiting_below) out.expectations[index].line = line_number;
      waiting_below.clear();
      last_plain_line = line_number;
      continue;
    }
    if (found.kind == LineExpectation::Kind::kMalformed) {
      out.malformed.push_back({line_number, std::move(found.problem)});
      continue;
    }
    Expectation expectation;
    expectation.severity = found.severity;
    expectation.substring = std::move(found.substring);
    expectation.comment_line = line_number;
    const std::string& designator = found.designator;
    if (designator.empty()) {
      expectation.line = line_number;
    } else if (designator == "unknown") {
      expectation.line = 0;
    } else if (designator == "above") {
      if (last_plain_line == 0) {
        out.malformed.push_back({line_number, "@above, but no line above holds no expectation"});
        continue;
      }
      expectation.line = last_plain_line;
    } else if (designator == "below") {
      waiting_below.push_back(out.expectations.size());
    } else {
      int offset = *ParseCount(std::string_view(designator).substr(1));
      int target = designator.front() == '+' ? line_number + offset : line_number - offset;
      if (target < 1) {
        out.malformed.push_back({line_number, "@" + designator + " points above the first line"});
        continue;
      }
      expectation.line = target;
    }
    out.expectations.push_back(std::move(expectation));
  }
  // @below with no plain line after it: nothing can be reported there.
  for (auto it = waiting_below.rbegin(); it != waiting_below.rend(); ++it) {
    out.malformed.push_back(
        {out.expectations[*it].comment_line, "@below, but no line below holds no expectation"});
    out.expectations.erase(out.expectations.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  std::sort(
      out.malformed.begin(), out.malformed.end(),
      [](const MalformedExpectation& a, const MalformedExpectation& b) { return a.line < b.line; });
  return out;
}

std::vector<int> LinesWritingSpan(std::string_view input_text, std::string_view span_name) {
  std::vector<int> out;
  if (span_name.empty()) return out;
  std::vector<std::string_view> lines = Lines(input_text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    // Every `si=` starts a span comment body (`let_si=` included).
    for (size_t at = line.find("si="); at != std::string_view::npos;
         at = line.find("si=", at + 1)) {
      size_t begin = at + 3;
      size_t end = line.find("*/", begin);
      if (end == std::string_view::npos) end = line.size();
      if (SpanCommentNames(line.substr(begin, end - begin), span_name)) {
        out.push_back(static_cast<int>(i) + 1);
        break;
      }
    }
  }
  return out;
}

ReportedStderr ParseReportedStderr(std::string_view stderr_text, std::string_view input_text,
                                   std::string_view source_name) {
  ReportedStderr out;
  std::vector<std::string_view> lines = Lines(stderr_text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!StartsWith(line, kToolPrefix) ||
        StartsWith(line.substr(kToolPrefix.size()), "reproducer written to ")) {
      out.other.append(line);
      out.other.push_back('\n');
      continue;
    }
    std::string_view text = line.substr(kToolPrefix.size());
    ReportedDiagnostic diagnostic;
    diagnostic.text = std::string(text);
    if (std::optional<Location> location = ParseLocation(text)) {
      diagnostic.severity = location->severity;
      if (location->source == source_name) diagnostic.lines.push_back(location->line);
      // The quoted line and the caret under the column belong to it.
      if (i + 2 < lines.size() && IsCaretLine(lines[i + 2])) i += 2;
    } else {
      if (StartsWith(text, "warning: ")) {
        diagnostic.severity = Severity::kWarning;
      } else if (StartsWith(text, "note: ")) {
        diagnostic.severity = Severity::kNote;
      }
      for (const std::string& name : SpanNamesIn(text)) {
        for (int written : LinesWritingSpan(input_text, name)) diagnostic.lines.push_back(written);
      }
      std::sort(diagnostic.lines.begin(), diagnostic.lines.end());
      diagnostic.lines.erase(std::unique(diagnostic.lines.begin(), diagnostic.lines.end()),
                             diagnostic.lines.end());
    }
    out.diagnostics.push_back(std::move(diagnostic));
  }
  return out;
}

std::vector<std::string> VerifyDiagnostics(const ExpectationList& expected,
                                           const std::vector<ReportedDiagnostic>& reported,
                                           std::string_view source_name) {
  std::vector<std::string> failures;
  for (const MalformedExpectation& malformed : expected.malformed) {
    failures.push_back(Located(source_name, malformed.line) +
                       "malformed expectation: " + malformed.message);
  }
  const std::vector<Expectation>& expectations = expected.expectations;
  std::vector<bool> matched(expectations.size(), false);
  std::vector<const ReportedDiagnostic*> unexpected;
  for (const ReportedDiagnostic& diagnostic : reported) {
    bool found = false;
    for (size_t k = 0; k < expectations.size() && !found; ++k) {
      const Expectation& expectation = expectations[k];
      if (matched[k] || expectation.severity != diagnostic.severity ||
          !LineMatches(expectation, diagnostic) ||
          diagnostic.text.find(expectation.substring) == std::string::npos) {
        continue;
      }
      matched[k] = true;
      found = true;
    }
    if (!found) unexpected.push_back(&diagnostic);
  }
  for (size_t k = 0; k < expectations.size(); ++k) {
    if (matched[k]) continue;
    const Expectation& expectation = expectations[k];
    std::string message = Located(source_name, expectation.line) + "expected " +
                          SeverityName(expectation.severity) + " " + Quoted(expectation.substring) +
                          " was not produced";
    if (expectation.line == 0) message += " (an @unknown one, tied to no line)";
    if (expectation.comment_line != expectation.line) {
      message += " (expectation written on line " + std::to_string(expectation.comment_line) + ")";
    }
    // The usual mistake: the right message on another line.
    for (const ReportedDiagnostic* diagnostic : unexpected) {
      if (diagnostic->severity == expectation.severity &&
          diagnostic->text.find(expectation.substring) != std::string::npos) {
        message += "; a matching " + std::string(SeverityName(diagnostic->severity)) +
                   " was reported " + DescribeLines(diagnostic->lines);
        break;
      }
    }
    failures.push_back(std::move(message));
  }
  for (const ReportedDiagnostic* diagnostic : unexpected) {
    int line = diagnostic->lines.empty() ? 0 : diagnostic->lines.front();
    std::string message = Located(source_name, line) + "unexpected " +
                          SeverityName(diagnostic->severity) + " (" +
                          DescribeLines(diagnostic->lines) + "): " + diagnostic->text;
    if (diagnostic->lines.empty()) {
      message += " (expect it with @unknown)";
    }
    failures.push_back(std::move(message));
  }
  return failures;
}

}  // namespace kiln_opt
