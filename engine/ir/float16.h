// IEEE binary16 (float16) and bfloat16 conversions, bit-exact and rounding
// to nearest even, for constants of those dtypes (Kiln stores them as bits).
#pragma once

#include <cstdint>

namespace kiln {

uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);

}  // namespace kiln
