// The bearer tokens kilnd accepts, kept as SHA-256 digests and compared in
// constant time: how long a refusal takes says nothing about how much of a
// token was right, and a token never sits in memory in the clear after
// startup.
#pragma once

#include <array>
#include <string_view>
#include <vector>

namespace kiln::service {

class BearerTokens {
 public:
  void Add(std::string_view token);
  bool empty() const { return digests_.empty(); }
  // True when `authorization` is "Bearer <token>" for an accepted token.
  // Every accepted token is compared, whichever matches.
  bool Accepts(std::string_view authorization) const;

 private:
  std::vector<std::array<unsigned char, 32>> digests_;
};

}  // namespace kiln::service
