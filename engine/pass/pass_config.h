// The one registry of PassContext config options: every key a pass, an
// instrument or the driver reads, with its type, default and doc. A key that
// is not registered here cannot be set, so a typo in `--config` or in a
// service request is an error listing the valid keys, never a silently
// ignored setting (TVM's TVM_REGISTER_PASS_CONFIG_OPTION, made explicit).
//
// All builtin options are listed in RegisterBuiltinPassConfigs()
// (pass_config.cc); add new ones there.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/pass/config_value.h"

namespace kiln {

struct PassConfigOption {
  std::string name;
  ConfigType type;
  ConfigValue default_value;
  std::string doc;
};

class PassConfigRegistry {
 public:
  // The process-wide registry holding the builtin options (built on first use).
  static const PassConfigRegistry& Global();

  // A duplicate name or a default of the wrong type is an error.
  absl::Status Register(PassConfigOption option);
  const PassConfigOption* Find(std::string_view name) const;
  // In name order.
  std::vector<const PassConfigOption*> List() const;
  // "a, b, c" (for error messages).
  std::string ValidKeys() const;

 private:
  std::map<std::string, PassConfigOption, std::less<>> options_;
};

void RegisterBuiltinPassConfigs(PassConfigRegistry& registry);

// Option names used in code, so a rename is a compile error, not a lookup miss.
inline constexpr char kConfigEnableSIBuilder[] = "ir.enable_si_builder";
inline constexpr char kConfigMaxPassIndex[] = "pass.max_pass_index";
inline constexpr char kConfigVerifyEach[] = "pass.verify_each";
inline constexpr char kConfigVerifyTypes[] = "pass.verify_types";
inline constexpr char kConfigSpanCoverage[] = "pass.span_coverage";
inline constexpr char kConfigKeepScheduleRecord[] = "te.keep_schedule_record";
inline constexpr char kConfigShareKernels[] = "lower.share_kernels";
inline constexpr char kConfigMinParallelWork[] = "lower.min_parallel_work";

}  // namespace kiln
