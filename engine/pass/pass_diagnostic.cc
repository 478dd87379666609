// Rendering of pass diagnostics.
#include "engine/pass/pass_diagnostic.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

const char* DiagnosticSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
    case DiagnosticSeverity::kNote: return "note";
    case DiagnosticSeverity::kWarning: return "warning";
  }
  return "?";
}

std::string FormatDiagnostic(const PassDiagnostic& diagnostic) {
  std::string text = absl::StrCat(DiagnosticSeverityName(diagnostic.severity), ": ");
  if (!diagnostic.pass.empty()) absl::StrAppend(&text, diagnostic.pass, ": ");
  absl::StrAppend(&text, diagnostic.message);
  std::vector<std::string> sources = SpanSourceNames(diagnostic.span);
  if (!sources.empty()) absl::StrAppend(&text, " (si=[", absl::StrJoin(sources, ", "), "])");
  return text;
}

}  // namespace kiln
