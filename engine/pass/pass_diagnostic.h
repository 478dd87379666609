// Diagnostics passes report without failing: notes and warnings a user should
// see (a constant left unfolded because it is too large, a fusion declined).
// They collect in the PassContext, in order, each naming the pass that
// reported it and, where there is one, the node's span.
#pragma once

#include <string>

#include "engine/ir/span.h"

namespace kiln {

enum class DiagnosticSeverity { kNote, kWarning };
const char* DiagnosticSeverityName(DiagnosticSeverity severity);  // "note", "warning"

struct PassDiagnostic {
  DiagnosticSeverity severity = DiagnosticSeverity::kNote;
  std::string pass;  // filled by PassContext::EmitDiagnostic
  std::string message;
  Span span;  // may be null
};

// "warning: FoldConstant: <message> (si=[conv1])".
std::string FormatDiagnostic(const PassDiagnostic& diagnostic);

}  // namespace kiln
