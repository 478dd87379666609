// The inline float32 erf (inline_erf.h).
#include "engine/codegen/llvm/inline_erf.h"

#include "llvm/IR/Intrinsics.h"

namespace kiln::codegen {
namespace {

// Horner's rule over `coefficients` (highest degree first) in `z`, one fused multiply-add a step.
template <size_t N>
llvm::Value* Horner(llvm::IRBuilderBase& b, llvm::Value* z, const double (&coefficients)[N]) {
  llvm::Type* type = z->getType();
  llvm::Value* p = llvm::ConstantFP::get(type, coefficients[0]);
  for (size_t i = 1; i < N; ++i) {
    p = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type},
                          {p, z, llvm::ConstantFP::get(type, coefficients[i])});
  }
  return p;
}

// `v` clamped to [-bound, bound] by ordered comparisons, so a NaN passes through unchanged.
llvm::Value* ClampKeepingNan(llvm::IRBuilderBase& b, llvm::Value* v, double bound) {
  llvm::Value* high = llvm::ConstantFP::get(v->getType(), bound);
  llvm::Value* low = llvm::ConstantFP::get(v->getType(), -bound);
  v = b.CreateSelect(b.CreateFCmpOGT(v, high), high, v);
  return b.CreateSelect(b.CreateFCmpOLT(v, low), low, v);
}

}  // namespace

llvm::Value* EmitInlineErfFloat(llvm::IRBuilderBase& b, llvm::Value* x) {
  // erf(x) = x P(x^2) / Q(x^2) on [0, 4] (odd, so on [-4, 4]): fitted for Kiln by iteratively
  // reweighted least squares on the relative error (Loeb's method), 4.8e-9 in float64; the error
  // of evaluating it in float32 (4.2e-7 near erf = 1) dominates. Highest degree first.
  static constexpr double kNumerator[] = {-1.3107152697e-08, 4.6670255744e-06, 3.7897648339e-04,
                                          3.8479613231e-03, 5.4302609378e-02, 1.8520655182e-01,
                                          1.1283791679e+00};
  static constexpr double kDenominator[] = {6.2945673541e-05, 1.306409208e-03, 1.545637554e-02,
                                            1.1394676798e-01, 4.9746843234e-01, 1.0};
  llvm::Value* clamped = ClampKeepingNan(b, x, 4.0);
  llvm::Value* z = b.CreateFMul(clamped, clamped);
  llvm::Value* numerator = b.CreateFMul(clamped, Horner(b, z, kNumerator));
  llvm::Value* ratio = b.CreateFDiv(numerator, Horner(b, z, kDenominator));
  // float32 rounding takes the ratio just above 1 near |x| = 3.6.
  return ClampKeepingNan(b, ratio, 1.0);
}

}  // namespace kiln::codegen
