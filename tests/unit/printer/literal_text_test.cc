// Number and string spelling shared by the docsifiers and renderers.
#include "engine/printer/literal_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace kiln::printer {
namespace {

TEST(LiteralTextTest, ShortestRoundTripDoubles) {
  EXPECT_EQ(ShortestDoubleText(1.0), "1");
  EXPECT_EQ(ShortestDoubleText(0.1), "0.1");
  EXPECT_EQ(ShortestDoubleText(1e-05), "1e-05");
  EXPECT_EQ(ShortestDoubleText(-2.5), "-2.5");
  EXPECT_EQ(ShortestDoubleText(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(ShortestDoubleText(-std::numeric_limits<double>::quiet_NaN()), "-nan");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    double value;
    uint64_t bits = rng();
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value)) continue;
    EXPECT_EQ(std::strtod(ShortestDoubleText(value).c_str(), nullptr), value);
  }
}

TEST(LiteralTextTest, ShortestRoundTripFloats) {
  EXPECT_EQ(ShortestFloatText(1e-05f), "1e-05");
  EXPECT_EQ(ShortestFloatText(0.1f), "0.1");
  EXPECT_EQ(ShortestFloatText(16777216.0f), "16777216");
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    float value;
    uint32_t bits = rng();
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value)) continue;
    EXPECT_EQ(std::strtof(ShortestFloatText(value).c_str(), nullptr), value);
  }
}

TEST(LiteralTextTest, LooksLikeFloat) {
  EXPECT_FALSE(LooksLikeFloat("100000"));
  EXPECT_FALSE(LooksLikeFloat("-3"));
  EXPECT_TRUE(LooksLikeFloat("1.5"));
  EXPECT_TRUE(LooksLikeFloat("1e+20"));
  EXPECT_TRUE(LooksLikeFloat("-inf"));
  EXPECT_TRUE(LooksLikeFloat("nan"));
}

TEST(LiteralTextTest, QuotesWithEscapes) {
  EXPECT_EQ(Quoted("onnx::Conv_12"), "\"onnx::Conv_12\"");
  EXPECT_EQ(Quoted("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(Quoted(std::string("\x00\x1f\x7f\xc3\xa9", 5)), "\"\\x00\\x1f\\x7f\\xc3\\xa9\"");
}

TEST(LiteralTextTest, Hex) {
  std::string out;
  AppendHex(std::string("\x00\x80\x3f\xff", 4), &out);
  EXPECT_EQ(out, "00803fff");
}

}  // namespace
}  // namespace kiln::printer
