// LowerIntrin: rewrites the intrinsics that have no direct LLVM or libm form
// into ones that do, so code generation maps every remaining call one to one:
//
//   rsqrt(x)       -> 1 / sqrt(x)
//   pow(x, 2)      -> x * x          (x * x is the correctly rounded square)
//   f(x) on float16 or bfloat16, for the libm-only functions (tanh, erf,
//   tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, fmod, pow, and
//   the exp/log/sin/cos family) -> cast(f(cast(x, float32)), dtype): libm
//   has no half-precision entry points.
//
// sigmoid stays for code generation (which divides by 1 + exp(-|x|), in [1, 2]); on
// float16 / bfloat16 it runs in float32 between casts.
//
// Calls that remain: sigmoid, exp, log, sqrt, tanh, erf, pow, fma, abs, floor, ceil,
// round, trunc, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh,
// atanh, isnan, isinf, fmod (LLVM intrinsics or libm functions of float32 /
// float64; abs also on integers).
#pragma once

#include "engine/pass/pass.h"

namespace kiln::loop::transform {

// Stage loop, opt level 0. Every node built for a call carries its span.
Pass LowerIntrin();

}  // namespace kiln::loop::transform
