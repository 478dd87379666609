// Scalar value semantics of the loop-IR interpreter: how each dtype holds one
// lane of a value, loads and stores it, and how arithmetic, comparisons, casts
// and intrinsics behave. Header-only templates so the interpreter specializes
// its compiled nodes per dtype once, when it compiles a PrimFunc.
//
// The rules (they are the reference the code generator must match):
// - Integers wrap to their width; kDiv and fmod truncate, kFloorDiv and
//   kFloorMod floor; INT_MIN / -1 wraps to INT_MIN (remainder 0). Division by
//   zero is reported by the caller (the interpreter checks the divisor), and
//   so is a shift amount outside [0, bits). Shifting right is arithmetic for
//   signed dtypes, logical for unsigned ones.
// - float32 arithmetic is done in float (rounded after every operation);
//   float16 and bfloat16 are computed in float and rounded to their format
//   after every operation; float64 in double.
// - min/max of floats propagate NaN; comparisons with NaN are false (ne true).
// - float -> int casts truncate toward zero and saturate: NaN gives 0, values
//   beyond the target's range give its minimum or maximum. Casts to bool are
//   `!= 0` (NaN is true); narrowing float casts round to nearest even, exactly
//   once (round-to-odd intermediates avoid double rounding).
// - round is half to even (ONNX Round); sigmoid is 1 / (1 + exp(-x)).
// - On integer dtypes abs wraps (abs(INT_MIN) == INT_MIN), floor/ceil/round/
//   trunc are the identity, isnan/isinf are false, pow multiplies exactly
//   (negative exponents give 0 except for bases 1 and -1), fma is a * b + c,
//   and the remaining math functions are computed in double and cast back.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engine/ir/dtype.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/ir/float16.h"
#include "engine/loop/expr.h"

namespace kiln::loop::interp {

// One lane of a value. Integers are held canonically (signed dtypes
// sign-extended, unsigned and bool zero-extended to 64 bits) so copies,
// equality and selects need no dtype. float32, float16 and bfloat16 are held
// as float (the latter two exactly representable in their format), float64
// as double.
union Scalar {
  int64_t i;
  uint64_t u;
  float f32;
  double f64;
};

inline Scalar BoolScalar(bool value) {
  Scalar s{};
  s.u = value ? 1 : 0;
  return s;
}

// Round to odd: the nearest float toward zero, with the lowest mantissa bit
// set when the conversion was inexact. Rounding that float again to a format
// at least two bits narrower (float16, bfloat16) gives the correctly rounded
// result, which two round-to-nearest steps do not always give.
inline float DoubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(f) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline float UInt64ToFloatRoundToOdd(uint64_t magnitude) {
  if (magnitude < (uint64_t{1} << 24)) return static_cast<float>(magnitude);
  int shift = std::bit_width(magnitude) - 24;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1u;
  return std::ldexp(static_cast<float>(kept), shift);
}

inline float Int64ToFloatRoundToOdd(int64_t value) {
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  float f = UInt64ToFloatRoundToOdd(magnitude);
  return value < 0 ? -f : f;
}

template <typename C>
C RoundHalfToEven(C x) {
  C rounded = std::round(x);  // halves go away from zero
  if (std::fabs(x - std::trunc(x)) == C(0.5)) rounded = C(2) * std::round(x / C(2));
  return rounded;
}

// Truncation toward zero, saturating at the limits of T; NaN gives 0.
template <typename T>
T SaturatingFloatToInt(double value) {
  if (std::isnan(value)) return 0;
  double truncated = std::trunc(value);
  // Both limits are powers of two (or zero), exact in double.
  constexpr double kLow = static_cast<double>(std::numeric_limits<T>::min());
  const double kHighExclusive = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (truncated < kLow) return std::numeric_limits<T>::min();
  if (truncated >= kHighExclusive) return std::numeric_limits<T>::max();
  return static_cast<T>(truncated);
}

// ---------------------------------------------------------------------------
// Per-dtype traits. Integer traits: Wrap (canonicalize 64 bits to the dtype),
// Load/Store, FromDouble (the saturating cast). Float traits: Compute (the C
// type arithmetic is done in), Get, Make (rounds a Compute value to the
// dtype), FromDouble/FromFloat/FromInt64/FromUInt64 (correctly rounded).

template <typename T>
struct IntTraits {
  using Native = T;
  static constexpr bool kFloat = false;
  static constexpr bool kBool = false;
  static constexpr bool kSigned = std::is_signed_v<T>;
  static constexpr int kBytes = sizeof(T);

