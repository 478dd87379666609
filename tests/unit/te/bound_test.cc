// Bound inference: the symbolic range an index takes while some loops run.
#include "engine/te/bound.h"

#include "engine/loop/functor.h"
#include "gtest/gtest.h"

namespace kiln::te {
namespace {

using loop::IntImm;
using loop::MakeVar;
using loop::PrimExpr;
using loop::arith::Interval;

class BoundTest : public ::testing::Test {
 protected:
  BoundTest() {
    analyzer.Bind(o, 0, 4);
    analyzer.Bind(i, 0, 8);
    relaxed[i.get()] = Interval{0, 7};
  }
  // The extent of the range and, with `o` set to `at`, the value of its min.
  std::pair<int64_t, int64_t> At(const PrimExpr& index, int64_t at) {
    auto range = EvalSymbolicRange(index, relaxed, &analyzer);
    EXPECT_TRUE(range.has_value());
    if (!range) return {-1, -1};
    loop::arith::Analyzer fixed;
    PrimExpr min = loop::Substitute(range->min, [&](const loop::VarNode* var) -> PrimExpr {
      return var == o.get() ? IntImm(at) : PrimExpr();
    });
    int64_t value = -1;
    EXPECT_TRUE(loop::AsConstInt(fixed.Simplify(min), &value));
    return {range->extent, value};
  }

  loop::Var o = MakeVar("o");  // held fixed
  loop::Var i = MakeVar("i");  // runs over [0, 8)
  RelaxedVars relaxed;
  loop::arith::Analyzer analyzer;
};

TEST_F(BoundTest, AffineIndex) {
  // o*8 + i covers [8o, 8o + 7].
  EXPECT_EQ(At(o * 8 + i, 3), (std::pair<int64_t, int64_t>{8, 24}));
  // 2i - o covers [-o, 14 - o].
  EXPECT_EQ(At(i * 2 - o, 2), (std::pair<int64_t, int64_t>{15, -2}));
  // o - i covers [o - 7, o].
  EXPECT_EQ(At(PrimExpr(o) - PrimExpr(i), 1), (std::pair<int64_t, int64_t>{8, -6}));
}

TEST_F(BoundTest, FixedIndexIsOnePoint) {
  EXPECT_EQ(At(o * 3 + 1, 2), (std::pair<int64_t, int64_t>{1, 7}));
}

TEST_F(BoundTest, DivisionAndModulo) {
  // (o*8 + i) // 4 covers [2o, 2o + 1].
  EXPECT_EQ(At(loop::FloorDiv(o * 8 + i, 4), 1), (std::pair<int64_t, int64_t>{2, 2}));
  // i % 3 covers [0, 2].
  EXPECT_EQ(At(loop::FloorMod(i, 3), 0), (std::pair<int64_t, int64_t>{3, 0}));
}

TEST_F(BoundTest, MinMaxAndSelectCoverBothSides) {
  // min(i, 5) lies in [0, 7] (covers both operands' ranges).
  auto range = EvalSymbolicRange(loop::Min(i, IntImm(5)), relaxed, &analyzer);
  ASSERT_TRUE(range.has_value());
  EXPECT_GE(range->extent, 6);
  EXPECT_LE(range->extent, 8);
}

TEST_F(BoundTest, UnionOfShiftedReads) {
  auto a = EvalSymbolicRange(o * 2 + i, relaxed, &analyzer);
  auto b = EvalSymbolicRange(o * 2 + i + 3, relaxed, &analyzer);
  ASSERT_TRUE(a && b);
  auto both = UnionRange(*a, *b, &analyzer);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->extent, 11);  // [2o, 2o + 10]
}

TEST_F(BoundTest, ProductOfRunningVariablesIsUnbounded) {
  loop::Var j = MakeVar("j");
  relaxed[j.get()] = Interval{0, 3};
  EXPECT_FALSE(EvalSymbolicRange(PrimExpr(i) * PrimExpr(j), relaxed, &analyzer).has_value());
  // o * i: the extent would depend on o.
  EXPECT_FALSE(EvalSymbolicRange(PrimExpr(o) * PrimExpr(i), relaxed, &analyzer).has_value());
}

}  // namespace
}  // namespace kiln::te
