// Interval arithmetic with saturation: infinite ends propagate, and a finite
// end that overflows int64 widens the result to Everything.
#include "engine/loop/arith/interval.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "engine/loop/arith/const_fold.h"
#include "engine/support/check.h"

namespace kiln::loop::arith {
namespace {

constexpr int64_t kNegInf = Interval::kNegInf;
constexpr int64_t kPosInf = Interval::kPosInf;

bool IsInf(int64_t v) { return v == kNegInf || v == kPosInf; }

// A finite result landing on an extreme would read as infinite: treat it as
// an overflow too.
std::optional<int64_t> Finite(bool overflow, int64_t value) {
  if (overflow || IsInf(value)) return std::nullopt;
  return value;
}

std::optional<int64_t> EndAdd(int64_t a, int64_t b) {
  bool neg = a == kNegInf || b == kNegInf;
  bool pos = a == kPosInf || b == kPosInf;
  if (neg && pos) return std::nullopt;
  if (neg) return kNegInf;
  if (pos) return kPosInf;
  int64_t sum;
  bool overflow = __builtin_add_overflow(a, b, &sum);
  return Finite(overflow, sum);
}

int64_t EndNeg(int64_t a) {
  if (a == kNegInf) return kPosInf;
  if (a == kPosInf) return kNegInf;
  return -a;
}

std::optional<int64_t> EndMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  if (IsInf(a) || IsInf(b)) return negative ? kNegInf : kPosInf;
  int64_t product;
  bool overflow = __builtin_mul_overflow(a, b, &product);
  return Finite(overflow, product);
}

// x / y for a finite nonzero y; infinite x stays infinite with the quotient's sign.
int64_t EndDiv(int64_t x, int64_t y, bool floor) {
  if (IsInf(x)) return ((x < 0) != (y < 0)) ? kNegInf : kPosInf;
  return floor ? FloorDivInt(x, y) : x / y;
}

Interval FromEnds(std::initializer_list<std::optional<int64_t>> ends) {
  int64_t lo = kPosInf, hi = kNegInf;
  for (const std::optional<int64_t>& end : ends) {
    if (!end.has_value()) return Interval::Everything();
    lo = std::min(lo, *end);
    hi = std::max(hi, *end);
  }
  return Interval{lo, hi};
}

// Division is monotone in each operand while the divisor keeps its sign, so
// the extremes over the rectangle a x b lie at its corners.
Interval Divide(const Interval& a, const Interval& b, bool floor) {
  if (b.contains(0) || !b.bounded_below() || !b.bounded_above()) return Interval::Everything();
  return FromEnds({EndDiv(a.min, b.min, floor), EndDiv(a.min, b.max, floor),
                   EndDiv(a.max, b.min, floor), EndDiv(a.max, b.max, floor)});
}

}  // namespace

Interval Interval::Single(int64_t value) {
  if (IsInf(value)) return Everything();
  return Interval{value, value};
}

Interval Interval::FromMinExtent(int64_t min, int64_t extent) {
  KILN_CHECK(extent > 0) << "empty range of extent " << extent;
  std::optional<int64_t> last = EndAdd(min, extent - 1);
  if (IsInf(min) || !last.has_value()) return Everything();
  return Interval{min, *last};
}

Interval TypeRange(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return Interval{0, 1};
    case DataType::kInt8: return Interval{-128, 127};
    case DataType::kInt16: return Interval{-32768, 32767};
    case DataType::kInt32: return Interval{-2147483648LL, 2147483647LL};
    case DataType::kUInt8: return Interval{0, 255};
    case DataType::kUInt16: return Interval{0, 65535};
    case DataType::kUInt32: return Interval{0, 4294967295LL};
    case DataType::kUInt64: return Interval{0, kPosInf};
    default: return Interval::Everything();
  }
}

Interval FitToType(const Interval& range, DataType dtype) {
  Interval type_range = TypeRange(dtype);
  if (range.min >= type_range.min && range.max <= type_range.max) return range;
  return type_range;
}

Interval Union(const Interval& a, const Interval& b) {
  return Interval{std::min(a.min, b.min), std::max(a.max, b.max)};
}

Interval Intersect(const Interval& a, const Interval& b) {
  return Interval{std::max(a.min, b.min), std::min(a.max, b.max)};
}

Interval IntervalNeg(const Interval& a) { return Interval{EndNeg(a.max), EndNeg(a.min)}; }

Interval IntervalAdd(const Interval& a, const Interval& b) {
  std::optional<int64_t> lo = EndAdd(a.min, b.min);
  std::optional<int64_t> hi = EndAdd(a.max, b.max);
  if (!lo.has_value() || !hi.has_value()) return Interval::Everything();
  return Interval{*lo, *hi};
}

Interval IntervalSub(const Interval& a, const Interval& b) { return IntervalAdd(a, IntervalNeg(b)); }

Interval IntervalMul(const Interval& a, const Interval& b) {
  return FromEnds({EndMul(a.min, b.min), EndMul(a.min, b.max), EndMul(a.max, b.min),
                   EndMul(a.max, b.max)});
}

Interval IntervalFloorDiv(const Interval& a, const Interval& b) { return Divide(a, b, true); }

Interval IntervalTruncDiv(const Interval& a, const Interval& b) { return Divide(a, b, false); }

Interval IntervalFloorMod(const Interval& a, const Interval& b) {
  if (b.is_single() && b.min > 0) {
    int64_t c = b.min;
    if (a.bounded_below() && a.bounded_above()) {
      int64_t period = FloorDivInt(a.min, c);
      // Within one period the remainder is an offset of `a` itself.
      if (period == FloorDivInt(a.max, c)) return Interval{a.min - period * c, a.max - period * c};
    }
    if (a.min >= 0) return Interval{0, std::min(c - 1, a.max)};
    return Interval{0, c - 1};
  }
  if (b.min > 0) return Interval{0, b.max == kPosInf ? kPosInf : b.max - 1};
  if (b.max < 0) return Interval{b.min == kNegInf ? kNegInf : b.min + 1, 0};
  return Interval::Everything();
}

Interval IntervalMin(const Interval& a, const Interval& b) {
  return Interval{std::min(a.min, b.min), std::min(a.max, b.max)};
}

Interval IntervalMax(const Interval& a, const Interval& b) {
  return Interval{std::max(a.min, b.min), std::max(a.max, b.max)};
}

}  // namespace kiln::loop::arith
