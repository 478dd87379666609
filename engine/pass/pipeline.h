// Textual pass pipelines, the form users, tests, the CLI and the service
// write pass lists in:
//
//   pipeline := entry (',' entry)*
//   entry    := NAME ('{' option (',' option)* '}')?     a registered pass
//             | 'Sequential' '(' pipeline? ')'             a nested Sequential
//   option   := KEY '=' VALUE      VALUE: a bare word or a "quoted string"
//
// Whitespace (newlines too) may separate tokens. Parsing checks every name and
// option against the registry; errors carry `pipeline:LINE:COL:` and list what
// would have been valid. PrintPipeline writes any pass back in this syntax,
// and parse(print(p)) prints the same again: a canonical pipeline round-trips
// byte for byte.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/pass/pass.h"
#include "engine/pass/pass_registry.h"

namespace kiln {

// The passes of `text` as one Sequential named "Sequential" (opt level 0).
absl::StatusOr<Pass> ParsePipeline(std::string_view text,
                                   const PassRegistry& registry = PassRegistry::Global());

// The pipeline text of `pass`. A Sequential at the top prints as its list; a
// nested one as `Sequential(...)` (whatever its name); a pass made by the
// registry as its name with the options it was created with, in the order
// given; any other pass as its PassInfo name.
std::string PrintPipeline(const Pass& pass);

// The default pipelines, as data: opt level 0..3 -> pipeline text (levels
// outside the range are clamped). docs/passes.md lists them.
const std::string& DefaultPipeline(int opt_level);

}  // namespace kiln
