// PlanStorage: values whose live ranges do not overlap share memory; values
// live together never do; offsets respect the alignment.
#include "engine/lower/memory_plan.h"

#include <gtest/gtest.h>

namespace kiln::lower {
namespace {

TEST(MemoryPlanTest, AChainReusesTheFirstBlockForTheThirdValue) {
  // t0 written at 0, read at 1; t1 written at 1, read at 2; t2 written at 2.
  StoragePlan plan = PlanStorage({{16, 0, 1}, {16, 1, 2}, {16, 2, 3}}, 1);
  ASSERT_EQ(plan.offsets.size(), 3u);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 16);
  EXPECT_EQ(plan.offsets[2], 0);
  EXPECT_EQ(plan.extent, 32);
}

TEST(MemoryPlanTest, ValuesLiveTogetherGetDisjointBlocks) {
  StoragePlan plan = PlanStorage({{10, 0, 5}, {20, 1, 3}, {30, 2, 4}}, 1);
  EXPECT_EQ(plan.extent, 60);
  // Largest first: 30 at 0, 20 at 30, 10 at 50.
  EXPECT_EQ(plan.offsets[2], 0);
  EXPECT_EQ(plan.offsets[1], 30);
  EXPECT_EQ(plan.offsets[0], 50);
}

TEST(MemoryPlanTest, ASmallValueFitsAGapLeftByDeadOnes) {
  // Two 8s live over steps 0..1, a 24 over 2..5, a 4 over 3..4: the 8s reuse
  // the 24's space, the 4 goes after the 24.
  StoragePlan plan = PlanStorage({{8, 0, 1}, {24, 2, 5}, {4, 3, 4}, {8, 0, 1}}, 1);
  EXPECT_EQ(plan.offsets[1], 0);   // 24 first, alone at its time
  EXPECT_EQ(plan.offsets[0], 0);   // not live with the 24
  EXPECT_EQ(plan.offsets[3], 8);   // live with the other 8
  EXPECT_EQ(plan.offsets[2], 24);  // live with the 24
  EXPECT_EQ(plan.extent, 28);
}

TEST(MemoryPlanTest, OffsetsAreMultiplesOfTheAlignment) {
  StoragePlan plan = PlanStorage({{3, 0, 2}, {5, 0, 2}}, 4);
  EXPECT_EQ(plan.offsets[1], 0);  // 5 elements take 8
  EXPECT_EQ(plan.offsets[0], 8);
  EXPECT_EQ(plan.extent, 12);
}

TEST(MemoryPlanTest, NoRequestsNeedNoWorkspace) {
  StoragePlan plan = PlanStorage({}, 16);
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.extent, 0);
}

}  // namespace
}  // namespace kiln::lower
