// NonZero and Unique of constant data fold to constants at import (known_value_folding.cc); the
// Unique cases are the ONNX operator documentation's examples, worked through by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using testing::OnnxModelBuilder;

TEST(KnownValueFoldingTest, NonZeroOfAConstant) {
  OnnxModelBuilder b(13);
  b.Output("y");
  b.FloatInitializer("x", {2, 2}, {1, 0, 0, 3});
  b.Node("NonZero", {"x"}, {"y"}, "nonzero");
  auto out = RunAll(b.Bytes(), {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAre(0, 1, 0, 1));  // rows (0, 1), columns (0, 1)
}

std::vector<std::vector<double>> Unique(std::vector<int64_t> shape, std::vector<float> values,
                                        bool sorted, bool with_axis) {
  OnnxModelBuilder b(11);
  b.Output("y").Output("indices").Output("inverse").Output("counts");
  b.FloatInitializer("x", shape, values);
  onnx::NodeProto& node = b.Node("Unique", {"x"}, {"y", "indices", "inverse", "counts"}, "unique");
  OnnxModelBuilder::IntAttr(node, "sorted", sorted ? 1 : 0);
  if (with_axis) OnnxModelBuilder::IntAttr(node, "axis", 0);
  return RunAll(b.Bytes(), {});
}

TEST(KnownValueFoldingTest, UniqueSortedAndInFirstOccurrenceOrder) {
  auto s = Unique({6}, {2, 1, 1, 3, 4, 3}, true, false);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_THAT(s[0], ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(s[1], ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(s[2], ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(s[3], ElementsAre(2, 1, 2, 1));
  auto u = Unique({6}, {2, 1, 1, 3, 4, 3}, false, false);
  ASSERT_EQ(u.size(), 4u);
  EXPECT_THAT(u[0], ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(u[1], ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(u[2], ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(u[3], ElementsAre(1, 2, 2, 1));
}

TEST(KnownValueFoldingTest, UniqueRowsAlongAnAxis) {
  auto r = Unique({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}, true, true);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_THAT(r[0], ElementsAre(1, 0, 0, 2, 3, 4));
  EXPECT_THAT(r[1], ElementsAre(0, 2));
  EXPECT_THAT(r[2], ElementsAre(0, 0, 1));
  EXPECT_THAT(r[3], ElementsAre(2, 1));
}

}  // namespace
}  // namespace kiln::driver
