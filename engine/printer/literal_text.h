// How literal values are spelled in printed text, shared by the docsifiers (span comments) and
// both renderers: shortest round-trip numbers, quoted strings with escapes, hex bytes. Every
// function here is pure and deterministic (no locale, no pointer values).
#pragma once

#include <string>
#include <string_view>

namespace kiln::printer {

// The shortest text that reads back to exactly `value` (std::to_chars): "1", "1.5", "1e-05",
// "1e+20", "inf", "-inf", "nan", "-nan" (the sign of a NaN is kept, its payload is not).
std::string ShortestDoubleText(double value);
std::string ShortestFloatText(float value);

// True when `text` already reads as a floating-point number (has '.', an exponent, inf or
// nan), so no ".0" is needed to tell it from an integer.
bool LooksLikeFloat(std::string_view text);

// Appends `text` in double quotes, escaping `"` `\` newline and tab as \" \\ \n \t and every
// other byte outside printable ASCII as \xHH (lower-case hex).
void AppendQuoted(std::string_view text, std::string* out);
std::string Quoted(std::string_view text);

// Lower-case hex of raw bytes, without a prefix.
void AppendHex(std::string_view bytes, std::string* out);

}  // namespace kiln::printer
