// SHA-256 as lowercase hex (OpenSSL's EVP), for compile ids and artifact
// digests: build farms cache by these, so they must be the standard digest.
#pragma once

#include <string>
#include <string_view>

namespace kiln::service {

std::string Sha256Hex(std::string_view bytes);

}  // namespace kiln::service