  static Scalar Wrap(uint64_t bits) {
    Scalar s{};
    if constexpr (kSigned) {
      s.i = static_cast<int64_t>(static_cast<T>(bits));
    } else {
      s.u = static_cast<uint64_t>(static_cast<T>(bits));
    }
    return s;
  }
  static Scalar Load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return Wrap(static_cast<uint64_t>(v));
  }
  static void Store(uint8_t* p, Scalar value) {
    T v = static_cast<T>(value.u);
    std::memcpy(p, &v, sizeof(T));
  }
  static Scalar FromDouble(double value) {
    return Wrap(static_cast<uint64_t>(SaturatingFloatToInt<T>(value)));
  }
  static double ToDouble(Scalar value) {
    if constexpr (kSigned) return static_cast<double>(value.i);
    return static_cast<double>(value.u);
  }
};

struct BoolTraits {
  static constexpr bool kFloat = false;
  static constexpr bool kBool = true;
  static constexpr bool kSigned = false;
  static constexpr int kBytes = 1;

  // bool is a one-bit integer: arithmetic on it wraps like LLVM's i1.
  static Scalar Wrap(uint64_t bits) {
    Scalar s{};
    s.u = bits & 1u;
    return s;
  }
  // Any nonzero byte reads as true.
  static Scalar Load(const uint8_t* p) { return BoolScalar(*p != 0); }
  static void Store(uint8_t* p, Scalar value) { *p = static_cast<uint8_t>(value.u & 1u); }
  static Scalar FromDouble(double value) { return BoolScalar(value != 0.0); }
  static double ToDouble(Scalar value) { return static_cast<double>(value.u); }
};

struct Float32Traits {
  using Compute = float;
  static constexpr bool kFloat = true;
  static constexpr bool kBool = false;
  static constexpr bool kSigned = true;
  static constexpr int kBytes = 4;

  static float Get(Scalar value) { return value.f32; }
  static Scalar Make(float x) {
    Scalar s{};
    s.f32 = x;
    return s;
  }
  static Scalar FromFloat(float x) { return Make(x); }
  static Scalar FromDouble(double x) { return Make(static_cast<float>(x)); }
  static Scalar FromInt64(int64_t x) { return Make(static_cast<float>(x)); }
  static Scalar FromUInt64(uint64_t x) { return Make(static_cast<float>(x)); }
  static double ToDouble(Scalar value) { return value.f32; }
  static Scalar Load(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, sizeof(v));
    return Make(v);
  }
  static void Store(uint8_t* p, Scalar value) { std::memcpy(p, &value.f32, sizeof(float)); }
};

struct Float64Traits {
  using Compute = double;
  static constexpr bool kFloat = true;
  static constexpr bool kBool = false;
  static constexpr bool kSigned = true;
  static constexpr int kBytes = 8;

  static double Get(Scalar value) { return value.f64; }
  static Scalar Make(double x) {
    Scalar s{};
    s.f64 = x;
    return s;
  }
  static Scalar FromFloat(float x) { return Make(x); }
  static Scalar FromDouble(double x) { return Make(x); }
  static Scalar FromInt64(int64_t x) { return Make(static_cast<double>(x)); }
  static Scalar FromUInt64(uint64_t x) { return Make(static_cast<double>(x)); }
  static double ToDouble(Scalar value) { return value.f64; }
  static Scalar Load(const uint8_t* p) {
    double v;
    std::memcpy(&v, p, sizeof(v));
    return Make(v);
  }
  static void Store(uint8_t* p, Scalar value) { std::memcpy(p, &value.f64, sizeof(double)); }
};

// float16 and bfloat16: held as the float they denote; Make rounds a float
// result to the format (one rounding from float is exact-once for + - * / and
// sqrt, since float carries more than twice the format's precision).
template <uint16_t (*kToBits)(float), float (*kFromBits)(uint16_t)>
struct HalfTraits {
  using Compute = float;
  static constexpr bool kFloat = true;
  static constexpr bool kBool = false;
  static constexpr bool kSigned = true;
  static constexpr int kBytes = 2;

