// Typed config values: parsing and printing shared by PassContext config
// options and pipeline pass options.
#include "engine/pass/config_value.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln {

const char* ConfigTypeName(ConfigType type) {
  switch (type) {
    case ConfigType::kBool:
      return "bool";
    case ConfigType::kInt:
      return "int";
    case ConfigType::kFloat:
      return "float";
    case ConfigType::kString:
      return "string";
  }
  return "?";
}

ConfigType TypeOf(const ConfigValue& value) {
  switch (value.index()) {
    case 0:
      return ConfigType::kBool;
    case 1:
      return ConfigType::kInt;
    case 2:
      return ConfigType::kFloat;
    default:
      return ConfigType::kString;
  }
}

absl::StatusOr<ConfigValue> ParseConfigValue(std::string_view text, ConfigType type) {
  // One result variable returned at one place: GCC 12 under ASan warns
  // (falsely) about a variant temporary built in each return statement.
  std::string owned(text);
  std::optional<ConfigValue> parsed;
  switch (type) {
    case ConfigType::kBool:
      if (owned == "true" || owned == "1") parsed = true;
      if (owned == "false" || owned == "0") parsed = false;
      break;
    case ConfigType::kInt: {
      int64_t value;
      if (absl::SimpleAtoi(owned, &value)) parsed = value;
      break;
    }
    case ConfigType::kFloat: {
      double value;
      if (absl::SimpleAtod(owned, &value) && std::isfinite(value)) parsed = value;
      break;
    }
    case ConfigType::kString:
      if (owned.size() >= 2 && owned.front() == '"' && owned.back() == '"') {
        parsed = owned.substr(1, owned.size() - 2);
      } else {
        parsed = owned;
      }
      break;
  }
  if (parsed.has_value()) return *std::move(parsed);
  return absl::InvalidArgumentError(
      absl::StrCat("'", owned, "' is not a ", ConfigTypeName(type),
                   type == ConfigType::kBool ? " (expected true, false, 1 or 0)" : ""));
}

std::string FormatConfigValue(const ConfigValue& value) {
  switch (TypeOf(value)) {
    case ConfigType::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case ConfigType::kInt:
      return std::to_string(std::get<int64_t>(value));
    case ConfigType::kFloat: {
      // The shortest form that reads back exactly (%.17g always does; try
      // shorter first so 0.5 stays "0.5").
      double v = std::get<double>(value);
      char buffer[32];
      for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buffer, sizeof(buffer), "%.*g", precision, v);
        double back;
        if (absl::SimpleAtod(buffer, &back) && back == v) break;
      }
      return buffer;
    }
    case ConfigType::kString: {
      const std::string& s = std::get<std::string>(value);
      bool plain = !s.empty();
      for (char c : s) {
        if (c == ',' || c == '{' || c == '}' || c == '(' || c == ')' || c == '=' || c == '"' ||
            c == '\\' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          plain = false;
        }
      }
      if (plain) return s;
      // Quoted, with `"` and `\` escaped (the pipeline lexer reads them back).
      std::string quoted = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') quoted += '\\';
        quoted += c;
      }
      return quoted + "\"";
    }
  }
  return "";
}

absl::StatusOr<ConfigValue> CoerceConfigValue(const ConfigValue& value, ConfigType type) {
  // As in ParseConfigValue: one result variable, returned at one place.
  ConfigType given = TypeOf(value);
  std::optional<ConfigValue> coerced;
  if (given == type) {
    coerced = value;
  } else if (given == ConfigType::kInt && type == ConfigType::kFloat) {
    coerced = static_cast<double>(std::get<int64_t>(value));
  }
  if (coerced.has_value()) return *std::move(coerced);
  return absl::InvalidArgumentError(absl::StrCat("expected a ", ConfigTypeName(type), ", got a ",
                                                 ConfigTypeName(given), " (",
                                                 FormatConfigValue(value), ")"));
}

}  // namespace kiln
