// The CLI's side of the numerics check.
#include "clients/cli/numeric_drift.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

}  // namespace kiln::cli
