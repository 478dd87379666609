// Diagnostic lines go to stderr so they never mix into artifacts or JSON on
// stdout.
#include "clients/cli/diagnostics.h"

#include <iostream>

#include "absl/strings/str_join.h"

namespace kiln::cli {

void PrintDiagnostics(const kiln::v1::CompileResponse& response) {
  for (const kiln::v1::Diagnostic& diagnostic : response.diagnostics()) {
    std::cerr << "kiln: " << diagnostic.severity() << ": ";
    if (!diagnostic.pass_name().empty()) std::cerr << "[" << diagnostic.pass_name() << "] ";
    std::cerr << diagnostic.message();
    if (!diagnostic.spans().empty()) {
      std::cerr << " (layers: " << absl::StrJoin(diagnostic.spans(), ", ") << ")";
    }
    std::cerr << "\n";
  }
}

}  // namespace kiln::cli