  static float Get(Scalar value) { return value.f32; }
  static Scalar Make(float x) {
    Scalar s{};
    s.f32 = kFromBits(kToBits(x));
    return s;
  }
  static Scalar FromFloat(float x) { return Make(x); }
  static Scalar FromDouble(double x) { return Make(DoubleToFloatRoundToOdd(x)); }
  static Scalar FromInt64(int64_t x) { return Make(Int64ToFloatRoundToOdd(x)); }
  static Scalar FromUInt64(uint64_t x) { return Make(UInt64ToFloatRoundToOdd(x)); }
  static double ToDouble(Scalar value) { return value.f32; }
  static Scalar Load(const uint8_t* p) {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    Scalar s{};
    s.f32 = kFromBits(bits);
    return s;
  }
  static void Store(uint8_t* p, Scalar value) {
    uint16_t bits = kToBits(value.f32);
    std::memcpy(p, &bits, sizeof(bits));
  }
};
using Float16Traits = HalfTraits<&FloatToHalf, &HalfToFloat>;
using BFloat16Traits = HalfTraits<&FloatToBFloat16, &BFloat16ToFloat>;

// The traits of each dtype: IntTraits of the stored integer unless specialized below.
template <DataType D>
struct TraitsOf {
  using type = IntTraits<DataTypeStorage<D>>;
};
template <>
struct TraitsOf<DataType::kFloat16> {
  using type = Float16Traits;
};
template <>
struct TraitsOf<DataType::kBFloat16> {
  using type = BFloat16Traits;
};
template <>
struct TraitsOf<DataType::kFloat32> {
  using type = Float32Traits;
};
template <>
struct TraitsOf<DataType::kFloat64> {
  using type = Float64Traits;
};
template <>
struct TraitsOf<DataType::kBool> {
  using type = BoolTraits;
};

// Calls `fn(Traits{})` with the traits of `dtype`.
template <typename Fn>
decltype(auto) VisitDataType(DataType dtype, Fn&& fn) {
  return DispatchDataType(dtype, [&fn]<DataType D>() -> decltype(auto) {
    return fn(typename TraitsOf<D>::type{});
  });
}

// ---------------------------------------------------------------------------
// Operations.

template <typename T>
bool IntLess(Scalar a, Scalar b) {
  if constexpr (T::kSigned) return a.i < b.i;
  return a.u < b.u;
}

template <typename C>
C FloatMin(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b < a ? b : a;
}

template <typename C>
C FloatMax(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? b : a;
}

// Bits of an integer dtype (1 for bool): the exclusive bound of shift amounts.
template <typename T>
constexpr uint64_t IntBits() {
  return T::kBool ? 1 : static_cast<uint64_t>(T::kBytes) * 8;
}

constexpr bool IsShift(BinaryOp op) {
  return op == BinaryOp::kShiftLeft || op == BinaryOp::kShiftRight;
}

constexpr bool IsBitwise(BinaryOp op) {
  return op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr || op == BinaryOp::kBitXor ||
         IsShift(op);
}

// True when `op` on integers of T needs a nonzero divisor.
template <typename T>
constexpr bool NeedsNonzeroDivisor(BinaryOp op) {
  return !T::kFloat && (op == BinaryOp::kDiv || op == BinaryOp::kFloorDiv ||
                        op == BinaryOp::kFloorMod);
}

