// Identifiers as Kiln's texts spell them, [A-Za-z_][A-Za-z0-9_]*: the character classes the
// lexers test, and the sanitizing that makes one from an arbitrary name (ONNX names hold '/',
// '.', ':'), shared so that every printer, file name and parser agrees on them.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// ASCII only: bytes above 0x7F (UTF-8 sequences) belong to none of these classes.
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsIdentStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
constexpr bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

// Whether every byte of `text` is an identifier character or one of `also_allowed` (true for
// empty text).
bool AllIdentChars(std::string_view text, std::string_view also_allowed = {});

// `text` with each byte that is neither an identifier character nor one of `also_kept`
// replaced by `_`.
std::string ReplaceNonIdentChars(std::string_view text, std::string_view also_kept = {});

// `name`, prefixed with `v` unless it starts with a letter or `_` (an empty name becomes `v`).
std::string PrefixToIdentStart(std::string name);

// A valid identifier made from `hint`: ReplaceNonIdentChars, then PrefixToIdentStart.
std::string SanitizeIdentifier(std::string_view hint);

}  // namespace kiln
