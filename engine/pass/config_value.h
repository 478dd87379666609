// Typed values shared by PassContext config options and pass options in a
// pipeline (`FuseOps{fuse_opt_level=2}`): one of bool, int, float or string,
// with the one text syntax both use. Keeping a single value type means the
// CLI, the service's config map and the pipeline text all parse the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/statusor.h"

namespace kiln {

enum class ConfigType { kBool, kInt, kFloat, kString };
const char* ConfigTypeName(ConfigType type);

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

ConfigType TypeOf(const ConfigValue& value);

// Parses `text` as a value of `type`: bools are true/false/1/0, ints and
// floats in C syntax, strings as given (surrounding double quotes removed).
// The error says which type was expected.
absl::StatusOr<ConfigValue> ParseConfigValue(std::string_view text, ConfigType type);

// The canonical text of `value` (parses back to the same value). Strings are
// quoted only when they hold characters the pipeline syntax treats specially.
std::string FormatConfigValue(const ConfigValue& value);

// `value` as `type`, or an error naming both types. An int is accepted where a
// float is expected (the text `2` is a fine float); nothing else converts.
absl::StatusOr<ConfigValue> CoerceConfigValue(const ConfigValue& value, ConfigType type);

}  // namespace kiln
