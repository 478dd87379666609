// The instruments a PassContext's config asks for (pass.max_pass_index,
// pass.verify_each, pass.verify_types, pass.span_coverage), so a request's
// config map and kiln-opt's flags turn on bisection and checking the same way.
#pragma once

#include <memory>
#include <ostream>

#include "absl/status/status.h"
#include "engine/pass/bisect.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/span_coverage.h"
#include "engine/pass/verifier.h"

namespace kiln {

// What AddConfiguredInstruments added (null when not configured), so callers
// can read the results (bisect decisions, span coverage report).
struct ConfiguredInstruments {
  std::shared_ptr<Bisect> bisect;
  std::shared_ptr<Verifier> verifier;
  std::shared_ptr<SpanCoverage> span_coverage;
};

// Adds them to `context` (before it is entered), in the order verifier, span
// coverage, bisect. `log` receives the bisect lines; `infer_types` serves
// pass.verify_types. An invalid pass.span_coverage value, or pass.verify_types
// without a type inference, is an error.
absl::StatusOr<ConfiguredInstruments> AddConfiguredInstruments(
    PassContext& context, std::ostream* log = nullptr,
    const ModuleTypeInference& infer_types = nullptr);

}  // namespace kiln
