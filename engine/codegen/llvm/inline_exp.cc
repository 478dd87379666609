// The inline float32 exp (inline_exp.h).
#include "engine/codegen/llvm/inline_exp.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace kiln::codegen {
namespace {

// exp(r) = 1 + r (1 + r P(r)) for |r| <= ln2/2, P of degree 4 evaluated by Horner: six fused
// multiply-adds. The coefficients minimize the relative error over that interval (fitted for
// Kiln by iteratively reweighted least squares: 3.1e-9, under 0.72 ulp once each step rounds
// to float32; a degree-5 fit, one multiply-add fewer, measured no faster in EfficientNet's swish
// epilogues and 3 ulp instead of 2 in sigmoid). With `negated`, the argument is s = -r: Horner
// in s over the coefficients of alternating sign, whose k-th partial result is (-1)^k times the
// one in r, so exp(-s) comes out bit for bit as exp(r) would (round to nearest is symmetric),
// with no negation of s.
llvm::Value* ExpOfReducedArgument(llvm::IRBuilderBase& b, llvm::Value* r, bool negated) {
  static constexpr double kCoefficients[] = {1.3814611200e-03, 8.3687102561e-03,
                                             4.1668387421e-02, 1.6666520686e-01,
                                             4.9999993451e-01, 1.0, 1.0};  // degree 6 down to 0
  llvm::Type* type = r->getType();
  llvm::Value* p = nullptr;
  for (int i = 0; i < 7; ++i) {
    int degree = 6 - i;
    llvm::Value* c = llvm::ConstantFP::get(type, negated && degree % 2 == 1 ? -kCoefficients[i]
                                                                             : kCoefficients[i]);
    p = p == nullptr ? c : b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {p, r, c});
  }
  return p;
}

// `emit` applied to float operands split into AVX-512 registers: each operand (a float, or a
// vector of any lane count) padded with zero lanes to 4, 8 or 16 lanes, or cut into 16-lane
// chunks, and the results put back together at the operands' width. A scalar goes through the
// same packed instruction as a vector's lanes, so a value's result does not depend on whether it
// fell in a vector body or a scalar tail.
llvm::Value* InAvx512Registers(llvm::IRBuilderBase& b, const std::vector<llvm::Value*>& operands,
                               const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& emit) {
  llvm::Type* type = operands[0]->getType();
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  int lanes = vector != nullptr ? static_cast<int>(vector->getNumElements()) : 1;
  llvm::Value* result = vector != nullptr ? llvm::PoisonValue::get(type) : nullptr;
  for (int start = 0; start < lanes; start += 16) {
    int count = std::min(16, lanes - start);
    int width = count <= 4 ? 4 : count <= 8 ? 8 : 16;
    llvm::Type* register_type = llvm::FixedVectorType::get(b.getFloatTy(), width);
    std::vector<llvm::Value*> chunk;
    for (llvm::Value* operand : operands) {
      if (vector == nullptr) {
        chunk.push_back(b.CreateInsertElement(llvm::Constant::getNullValue(register_type), operand,
                                              uint64_t{0}));
        continue;
      }
      // Lane i of the chunk is the operand's lane start + i, or a zero (index `lanes`: the first
      // lane of the second, all-zero shuffle operand).
      llvm::SmallVector<int, 16> picks;
      for (int i = 0; i < width; ++i) picks.push_back(i < count ? start + i : lanes);
      chunk.push_back(b.CreateShuffleVector(operand, llvm::Constant::getNullValue(type), picks));
    }
    llvm::Value* piece = emit(chunk);
    if (vector == nullptr) return b.CreateExtractElement(piece, uint64_t{0});
    if (count == lanes && width == lanes) return piece;
    if (lanes <= 16) {
      llvm::SmallVector<int, 16> picks;
      for (int i = 0; i < lanes; ++i) picks.push_back(i);
      return b.CreateShuffleVector(piece, llvm::PoisonValue::get(register_type), picks);
    }
    for (int i = 0; i < count; ++i) {
      result = b.CreateInsertElement(result, b.CreateExtractElement(piece, uint64_t(i)), uint64_t(start + i));
    }
  }
  return result;
}

