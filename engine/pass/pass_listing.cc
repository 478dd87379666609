// JSON listing of the pass registry.
#include "engine/pass/pass_listing.h"

namespace kiln {

nlohmann::json PassRegistryToJson(const PassRegistry& registry) {
  nlohmann::json passes = nlohmann::json::array();
  for (const PassRegistration* entry : registry.List()) {
    nlohmann::json options = nlohmann::json::array();
    for (const PassOptionSpec& option : entry->options) {
      options.push_back({{"name", option.name},
                         {"type", ConfigTypeName(option.type)},
                         {"default", FormatConfigValue(option.default_value)},
                         {"doc", option.doc}});
    }
    passes.push_back({{"name", entry->info.name},
                      {"stage", PassStageName(entry->info.stage)},
                      {"opt_level", entry->info.opt_level},
                      {"required", entry->info.required},
                      {"summary", entry->summary},
                      {"options", std::move(options)}});
  }
  return passes;
}

}  // namespace kiln
