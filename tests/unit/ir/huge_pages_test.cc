// Huge-page advice is a hint: what a caller can rely on is that buffers hold what they should,
// advised or not, at every size around the 2 MiB boundaries the advice rounds to.
#include "engine/support/huge_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kiln {
namespace {

TEST(HugePagesTest, ZeroedBytesHoldsExactlyThatManyZeros) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, (size_t{2} << 20) + 17,
                       size_t{9} << 20}) {
    std::string zeros = ZeroedBytes(bytes);
    ASSERT_EQ(zeros.size(), bytes);
    EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](char c) { return c == 0; })) << bytes;
  }
}

TEST(HugePagesTest, AdvisingWrittenMemoryKeepsItAndItsNeighbours) {
  // 7 MiB at an odd offset: the advice covers the aligned middle, never the edges' neighbours.
  std::vector<unsigned char> memory((size_t{8} << 20) + 3);
  for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<unsigned char>(i * 131 + 7);
  AdviseHugePages(memory.data() + 3, size_t{7} << 20);
  AdviseHugePages(memory.data() + 1, 100);  // smaller than a page: nothing to advise
  for (size_t i = 0; i < memory.size(); ++i) {
    ASSERT_EQ(memory[i], static_cast<unsigned char>(i * 131 + 7)) << i;
  }
}

}  // namespace
}  // namespace kiln