// Every binary operator except kAnd/kOr on bool (the interpreter short-
// circuits those) and the bitwise ones on floats (rejected when compiling).
// Integer division requires b != 0 and shifts an amount in [0, bits)
// (checked by the caller).
template <typename T, BinaryOp kOp>
Scalar ApplyBinary(Scalar a, Scalar b) {
  if constexpr (T::kFloat) {
    using C = typename T::Compute;
    C x = T::Get(a), y = T::Get(b);
    if constexpr (kOp == BinaryOp::kAdd) return T::Make(x + y);
    if constexpr (kOp == BinaryOp::kSub) return T::Make(x - y);
    if constexpr (kOp == BinaryOp::kMul) return T::Make(x * y);
    if constexpr (kOp == BinaryOp::kDiv) return T::Make(x / y);
    if constexpr (kOp == BinaryOp::kFloorDiv) return T::Make(std::floor(x / y));
    if constexpr (kOp == BinaryOp::kFloorMod) {
      C r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return T::Make(r);
    }
    if constexpr (kOp == BinaryOp::kMin) return T::Make(FloatMin(x, y));
    if constexpr (kOp == BinaryOp::kMax) return T::Make(FloatMax(x, y));
    if constexpr (kOp == BinaryOp::kEQ) return BoolScalar(x == y);
    if constexpr (kOp == BinaryOp::kNE) return BoolScalar(x != y);
    if constexpr (kOp == BinaryOp::kLT) return BoolScalar(x < y);
    if constexpr (kOp == BinaryOp::kLE) return BoolScalar(x <= y);
    if constexpr (kOp == BinaryOp::kGT) return BoolScalar(x > y);
    if constexpr (kOp == BinaryOp::kGE) return BoolScalar(x >= y);
    // kAnd/kOr on floats are rejected when compiling.
    return T::Make(0);
  } else {
    if constexpr (kOp == BinaryOp::kAdd) return T::Wrap(a.u + b.u);
    if constexpr (kOp == BinaryOp::kSub) return T::Wrap(a.u - b.u);
    if constexpr (kOp == BinaryOp::kMul) return T::Wrap(a.u * b.u);
    if constexpr (kOp == BinaryOp::kDiv) {
      if constexpr (T::kSigned) {
        if (b.i == -1) return T::Wrap(0 - a.u);  // INT_MIN / -1 wraps
        return T::Wrap(static_cast<uint64_t>(a.i / b.i));
      }
      return T::Wrap(a.u / b.u);
    }
    if constexpr (kOp == BinaryOp::kFloorDiv) {
      if constexpr (T::kSigned) {
        if (b.i == -1) return T::Wrap(0 - a.u);
        int64_t q = a.i / b.i;
        if (a.i % b.i != 0 && ((a.i < 0) != (b.i < 0))) --q;
        return T::Wrap(static_cast<uint64_t>(q));
      }
      return T::Wrap(a.u / b.u);
    }
    if constexpr (kOp == BinaryOp::kFloorMod) {
      if constexpr (T::kSigned) {
        if (b.i == -1) return T::Wrap(0);
        int64_t r = a.i % b.i;
        if (r != 0 && ((r < 0) != (b.i < 0))) r += b.i;
        return T::Wrap(static_cast<uint64_t>(r));
      }
      return T::Wrap(a.u % b.u);
    }
    if constexpr (kOp == BinaryOp::kMin) return IntLess<T>(b, a) ? b : a;
    if constexpr (kOp == BinaryOp::kMax) return IntLess<T>(a, b) ? b : a;
    if constexpr (kOp == BinaryOp::kEQ) return BoolScalar(a.u == b.u);
    if constexpr (kOp == BinaryOp::kNE) return BoolScalar(a.u != b.u);
    if constexpr (kOp == BinaryOp::kLT) return BoolScalar(IntLess<T>(a, b));
    if constexpr (kOp == BinaryOp::kLE) return BoolScalar(!IntLess<T>(b, a));
    if constexpr (kOp == BinaryOp::kGT) return BoolScalar(IntLess<T>(b, a));
    if constexpr (kOp == BinaryOp::kGE) return BoolScalar(!IntLess<T>(a, b));
    // On integers (not bool, which short-circuits) and/or are bitwise;
    // canonical operands give canonical results.
    if constexpr (kOp == BinaryOp::kAnd) return T::Wrap(a.u & b.u);
    if constexpr (kOp == BinaryOp::kOr) return T::Wrap(a.u | b.u);
    if constexpr (kOp == BinaryOp::kBitAnd) return T::Wrap(a.u & b.u);
    if constexpr (kOp == BinaryOp::kBitOr) return T::Wrap(a.u | b.u);
    if constexpr (kOp == BinaryOp::kBitXor) return T::Wrap(a.u ^ b.u);
    // Shift amounts are in [0, bits) (checked by the caller).
    if constexpr (kOp == BinaryOp::kShiftLeft) return T::Wrap(a.u << b.u);
    if constexpr (kOp == BinaryOp::kShiftRight) {
      // Canonical values: an arithmetic shift of the sign-extended value is
      // the signed dtype's arithmetic shift.
      if constexpr (T::kSigned) return T::Wrap(static_cast<uint64_t>(a.i >> b.u));
      return T::Wrap(a.u >> b.u);
    }
    return T::Wrap(0);
  }
}

// Logical not on bool, bitwise complement on integers.
template <typename T>
Scalar ApplyNot(Scalar a) {
  return T::Wrap(T::kBool ? (a.u ^ 1u) : ~a.u);
}

