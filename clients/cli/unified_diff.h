// Line diffs of IR text in the unified format (`diff -u`, `git diff`), used by
// `kiln trace` between consecutive passes and `kiln schedule` between steps.
#pragma once

#include <string>
#include <string_view>

namespace kiln::cli {

// The unified diff turning `before` into `after`: `--- before_label`,
// `+++ after_label`, then hunks with `context` unchanged lines around each
// change (hunks closer than 2*context lines merge, as GNU diff does). Empty
// when the texts have the same lines. A missing final newline is ignored.
std::string UnifiedDiff(std::string_view before, std::string_view after,
                        std::string_view before_label, std::string_view after_label,
                        int context = 3);

}  // namespace kiln::cli
