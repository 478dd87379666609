// The CLI's side of the numerics check.
#include "clients/cli/numeric_drift.h"

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/compile_request.h"

namespace kiln::cli {

absl::Status SetNumericsFlags(const CommandLine& line, kiln::v1::TraceRequest* request,
                              bool force) {
  request->set_check_numerics(force || line.Bool("check-numerics"));
  if (std::optional<std::string> seed = line.Value("numerics-seed")) {
    uint64_t value = 0;
    if (!absl::SimpleAtoi(*seed, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--numerics-seed: '", *seed, "' is not a non-negative integer"));
    }
    request->set_numerics_seed(value);
  }
  if (std::optional<std::string> backend = line.Value("numerics-backend")) {
    if (*backend != "auto" && *backend != "interp" && *backend != "native") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--numerics-backend: '", *backend, "' is not one of auto, interp, native"));
    }
    request->set_numerics_backend(*backend);
  }
  for (const std::string& path : line.List("numerics-input")) {
    absl::StatusOr<std::string> bytes = ReadFileFlag(path, "numerics input");
    if (!bytes.ok()) return bytes.status();
    request->add_numerics_inputs(*std::move(bytes));
  }
  return absl::OkStatus();
}

std::string DriftLine(const kiln::v1::NumericDrift& drift) {
  if (!drift.error().empty()) return absl::StrCat("not checked: ", drift.error());
  std::string line = absl::StrFormat("max rel %.3g, max abs %.3g (%s)", drift.max_rel_error(),
                                     drift.max_abs_error(), drift.backend());
  if (drift.outputs_size() > 1) {
    const kiln::v1::OutputDrift* worst = &drift.outputs(0);
    for (const kiln::v1::OutputDrift& output : drift.outputs()) {
      if (output.max_rel_error() > worst->max_rel_error()) worst = &output;
    }
    absl::StrAppend(&line, ", worst output ", worst->name());
  }
  return line;
}

std::string KernelPrecisionText(const kiln::v1::NumericDrift& drift, int top) {
  if (!drift.kernels_error().empty()) {
    return absl::StrCat("kernel precision: not checked: ", drift.kernels_error(), "\n");
  }
  if (drift.kernels_size() == 0) return "";
  std::vector<const kiln::v1::KernelDrift*> kernels;
  int exact = 0;
  for (const kiln::v1::KernelDrift& kernel : drift.kernels()) {
    if (kernel.max_abs_error() == 0) {
      ++exact;
    } else {
      kernels.push_back(&kernel);
    }
  }
  // Stable: equal errors keep the model's order.
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto* a, const auto* b) {
    if (a->max_rel_error() != b->max_rel_error()) return a->max_rel_error() > b->max_rel_error();
    return a->max_abs_error() > b->max_abs_error();
  });
  std::string text = absl::StrFormat(
      "kernel precision (native code, each kernel on exact inputs, against %s): %d kernels, "
      "%d exact",
      drift.kernels_reference(), drift.kernels_size(), exact);
  if (drift.kernels_not_compared() > 0) {
    absl::StrAppend(&text, ", ", drift.kernels_not_compared(), " not compared");
  }
  absl::StrAppend(&text, "\n");
  for (size_t i = 0; i < kernels.size() && static_cast<int>(i) < top; ++i) {
    absl::StrAppend(&text, absl::StrFormat("  %-40s max rel %.3g, max abs %.3g  [%s]\n",
                                           kernels[i]->kernel(), kernels[i]->max_rel_error(),
                                           kernels[i]->max_abs_error(),
                                           absl::StrJoin(kernels[i]->layers(), ", ")));
  }
  if (static_cast<int>(kernels.size()) > top) {
    absl::StrAppend(&text, "  ... ", kernels.size() - top, " more lost precision\n");
  }
  return text;
}

}  // namespace kiln::cli
