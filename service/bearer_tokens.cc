#include "service/bearer_tokens.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace kiln::service {
namespace {

std::array<unsigned char, 32> Digest(std::string_view bytes) {
  std::array<unsigned char, 32> digest;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  return digest;
}

}  // namespace

void BearerTokens::Add(std::string_view token) { digests_.push_back(Digest(token)); }

bool BearerTokens::Accepts(std::string_view authorization) const {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.substr(0, kScheme.size()) != kScheme) return false;
  // Digests have one length whatever the token's, so the comparison's time
  // depends on neither.
  const std::array<unsigned char, 32> presented = Digest(authorization.substr(kScheme.size()));
  bool accepted = false;
  for (const auto& digest : digests_) {
    accepted |= CRYPTO_memcmp(digest.data(), presented.data(), digest.size()) == 0;
  }
  return accepted;
}

}  // namespace kiln::service
