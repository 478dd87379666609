// The pass registry: registration checks, lookup, and creation of passes
// with checked options.
#include "engine/pass/pass_registry.h"

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

std::string ValidOptionNames(const PassRegistration& entry) {
  if (entry.options.empty()) return "none";
  std::string names;
  for (const PassOptionSpec& spec : entry.options) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", spec.name, " (", ConfigTypeName(spec.type),
                    ")");
  }
  return names;
}

}  // namespace

const ConfigValue& PassOptions::GetValue(std::string_view name) const {
  for (const auto& [key, value] : given_) {
    if (key == name) return value;
  }
  KILN_CHECK(specs_ != nullptr) << "pass option '" << std::string(name) << "' is not declared";
  for (const PassOptionSpec& spec : *specs_) {
    if (spec.name == name) return spec.default_value;
  }
  KILN_UNREACHABLE() << "pass option '" << std::string(name) << "' is not declared";
  return specs_->front().default_value;
}

PassRegistry& PassRegistry::Global() {
  // Built on first use, not at load time; filled by the driver.
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

absl::Status PassRegistry::Register(PassRegistration registration) {
  const std::string& name = registration.info.name;
  if (name.empty()) return absl::InvalidArgumentError("pass registered without a name");
  if (!registration.factory) {
    return absl::InvalidArgumentError(absl::StrCat("pass '", name, "' has no factory"));
  }
  for (const PassOptionSpec& spec : registration.options) {
    if (TypeOf(spec.default_value) != spec.type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pass '", name, "': option '", spec.name, "' is a ", ConfigTypeName(spec.type),
          " but its default is a ", ConfigTypeName(TypeOf(spec.default_value))));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(name) != 0) {
    return absl::AlreadyExistsError(absl::StrCat("pass '", name, "' is registered twice"));
  }
  std::string key = name;
  entries_.emplace(std::move(key), std::make_unique<PassRegistration>(std::move(registration)));
  return absl::OkStatus();
}

absl::Status PassRegistry::Register(PassInfo info, std::string summary,
                                    std::function<Pass()> factory) {
  PassRegistration registration;
  registration.info = std::move(info);
  registration.summary = std::move(summary);
  if (factory) {
    registration.factory = [factory = std::move(factory)](
                               const PassOptions&) -> absl::StatusOr<Pass> { return factory(); };
  }
  return Register(std::move(registration));
}

const PassRegistration* PassRegistry::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.get();
}

std::vector<const PassRegistration*> PassRegistry::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const PassRegistration*> list;
  for (const auto& [name, entry] : entries_) list.push_back(entry.get());
  return list;
}

std::string PassRegistry::ValidNames() const {
  std::string names;
  for (const PassRegistration* entry : List()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", entry->info.name);
  }
  return names.empty() ? "(no passes registered)" : names;
}

absl::StatusOr<Pass> PassRegistry::Create(std::string_view name,
                                          const PassOptions::Given& options) const {
  const PassRegistration* entry = Find(name);
  if (entry == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("unknown pass '", std::string(name), "'; valid passes: ", ValidNames()));
  }
  PassOptions::Given checked;
  for (const auto& [key, value] : options) {
    const PassOptionSpec* spec = nullptr;
    for (const PassOptionSpec& candidate : entry->options) {
      if (candidate.name == key) spec = &candidate;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("pass '", entry->info.name, "' has no option '", key,
                       "'; valid options: ", ValidOptionNames(*entry)));
    }
    for (const auto& [seen, unused] : checked) {
      if (seen == key) {
        return absl::InvalidArgumentError(
            absl::StrCat("pass '", entry->info.name, "': option '", key, "' is given twice"));
      }
    }
    absl::StatusOr<ConfigValue> coerced = CoerceConfigValue(value, spec->type);
    if (!coerced.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pass '", entry->info.name, "': option '", key,
                       "': ", std::string(coerced.status().message())));
    }
    checked.emplace_back(key, *std::move(coerced));
  }
  PassOptions pass_options(&entry->options, checked);
  absl::StatusOr<Pass> pass = entry->factory(pass_options);
  if (!pass.ok()) {
    return absl::Status(pass.status().code(),
                        absl::StrCat("creating pass '", entry->info.name,
                                     "': ", std::string(pass.status().message())));
  }
  // The registered info is what --list-passes shows and what pipelines are
  // checked against, so the pass must agree with it.
  if (*pass == nullptr || (*pass)->info().name != entry->info.name ||
      (*pass)->info().opt_level != entry->info.opt_level ||
      (*pass)->info().required != entry->info.required) {
    return absl::InternalError(absl::StrCat("the factory of pass '", entry->info.name,
                                            "' made a pass whose PassInfo differs from the "
                                            "registered one"));
  }
  return std::make_shared<RegisteredPassNode>(*std::move(pass), entry->info.name,
                                              std::move(checked));
}

RegisteredPassNode::RegisteredPassNode(Pass inner, std::string registered_name,
                                       PassOptions::Given options)
    : PassNode(inner->info()),
      inner_(std::move(inner)),
      registered_name_(std::move(registered_name)),
      options_(std::move(options)) {}

absl::StatusOr<IRModule> RegisteredPassNode::Run(const IRModule& module,
                                                 PassContext& context) const {
  return inner_->Run(module, context);
}

}  // namespace kiln