// x with its magnitude clamped to `bound` and its sign kept: one vrangeps (imm 0b0010: the
// smaller magnitude of x and bound, with x's sign). A NaN x gives the bound, not NaN.
llvm::Value* ClampMagnitudeAvx512(llvm::IRBuilderBase& b, llvm::Value* x, double bound) {
  return InAvx512Registers(b, {x}, [&](const std::vector<llvm::Value*>& v) -> llvm::Value* {
    llvm::Type* type = v[0]->getType();
    int width = static_cast<int>(llvm::cast<llvm::FixedVectorType>(type)->getNumElements());
    llvm::Value* limit = llvm::ConstantFP::get(type, bound);
    llvm::Value* passthru = llvm::PoisonValue::get(type);
    if (width == 16) {
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_range_ps_512, {},
                               {v[0], limit, b.getInt32(2), passthru, b.getInt16(0xffff),
                                b.getInt32(4) /* current rounding, exceptions as usual */});
    }
    return b.CreateIntrinsic(width == 8 ? llvm::Intrinsic::x86_avx512_mask_range_ps_256
                                        : llvm::Intrinsic::x86_avx512_mask_range_ps_128,
                             {}, {v[0], limit, b.getInt32(2), passthru, b.getInt8(0xff)});
  });
}

// p * 2^n for integral n as one vscalefps: a single rounding, into the subnormals or to
// infinity, whatever the size of n.
llvm::Value* ScaleByPowerOfTwoAvx512(llvm::IRBuilderBase& b, llvm::Value* p, llvm::Value* n) {
  return InAvx512Registers(b, {p, n}, [&](const std::vector<llvm::Value*>& v) -> llvm::Value* {
    llvm::Type* type = v[0]->getType();
    int width = static_cast<int>(llvm::cast<llvm::FixedVectorType>(type)->getNumElements());
    llvm::Value* passthru = llvm::PoisonValue::get(type);
    if (width == 16) {
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                               {v[0], v[1], passthru, b.getInt16(0xffff), b.getInt32(4)});
    }
    return b.CreateIntrinsic(width == 8 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_256
                                        : llvm::Intrinsic::x86_avx512_mask_scalef_ps_128,
                             {}, {v[0], v[1], passthru, b.getInt8(0xff)});
  });
}

}  // namespace

llvm::Value* EmitInlineExpFloat(llvm::IRBuilderBase& b, llvm::Value* x, bool avx512) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto integer = [&](int v) { return llvm::ConstantInt::get(int_type, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {a, m, c});
  };

  // Below -104 every result rounds to 0 and above 89 to infinity; clamping keeps n within what
  // two factors of 2^(n/2) can express (and infinities out of the range reduction). Each
  // compare-and-select keeps x when the compare fails, so a NaN passes through (and every step
  // after it gives NaN), as one maxps/minps each. (vrangeps would clamp both sides in one
  // instruction, but returns the bound for a NaN.)
  llvm::Value* lo = constant(-104.0);
  llvm::Value* hi = constant(89.0);
  llvm::Value* t = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  t = b.CreateSelect(b.CreateFCmpOGT(t, hi), hi, t);

  // n = round(t / ln2) without a rounding instruction: adding 1.5 * 2^23 leaves the rounded
  // value in the low mantissa bits, read once as a float and once as an integer.
  llvm::Value* magic = constant(12582912.0);  // 1.5 * 2^23
  llvm::Value* shifted = fmuladd(t, constant(1.44269504088896341), magic);
  llvm::Value* n = b.CreateFSub(shifted, magic);

  // r = t - n ln2 with ln2 split in two (Cephes): n * 0.693359375 is exact for |n| < 2^15.
  llvm::Value* r = fmuladd(n, constant(-0.693359375), t);
  r = fmuladd(n, constant(2.12194440e-4), r);

  llvm::Value* e = ExpOfReducedArgument(b, r, /*negated=*/false);
  if (avx512) return ScaleByPowerOfTwoAvx512(b, e, n);

  // e * 2^n as e * 2^(n/2) * 2^(n - n/2): each factor a normal float for n in [-150, 128], the
  // first product exact, the second rounding once (into the subnormals or to infinity), as
  // vscalefps rounds: the same results on either path.
  llvm::Value* n_int = b.CreateSub(b.CreateBitCast(shifted, int_type),
                                   b.CreateBitCast(magic, int_type));
  auto power_of_two = [&](llvm::Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, integer(127)), integer(23)), type);
  };
  llvm::Value* half = b.CreateAShr(n_int, integer(1));
  llvm::Value* rest = b.CreateSub(n_int, half);
  return b.CreateFMul(b.CreateFMul(e, power_of_two(half)), power_of_two(rest));
}

}  // namespace kiln::codegen

