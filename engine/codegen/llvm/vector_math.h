// Vectorized math through glibc's libmvec, the vector variants of libm named by the x86-64
// Vector Function ABI (`_ZGV<isa>N<lanes><params>_<function>`; the same names LLVM's
// vector-library tables map to). A vector exp/log/tanh/erf/... becomes one call per 128- or
// 256-bit chunk instead of one libm call per lane.
//
// Accuracy: glibc documents at most 4 ulp for every libmvec function (manual, "Errors in Math
// Functions"); tests/unit/codegen/vector_math_test.cc measures it against double-precision libm.
// Targets other than x86-64 Linux keep the per-lane libm calls. 512-bit variants are not used:
// passing a zmm argument needs `min-legal-vector-width`, and Kiln's vectors are at most 256 bits
// per call after splitting anyway.
#pragma once

#include <string>
#include <vector>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace kiln::codegen {

// The libmvec variants a target can call: 'b' (SSE, 128 bits) always on x86-64 Linux, 256 bits
// as 'd' (AVX2) or 'c' (AVX).
struct VectorMathTarget {
  bool enabled = false;
  char isa_256 = 0;  // 0: no 256-bit variants
  // AVX-512 F, DQ and VL (any OS): the inline exp and sigmoid apply 2^n with vscalefps, swish
  // clamps with vrangeps (inline_exp.h).
  bool avx512 = false;

  static VectorMathTarget For(const llvm::TargetMachine& machine);
};

// True when libmvec has a vector variant of the C function `name` ("exp", "tanh", "pow").
bool HasVectorVariant(const std::string& name);

// `name` applied lane-wise to the vectors `args` (float or double, all of one type) as libmvec
// calls, or null when the target or the vector width has none (the caller calls libm per lane).
llvm::Value* EmitVectorMathCall(llvm::IRBuilderBase& builder, llvm::Module& module,
                                const VectorMathTarget& target, const std::string& name,
                                const std::vector<llvm::Value*>& args);

}  // namespace kiln::codegen
