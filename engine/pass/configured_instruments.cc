// Instruments from config options.
#include "engine/pass/configured_instruments.h"

#include "absl/strings/str_cat.h"
#include "engine/pass/pass_config.h"

namespace kiln {

absl::StatusOr<ConfiguredInstruments> AddConfiguredInstruments(
    PassContext& context, std::ostream* log, const ModuleTypeInference& infer_types) {
  ConfiguredInstruments added;
  std::string coverage = context.GetConfig<std::string>(kConfigSpanCoverage);
  if (coverage != "off" && coverage != "report" && coverage != "strict") {
    return absl::InvalidArgumentError(absl::StrCat("config option '", kConfigSpanCoverage, "' is '",
                                                   coverage, "'; expected off, report or strict"));
  }
  if (context.GetConfig<bool>(kConfigVerifyEach)) {
    VerifierOptions options;
    if (context.GetConfig<bool>(kConfigVerifyTypes)) {
      if (!infer_types) {
        return absl::InvalidArgumentError(absl::StrCat(
            "config option '", kConfigVerifyTypes, "' needs a type inference, and none was given"));
      }
      options.infer_types = infer_types;
    }
    added.verifier = std::make_shared<Verifier>(options);
    context.AddInstrument(added.verifier);
  }
  if (coverage != "off") {
    added.span_coverage = std::make_shared<SpanCoverage>(coverage == "strict");
    context.AddInstrument(added.span_coverage);
  }
  int64_t max_pass_index = context.GetConfig<int64_t>(kConfigMaxPassIndex);
  if (max_pass_index >= 0) {
    added.bisect = std::make_shared<Bisect>(max_pass_index, log);
    context.AddInstrument(added.bisect);
  }
  return added;
}

}  // namespace kiln
