// The result cache: bounded by bytes, least recently used out first.
#include "service/result_cache.h"

#include <gtest/gtest.h>

namespace kiln::service {
namespace {

std::shared_ptr<const CachedCompile> Entry(int64_t bytes) {
  auto entry = std::make_shared<CachedCompile>();
  entry->bytes = bytes;
  return entry;
}

TEST(ResultCacheTest, EvictsTheLeastRecentlyUsedToStayWithinItsBytes) {
  ResultCache cache(100);
  cache.Insert("a", Entry(40));
  cache.Insert("b", Entry(40));
  ASSERT_NE(cache.Find("a"), nullptr);  // a is now more recent than b
  cache.Insert("c", Entry(40));         // 120 > 100: b goes
  EXPECT_NE(cache.Find("a"), nullptr);
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_NE(cache.Find("c"), nullptr);
  EXPECT_EQ(cache.bytes(), 80);
}

TEST(ResultCacheTest, ReplacingAnEntryCountsItOnceAndTooLargeEntriesAreNotKept) {
  ResultCache cache(100);
  cache.Insert("a", Entry(30));
  cache.Insert("a", Entry(50));
  EXPECT_EQ(cache.bytes(), 50);
  cache.Insert("huge", Entry(101));
  EXPECT_EQ(cache.Find("huge"), nullptr);
  EXPECT_NE(cache.Find("a"), nullptr);  // not evicted for an entry that never fits
}

}  // namespace
}  // namespace kiln::service
