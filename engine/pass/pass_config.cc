// The PassContext config option registry and the list of builtin options.
#include "engine/pass/pass_config.h"

#include "absl/strings/str_cat.h"
#include "engine/support/check.h"

namespace kiln {

const PassConfigRegistry& PassConfigRegistry::Global() {
  // Built on first use (thread-safe function-local static), not at load time.
  static const PassConfigRegistry* registry = [] {
    auto* r = new PassConfigRegistry();
    RegisterBuiltinPassConfigs(*r);
    return r;
  }();
  return *registry;
}

absl::Status PassConfigRegistry::Register(PassConfigOption option) {
  if (option.name.empty()) return absl::InvalidArgumentError("config option without a name");
  if (options_.count(option.name) != 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("config option '", option.name, "' is registered twice"));
  }
  if (TypeOf(option.default_value) != option.type) {
    return absl::InvalidArgumentError(
        absl::StrCat("config option '", option.name, "' is a ", ConfigTypeName(option.type),
                     " but its default is a ", ConfigTypeName(TypeOf(option.default_value))));
  }
  std::string name = option.name;
  options_.emplace(std::move(name), std::move(option));
  return absl::OkStatus();
}

const PassConfigOption* PassConfigRegistry::Find(std::string_view name) const {
  auto it = options_.find(name);
  return it == options_.end() ? nullptr : &it->second;
}

std::vector<const PassConfigOption*> PassConfigRegistry::List() const {
  std::vector<const PassConfigOption*> list;
  for (const auto& [name, option] : options_) list.push_back(&option);
  return list;
}

std::string PassConfigRegistry::ValidKeys() const {
  std::string keys;
  for (const auto& [name, option] : options_) {
    absl::StrAppend(&keys, keys.empty() ? "" : ", ", name);
  }
  return keys;
}

void RegisterBuiltinPassConfigs(PassConfigRegistry& registry) {
  // Only options something reads. Keep the list sorted by key.
  const PassConfigOption options[] = {
      {kConfigEnableSIBuilder, ConfigType::kBool, true,
       "keep source spans on the nodes passes create (SIBuilder); off measures what span "
       "keeping costs"},
      {kConfigMinParallelWork, ConfigType::kInt, int64_t{1} << 15,
       "a kernel doing less work (output elements times reduce steps) runs its loops "
       "serially: a parallel loop's wakeup and join cost more than they save (0: every "
       "kernel's outer loops in parallel)"},
      {kConfigShareKernels, ConfigType::kBool, true,
       "structurally equal fused functions (repeated blocks, unrolled steps) share one kernel, "
       "lowered and compiled once; off: one kernel per fused function"},
      {kConfigMaxPassIndex, ConfigType::kInt, int64_t{-1},
       "bisection: run only the first N passes that are not required (-1: all)"},
      {kConfigSpanCoverage, ConfigType::kString, std::string("off"),
       "count nodes without spans after each pass: off, report, or strict (a call without a "
       "span fails the pass)"},
      {kConfigVerifyEach, ConfigType::kBool, false,
       "check well-formedness (every variable bound once, globals defined) after each pass"},
      {kConfigVerifyTypes, ConfigType::kBool, false,
       "with pass.verify_each: also re-infer types on a copy and compare them"},
      {kConfigKeepScheduleRecord, ConfigType::kBool, true,
       "lowering keeps a snapshot of each kernel's schedule after every primitive (the "
       "schedule record); off saves compile time and memory"},
  };
  for (const PassConfigOption& option : options) {
    absl::Status status = registry.Register(option);
    KILN_CHECK(status.ok()) << status.message();
  }
}

}  // namespace kiln
