// kiln-opt --verify-diagnostics: the errors, warnings and notes an input
// expects, written in it as MLIR writes them, checked against what kiln-opt
// reported on stderr while compiling it, so that negative lit tests need no
// FileCheck of stderr.
//
// Expectations, at most one per line, anywhere on a line (after `//`):
//   expected-error {{SUBSTRING}}          reported on this line
//   expected-error@+N {{...}}, @-N        N lines below / above this one
//   expected-error@above {{...}}          on the nearest line above that holds no expectation
//   expected-error@below {{...}}          on the nearest line below that holds no expectation
//   expected-error@unknown {{...}}        reported tied to no line
// and expected-warning, expected-note alike (pass diagnostics such as
// FoldConstant's note). A space may come before the '@'. SUBSTRING runs from
// the first `{{` to the last `}}` of the line and must occur in the reported
// line (what follows `kiln-opt: `). `expected-error` not followed by a
// designator or `{{` is prose and ignored; a malformed expectation (no closing
// `}}`, an unknown designator, `-re`) is a failure.
//
// What ties a reported diagnostic to input lines:
//  - a parse error `SOURCE:LINE:COL: error: ...` located in this input: LINE
//    (a pipeline's `pipeline:1:9: error: ...` is located elsewhere: no line);
//  - otherwise, spans the message names, `(span a, b)` in type errors and
//    `(si=[a, b])` in pass diagnostics: every line whose span comment
//    (`/* si=a */`, `let_si=`, `[a, b]`, bare or quoted without escapes)
//    names one of them. Graph nodes carry no line of their own; their span
//    comment is where they are written;
//  - anything else (a pass error naming no span, a node without a span, a
//    flag error): no line, matched only by @unknown.
// Every reported diagnostic must be expected and every expectation reported.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln_opt {

enum class Severity { kError, kWarning, kNote };
const char* SeverityName(Severity severity);  // "error", "warning", "note"

// One `expected-...` comment.
struct Expectation {
  Severity severity = Severity::kError;
  std::string substring;
  int line = 0;          // where the diagnostic must be reported; 0 for @unknown
  int comment_line = 0;  // where the comment is written
};

struct MalformedExpectation {
  int line = 0;
  std::string message;
};

struct ExpectationList {
  std::vector<Expectation> expectations;  // in line order
  std::vector<MalformedExpectation> malformed;
};

// The expectations written in `text`, lines numbered from 1.
ExpectationList ParseExpectations(std::string_view text);

// One diagnostic kiln-opt reported.
struct ReportedDiagnostic {
  Severity severity = Severity::kError;
  std::string text;        // the reported line after "kiln-opt: "
  std::vector<int> lines;  // the input lines it is tied to, ascending; empty for none
};

struct ReportedStderr {
  std::vector<ReportedDiagnostic> diagnostics;
  // The other lines, in order (IR dumps, timing reports), each with its '\n'.
  std::string other;
};

// Reads what kiln-opt wrote to stderr while compiling `input_text`, named
// `source_name` in parse errors. A diagnostic is a line starting with
// `kiln-opt: `: `warning: ...` and `note: ...` are pass diagnostics,
// `SOURCE:LINE:COL: error: ...` (or warning, note) is a located one and owns
// the quoted line and the caret line that follow it, anything else is an
// error (pass failures, flag errors), except `reproducer written to ...`.
ReportedStderr ParseReportedStderr(std::string_view stderr_text, std::string_view input_text,
                                   std::string_view source_name);

// The lines of `input_text` whose span comments name `span_name`, ascending.
std::vector<int> LinesWritingSpan(std::string_view input_text, std::string_view span_name);

// Matches reported diagnostics with expectations (each expectation matches
// one diagnostic of its severity, on its line, containing its substring).
// Returns the failures as messages "SOURCE:LINE: error: ..." (empty when
// everything matched): malformed expectations, expectations nothing matched,
// and diagnostics nothing expected.
std::vector<std::string> VerifyDiagnostics(const ExpectationList& expected,
                                           const std::vector<ReportedDiagnostic>& reported,
                                           std::string_view source_name);

}  // namespace kiln_opt
