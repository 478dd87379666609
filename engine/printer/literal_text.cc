// Spelling of numbers, strings and bytes.
#include "engine/printer/literal_text.h"

#include <charconv>
#include <cmath>

namespace kiln::printer {

namespace {

template <typename T>
std::string ShortestText(T value) {
  // to_chars spells non-finite values "inf"/"nan" with their sign, which is what we want.
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string ShortestDoubleText(double value) { return ShortestText(value); }
std::string ShortestFloatText(float value) { return ShortestText(value); }

bool LooksLikeFloat(std::string_view text) {
  return text.find_first_of(".eEn") != std::string_view::npos;  // 'n': inf and nan
}

void AppendQuoted(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (byte < 0x20 || byte > 0x7e) {
          out->append("\\x");
          out->push_back(kHex[byte >> 4]);
          out->push_back(kHex[byte & 0xf]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string Quoted(std::string_view text) {
  std::string out;
  AppendQuoted(text, &out);
  return out;
}

void AppendHex(std::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->reserve(out->size() + 2 * bytes.size());
  for (char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out->push_back(kHex[byte >> 4]);
    out->push_back(kHex[byte & 0xf]);
  }
}

}  // namespace kiln::printer
