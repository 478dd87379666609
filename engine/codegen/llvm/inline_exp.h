// exp and sigmoid of float32 values emitted inline as LLVM IR instead of a libm or libmvec call.
//
// Why inline: exp sits in the epilogues of convolutions (sigmoid, swish) and in softmax. A call
// per vector clobbers every vector register (the x86-64 vector ABI keeps none callee-saved), so a
// kernel holding a register tile of accumulators spilled all of them around each call; inline,
// the dozen instructions schedule with the rest of the kernel on every target. Scalars use the
// same sequence so a value's exp does not depend on whether it fell in a vector body or a tail.
#pragma once

#include "llvm/IR/IRBuilder.h"

namespace kiln::codegen {

// exp(x) for `x` of type float or <N x float>: Cephes' range reduction x = n ln2 + r with
// |r| <= ln2/2, a degree-6 polynomial (under 1 ulp, inline_exp.cc), then 2^n applied as two exact
// power-of-two factors so subnormal results round once and large ones overflow to infinity.
// NaN gives NaN, -inf gives 0, +inf gives +inf. `avx512` (a target with AVX-512 F, DQ, VL): 2^n
// applied by one vscalefps, seven instructions fewer, the same results.
llvm::Value* EmitInlineExpFloat(llvm::IRBuilderBase& builder, llvm::Value* x, bool avx512);

// sigmoid(x) = 1 / (1 + exp(-x)) for float or <N x float>, with the same range reduction and
// polynomial but about half the instructions of a call to the exp above (swish and SE gates
// put one per element in convolution epilogues): one clamp per side, 2^n from a single shift.
// Within 6 ulp above x = -88; 0 below about -88.7 (where the true value is subnormal), 1 above
// 17 and at +inf, NaN for NaN. With `numerator`, numerator / (1 + exp(-x)) instead: swish,
// x * sigmoid(x), as x / (1 + exp(-x)), one division and no multiply (and one rounding less).
// `avx512`: 2^n applied by one vscalefps, one instruction fewer (two for swish, whose clamp is one
// vrangeps), the same bits except just above x = -88.7, where the result is the subnormal it
// should be rather than 0.
llvm::Value* EmitInlineSigmoidFloat(llvm::IRBuilderBase& builder, llvm::Value* x,
                                    llvm::Value* numerator, bool avx512);

}  // namespace kiln::codegen
