// erf of float32 values emitted inline as LLVM IR instead of a libmvec or libm call.
//
// Why inline: erf is the GELU of transformers (x / 2 (1 + erf(x / sqrt 2))), one per element in
// the epilogue of their feed-forward matmul. A call per vector clobbers every vector register and
// glibc's AVX2 erff took about 180 cycles per 8 lanes: the encoder's feed-forward matmul with
// its GELU ran at 29 GFLOP/s against 53 without one. Scalars use the same sequence so a value's
// erf does not depend on whether it fell in a vector body or a tail.
#pragma once

#include "llvm/IR/IRBuilder.h"

namespace kiln::codegen {

// erf(x) for `x` of type float or <N x float>: x P(x^2) / Q(x^2) on x clamped to [-4, 4]
// (beyond, erf rounds to +-1 in float32), P of degree 6 and Q of degree 5 in x^2, the result
// clamped to [-1, 1]. Within 4.2e-7 of erf everywhere with FMA (at most 7 ulp, near |x| = 3.6;
// a target without FMA rounds each multiply and add: 4.6e-7, 8 ulp), exact sign,
// erf(+-inf) = +-1, NaN for NaN (unless the compile asks for fast math, which lets LLVM assume
// no NaN).
llvm::Value* EmitInlineErfFloat(llvm::IRBuilderBase& builder, llvm::Value* x);

}  // namespace kiln::codegen
