// Identifier character classes and sanitizing (see identifier.h).
#include "engine/support/identifier.h"

#include "absl/strings/str_cat.h"

namespace kiln {

namespace {

bool Kept(char c, std::string_view also_kept) {
  return IsIdentChar(c) || also_kept.find(c) != std::string_view::npos;
}

}  // namespace

bool AllIdentChars(std::string_view text, std::string_view also_allowed) {
  for (char c : text) {
    if (!Kept(c, also_allowed)) return false;
  }
  return true;
}

std::string ReplaceNonIdentChars(std::string_view text, std::string_view also_kept) {
  std::string out(text);
  for (char& c : out) {
    if (!Kept(c, also_kept)) c = '_';
  }
  return out;
}

std::string PrefixToIdentStart(std::string name) {
  if (name.empty() || !IsIdentStart(name[0])) {
    name = absl::StrCat("v", name);  // (insert(0, ...) trips a GCC 12 -Wrestrict false positive)
  }
  return name;
}

std::string SanitizeIdentifier(std::string_view hint) {
  return PrefixToIdentStart(ReplaceNonIdentChars(hint));
}

}  // namespace kiln
