// Interval: the closed range [min, max] an integer expression's value lies
// in, as the bound analysis of the arithmetic simplifier computes it. The
// int64 extremes stand for "unbounded", and the operations saturate: a bound
// that would overflow int64 becomes unbounded rather than wrong.
#pragma once

#include <cstdint>
#include <limits>

#include "engine/ir/dtype.h"

namespace kiln::loop::arith {

struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static Interval Everything() { return Interval{}; }
  // [value, value]; an extreme value gives Everything (it reads as infinite).
  static Interval Single(int64_t value);
  // [min, min + extent), i.e. a loop range; extent must be positive.
  static Interval FromMinExtent(int64_t min, int64_t extent);

  bool is_single() const { return min == max && min != kNegInf && max != kPosInf; }
  bool bounded_below() const { return min != kNegInf; }
  bool bounded_above() const { return max != kPosInf; }
  bool contains(int64_t value) const { return min <= value && value <= max; }
  bool operator==(const Interval&) const = default;
};

// Every value the integer type `dtype` can hold (Everything for int64 and
// uint64, whose upper half int64 cannot represent; [0, 1] for bool).
Interval TypeRange(DataType dtype);
// `range` when it fits in `dtype`, else the whole type range (the value wraps).
Interval FitToType(const Interval& range, DataType dtype);

Interval Union(const Interval& a, const Interval& b);
Interval Intersect(const Interval& a, const Interval& b);
Interval IntervalNeg(const Interval& a);
Interval IntervalAdd(const Interval& a, const Interval& b);
Interval IntervalSub(const Interval& a, const Interval& b);
Interval IntervalMul(const Interval& a, const Interval& b);
// Everything when `b` may be zero. Floor and truncating division.
Interval IntervalFloorDiv(const Interval& a, const Interval& b);
Interval IntervalTruncDiv(const Interval& a, const Interval& b);
Interval IntervalFloorMod(const Interval& a, const Interval& b);
Interval IntervalMin(const Interval& a, const Interval& b);
Interval IntervalMax(const Interval& a, const Interval& b);

}  // namespace kiln::loop::arith
