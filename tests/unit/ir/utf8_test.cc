// UTF-8 validation of names from models (engine/support/utf8.h), against
// sequences taken from RFC 3629's definition.
#include "engine/support/utf8.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Utf8Test, WellFormedTextIsKept) {
  for (const char* text : {"", "conv1/Conv", "\xC3\xA9t\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x94\xA5",
                           "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ValidUtf8(text), text);
  }
}

TEST(Utf8Test, IllFormedBytesBecomeReplacementCharacters) {
  const std::string kReplacement = "\xEF\xBF\xBD";
  // A lone continuation byte, a Latin-1 byte, a truncated sequence.
  EXPECT_EQ(ValidUtf8("a\x80z"), "a" + kReplacement + "z");
  EXPECT_EQ(ValidUtf8("caf\xE9"), "caf" + kReplacement);
  EXPECT_EQ(ValidUtf8("\xE4\xB8"), kReplacement + kReplacement);
  // Overlong '/', a surrogate (U+D800), and U+110000: each byte replaced.
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), kReplacement + kReplacement);
  EXPECT_TRUE(IsValidUtf8(ValidUtf8("\xED\xA0\x80x\xFF")));
}

}  // namespace
}  // namespace kiln
