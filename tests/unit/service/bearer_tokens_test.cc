// Bearer tokens: only "Bearer <an accepted token>" passes; prefixes,
// extensions, other schemes and empty values do not.
#include "service/bearer_tokens.h"

#include <gtest/gtest.h>

namespace kiln::service {
namespace {

TEST(BearerTokensTest, AcceptsExactlyTheTokensGiven) {
  BearerTokens tokens;
  EXPECT_TRUE(tokens.empty());
  tokens.Add("first-token");
  tokens.Add("second-token");
  EXPECT_FALSE(tokens.empty());
  EXPECT_TRUE(tokens.Accepts("Bearer first-token"));
  EXPECT_TRUE(tokens.Accepts("Bearer second-token"));
  for (const char* refused : {"Bearer first-toke", "Bearer first-token2", "Bearer ", "Bearer",
                              "bearer first-token", "Basic first-token", "first-token", "",
                              "Bearer  first-token"}) {
    EXPECT_FALSE(tokens.Accepts(refused)) << refused;
  }
}

TEST(BearerTokensTest, AnEmptySetAcceptsNothing) {
  BearerTokens tokens;
  EXPECT_FALSE(tokens.Accepts("Bearer "));
  EXPECT_FALSE(tokens.Accepts("Bearer anything"));
}

}  // namespace
}  // namespace kiln::service
