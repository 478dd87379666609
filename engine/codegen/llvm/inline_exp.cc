// The inline float32 exp (inline_exp.h).
#include "engine/codegen/llvm/inline_exp.h"

#include "llvm/IR/Intrinsics.h"

namespace kiln::codegen {
namespace {

// exp(r) = 1 + r (1 + r P(r)) for |r| <= ln2/2, P of degree 4 evaluated by Horner: six fused
// multiply-adds. The coefficients minimize the relative error over that interval (fitted for
// Kiln by iteratively reweighted least squares: 3.1e-9, under 0.72 ulp once each step rounds
// to float32).
llvm::Value* ExpOfReducedArgument(llvm::IRBuilderBase& b, llvm::Value* r) {
  llvm::Type* type = r->getType();
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {a, m, c});
  };
  llvm::Value* p = constant(1.3814611200e-03);
  for (double c : {8.3687102561e-03, 4.1668387421e-02, 1.6666520686e-01, 4.9999993451e-01, 1.0,
                   1.0}) {
    p = fmuladd(p, r, constant(c));
  }
  return p;
}

}  // namespace

llvm::Value* EmitInlineExpFloat(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto integer = [&](int v) { return llvm::ConstantInt::get(int_type, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {a, m, c});
  };

  // Below -104 every result rounds to 0 and above 89 to infinity; clamping keeps n within what
  // two factors of 2^(n/2) can express. Each compare-and-select keeps x when the compare fails,
  // so a NaN passes through (and every step after it gives NaN), as one maxps/minps each.
  llvm::Value* lo = constant(-104.0);
  llvm::Value* hi = constant(89.0);
  llvm::Value* t = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  t = b.CreateSelect(b.CreateFCmpOGT(t, hi), hi, t);

  // n = round(t / ln2) without a rounding instruction: adding 1.5 * 2^23 leaves the rounded
  // value in the low mantissa bits, read once as a float and once as an integer.
  llvm::Value* magic = constant(12582912.0);  // 1.5 * 2^23
  llvm::Value* shifted = fmuladd(t, constant(1.44269504088896341), magic);
  llvm::Value* n = b.CreateFSub(shifted, magic);
  llvm::Value* n_int = b.CreateSub(b.CreateBitCast(shifted, int_type),
                                   b.CreateBitCast(magic, int_type));

  // r = t - n ln2 with ln2 split in two (Cephes): n * 0.693359375 is exact for |n| < 2^15.
  llvm::Value* r = fmuladd(n, constant(-0.693359375), t);
  r = fmuladd(n, constant(2.12194440e-4), r);

  llvm::Value* e = ExpOfReducedArgument(b, r);

  // e * 2^n as e * 2^(n/2) * 2^(n - n/2): each factor a normal float for n in [-150, 128], the
  // first product exact, the second rounding once (into the subnormals or to infinity).
  auto power_of_two = [&](llvm::Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, integer(127)), integer(23)), type);
  };
  llvm::Value* half = b.CreateAShr(n_int, integer(1));
  llvm::Value* rest = b.CreateSub(n_int, half);
  return b.CreateFMul(b.CreateFMul(e, power_of_two(half)), power_of_two(rest));
}

}  // namespace kiln::codegen

namespace kiln::codegen {

llvm::Value* EmitInlineSigmoidFloat(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {a, m, c});
  };

  // u = -x clamped to [-87, 89], so n = round(u / ln2) lies in [-126, 128] and 2^n is one
  // float: a normal number, or +inf at n = 128, where 1 / (1 + inf) gives the 0 that sigmoid
  // rounds to below x = -88.7 anyway. Above x = 17 every result rounds to 1. The compares keep
  // a NaN (each select keeps x when its compare fails), and a NaN stays NaN to the end.
  llvm::Value* lo = constant(-87.0);
  llvm::Value* hi = constant(89.0);
  llvm::Value* u = b.CreateFNeg(x);
  u = b.CreateSelect(b.CreateFCmpOLT(u, lo), lo, u);
  u = b.CreateSelect(b.CreateFCmpOGT(u, hi), hi, u);

  // The magic constant 1.5 * 2^23 + 127 leaves n + 127 in the low mantissa bits, so shifting
  // those bits into the exponent field is 2^n with no separate integer add or subtract.
  llvm::Value* magic = constant(12582912.0 + 127.0);
  llvm::Value* shifted = fmuladd(u, constant(1.44269504088896341), magic);
  llvm::Value* n = b.CreateFSub(shifted, magic);
  llvm::Value* r = fmuladd(n, constant(-0.693359375), u);
  r = fmuladd(n, constant(2.12194440e-4), r);
  llvm::Value* power_of_two = b.CreateBitCast(
      b.CreateShl(b.CreateBitCast(shifted, int_type), llvm::ConstantInt::get(int_type, 23)), type);
  llvm::Value* exp_u = b.CreateFMul(ExpOfReducedArgument(b, r), power_of_two);
  return b.CreateFDiv(constant(1.0), b.CreateFAdd(constant(1.0), exp_u));
}

}  // namespace kiln::codegen
