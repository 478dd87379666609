// Names in models are arbitrary bytes (ONNX's proto2 strings do not check
// them), but IR text, IR JSON and the API's proto3 strings must be UTF-8:
// names are made valid once, where they enter Kiln.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with each byte that does not belong to a well-formed sequence
// replaced by U+FFFD; valid text is returned unchanged.
std::string ValidUtf8(std::string_view text);

}  // namespace kiln
