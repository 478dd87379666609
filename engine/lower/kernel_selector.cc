// Kernel selection by call index, name or layer.
#include "engine/lower/kernel_selector.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::lower {
namespace {

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string ValidKernels(const LoweredModule& lowered) {
  std::vector<std::string> names;
  for (const LoweredKernel& kernel : lowered.kernels) {
    if (kernel.call_indices.empty()) continue;  // copies answer to no selector
    names.push_back(
        absl::StrCat(kernel.name, " (call ", absl::StrJoin(kernel.call_indices, ", "), ")"));
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<std::vector<const LoweredKernel*>> SelectKernels(const LoweredModule& lowered,
                                                                std::string_view selector) {
  std::vector<const LoweredKernel*> matches;
  auto collect = [&](auto&& predicate) {
    for (const LoweredKernel& kernel : lowered.kernels) {
      if (!kernel.call_indices.empty() && predicate(kernel)) matches.push_back(&kernel);
    }
  };
  if (int index = 0; AllDigits(selector) && absl::SimpleAtoi(std::string(selector), &index)) {
    collect([&](const LoweredKernel& kernel) {
      return std::find(kernel.call_indices.begin(), kernel.call_indices.end(), index) !=
             kernel.call_indices.end();
    });
  }
  if (matches.empty()) {
    collect([&](const LoweredKernel& kernel) {
      return kernel.name == selector || kernel.function_name == selector;
    });
  }
  if (matches.empty()) {
    collect([&](const LoweredKernel& kernel) {
      std::vector<std::string> sources = SpanSourceNames(kernel.span);
      return std::find(sources.begin(), sources.end(), selector) != sources.end();
    });
  }
  if (matches.empty()) {
    return absl::NotFoundError(absl::StrCat("no kernel matches '", std::string(selector),
                                            "' (a call index, kernel name or layer name); valid "
                                            "kernels: ",
                                            ValidKernels(lowered)));
  }
  return matches;
}

bool KernelMayMatch(std::string_view selector, const KernelCandidate& kernel) {
  if (int index = 0; AllDigits(selector) && absl::SimpleAtoi(std::string(selector), &index) &&
                     index == kernel.call_index) {
    return true;
  }
  if (kernel.name == selector || kernel.function_name == selector) return true;
  std::vector<std::string> sources = SpanSourceNames(kernel.span);
  return std::find(sources.begin(), sources.end(), selector) != sources.end();
}

}  // namespace kiln::lower
