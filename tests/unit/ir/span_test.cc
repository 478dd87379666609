// Spans and the SequentialSpan flattening rule.
#include "engine/ir/span.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(SpanTest, SequentialSpanFlattensNestedAndFoldsDuplicates) {
  Span a = MakeSpan("a"), b = MakeSpan("b"), c = MakeSpan("c");
  Span ab = MakeSequentialSpan({a, b});
  Span merged = MakeSequentialSpan({ab, MakeSpan("b"), nullptr, c, a});
  EXPECT_EQ(SpanSourceNames(merged), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_NE(merged.as<SequentialSpanNode>(), nullptr);
  for (const Span& inner : merged.as<SequentialSpanNode>()->spans) {
    EXPECT_EQ(inner.as<SequentialSpanNode>(), nullptr);
  }
}

TEST(SpanTest, OneOriginIsAPlainSpan) {
  Span a = MakeSpan("a");
  EXPECT_TRUE(MakeSequentialSpan({a, MakeSpan("a"), nullptr}).same_as(a));
  EXPECT_FALSE(MakeSequentialSpan({nullptr}).defined());
}

TEST(SpanTest, EqualityIsElementWiseAndOrdered) {
  Span ab = MakeSequentialSpan({MakeSpan("a"), MakeSpan("b")});
  EXPECT_TRUE(SpanEqual(ab, MakeSequentialSpan({MakeSpan("a"), MakeSpan("b")})));
  EXPECT_FALSE(SpanEqual(ab, MakeSequentialSpan({MakeSpan("b"), MakeSpan("a")})));
  EXPECT_FALSE(SpanEqual(ab, MakeSpan("a")));
  EXPECT_FALSE(SpanEqual(MakeSpan(MakeSourceName("a"), 1, 2, 1, 5), MakeSpan("a")));
  EXPECT_TRUE(SpanEqual(MakeSpan(MakeSourceName("a"), 1, 2, 1, 5),
                        MakeSpan(MakeSourceName("a"), 1, 2, 1, 5)));
  EXPECT_EQ(SpanHash(ab), SpanHash(MakeSequentialSpan({MakeSpan("a"), MakeSpan("b")})));
}

}  // namespace
}  // namespace kiln
