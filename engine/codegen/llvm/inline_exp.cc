// The inline float32 exp (inline_exp.h).
#include "engine/codegen/llvm/inline_exp.h"

#include "llvm/IR/Intrinsics.h"

namespace kiln::codegen {

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

  // exp(r) = 1 + r + r^2 P(r) on [-ln2/2, ln2/2] (Cephes expf.c).
  llvm::Value* p = constant(1.9875691500e-4);
  for (double c : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                   5.0000001201e-1}) {
    p = fmuladd(p, r, constant(c));
  }
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* e = fmuladd(p, r2, b.CreateFAdd(r, constant(1.0)));

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