// The cast Src -> Dst (see the rules at the top of this file).
template <typename Dst, typename Src>
Scalar Convert(Scalar v) {
  if constexpr (Dst::kBool) {
    if constexpr (Src::kFloat) {
      return BoolScalar(Src::Get(v) != 0);
    } else {
      return BoolScalar(v.u != 0);
    }
  } else if constexpr (!Dst::kFloat) {
    if constexpr (Src::kFloat) {
      return Dst::FromDouble(static_cast<double>(Src::Get(v)));
    } else {
      return Dst::Wrap(v.u);
    }
  } else if constexpr (!Src::kFloat) {
    if constexpr (Src::kSigned) {
      return Dst::FromInt64(v.i);
    } else {
      return Dst::FromUInt64(v.u);
    }
  } else if constexpr (std::is_same_v<typename Src::Compute, double>) {
    return Dst::FromDouble(v.f64);
  } else {
    return Dst::FromFloat(v.f32);
  }
}

// Math functions on a float compute type C, for the unary intrinsics;
// nullptr for the ones that are not unary math (pow, fma, fmod, isnan, isinf).
template <typename C>
using UnaryMathFn = C (*)(C);

template <typename C>
UnaryMathFn<C> FloatUnaryMath(Intrinsic intrinsic) {
  switch (intrinsic) {
    case Intrinsic::kExp: return [](C x) -> C { return std::exp(x); };
    case Intrinsic::kLog: return [](C x) -> C { return std::log(x); };
    case Intrinsic::kSqrt: return [](C x) -> C { return std::sqrt(x); };
    case Intrinsic::kRsqrt: return [](C x) -> C { return C(1) / std::sqrt(x); };
    case Intrinsic::kTanh: return [](C x) -> C { return std::tanh(x); };
    case Intrinsic::kSigmoid: return [](C x) -> C { return C(1) / (C(1) + std::exp(-x)); };
    case Intrinsic::kErf: return [](C x) -> C { return std::erf(x); };
    case Intrinsic::kAbs: return [](C x) -> C { return std::fabs(x); };
    case Intrinsic::kFloor: return [](C x) -> C { return std::floor(x); };
    case Intrinsic::kCeil: return [](C x) -> C { return std::ceil(x); };
    case Intrinsic::kRound: return [](C x) -> C { return RoundHalfToEven(x); };
    case Intrinsic::kTrunc: return [](C x) -> C { return std::trunc(x); };
    case Intrinsic::kSin: return [](C x) -> C { return std::sin(x); };
    case Intrinsic::kCos: return [](C x) -> C { return std::cos(x); };
    case Intrinsic::kTan: return [](C x) -> C { return std::tan(x); };
    case Intrinsic::kAsin: return [](C x) -> C { return std::asin(x); };
    case Intrinsic::kAcos: return [](C x) -> C { return std::acos(x); };
    case Intrinsic::kAtan: return [](C x) -> C { return std::atan(x); };
    case Intrinsic::kSinh: return [](C x) -> C { return std::sinh(x); };
    case Intrinsic::kCosh: return [](C x) -> C { return std::cosh(x); };
    case Intrinsic::kAsinh: return [](C x) -> C { return std::asinh(x); };
    case Intrinsic::kAcosh: return [](C x) -> C { return std::acosh(x); };
    case Intrinsic::kAtanh: return [](C x) -> C { return std::atanh(x); };
    case Intrinsic::kPow:
    case Intrinsic::kFma:
    case Intrinsic::kFmod:
    case Intrinsic::kIsNan:
    case Intrinsic::kIsInf: return nullptr;
  }
  return nullptr;
}

// x ** n on integers, wrapping; negative exponents give 0 except for the
// bases 1 and -1 (the integer part of the exact result).
template <typename T>
Scalar IntPow(Scalar base, Scalar exponent) {
  if (T::kSigned && exponent.i < 0) {
    if (base.i == 1) return T::Wrap(1);
    if (base.i == -1) return T::Wrap((exponent.u & 1u) ? ~uint64_t{0} : 1);
    return T::Wrap(0);
  }
  uint64_t result = 1, factor = base.u, n = exponent.u;
  while (n != 0) {
    if (n & 1u) result *= factor;
    factor *= factor;
    n >>= 1;
  }
  return T::Wrap(result);
}

}  // namespace kiln::loop::interp