namespace kiln::codegen {

llvm::Value* EmitInlineSigmoidFloat(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* numerator,
                                    bool avx512) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {a, m, c});
  };

  // exp(u) for u = -x, with u never formed: every step below is the negation of the step in u,
  // exact under round to nearest, so the result is bit for bit that of exp(-x) and the negation
  // costs no instruction. x is clamped to [-89, 87] (u to [-87, 89]), so n = round(u / ln2) lies
  // in [-126, 128] and 2^n is one float: a normal number, or +inf at n = 128, where
  // 1 / (1 + inf) gives the 0 that sigmoid rounds to below x = -88.7 anyway. Above x = 17 every
  // result rounds to 1. The compares keep a NaN (each select keeps x when its compare fails),
  // and a NaN stays NaN to the end. With AVX-512, vscalefps takes any n: x is clamped to
  // [-100, 100], which also gives the subnormal results just above x = -88.7 where the shift's
  // 2^128 is +inf; the rest are the same bits. For swish that clamp is one vrangeps: it maps a
  // NaN x to the bound, but x, the numerator, still makes the result NaN (the swish of +-inf
  // stays +inf and NaN, as x * sigmoid(x) gives).
  llvm::Value* t;
  if (avx512 && numerator == x) {
    t = ClampMagnitudeAvx512(b, x, 100.0);
  } else {
    llvm::Value* lo = constant(avx512 ? -100.0 : -89.0);
    llvm::Value* hi = constant(avx512 ? 100.0 : 87.0);
    t = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
    t = b.CreateSelect(b.CreateFCmpOGT(t, hi), hi, t);
  }

  // The magic constant 1.5 * 2^23 + 127 leaves n + 127 in the low mantissa bits, so shifting
  // those bits into the exponent field is 2^n with no separate integer add or subtract.
  llvm::Value* magic = constant(12582912.0 + 127.0);
  llvm::Value* shifted = fmuladd(t, constant(-1.44269504088896341), magic);
  llvm::Value* n = b.CreateFSub(shifted, magic);
  // s = -(u - n ln2) = t + n ln2, ln2 split in two (Cephes): n * 0.693359375 is exact.
  llvm::Value* s = fmuladd(n, constant(0.693359375), t);
  s = fmuladd(n, constant(-2.12194440e-4), s);
  llvm::Value* p = ExpOfReducedArgument(b, s, /*negated=*/true);
  llvm::Value* exp_u;
  if (avx512) {
    exp_u = ScaleByPowerOfTwoAvx512(b, p, n);
  } else {
    llvm::Value* power_of_two = b.CreateBitCast(
        b.CreateShl(b.CreateBitCast(shifted, int_type), llvm::ConstantInt::get(int_type, 23)), type);
    exp_u = b.CreateFMul(p, power_of_two);
  }
  if (numerator == nullptr) numerator = constant(1.0);
  return b.CreateFDiv(numerator, b.CreateFAdd(constant(1.0), exp_u));
}

}  // namespace kiln::codegen
