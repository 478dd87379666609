/* libkiln_rt's helpers other than the thread pool: aligned allocation and integer pow. */
#include <stdlib.h>

#include "engine/runtime/kiln_runtime.h"

void* kiln_rt_alloc(int64_t bytes) {
  if (bytes < 0) return NULL;
  /* aligned_alloc wants a multiple of the alignment. */
  uint64_t rounded = ((uint64_t)bytes + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT * KILN_ALIGNMENT;
  return aligned_alloc(KILN_ALIGNMENT, rounded == 0 ? KILN_ALIGNMENT : (size_t)rounded);
}

void kiln_rt_free(void* pointer) { free(pointer); }

int64_t kiln_rt_ipow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, factor = (uint64_t)base, e = (uint64_t)exponent;
  while (e != 0) {
    if (e & 1) result *= factor;
    factor *= factor;
    e >>= 1;
  }
  return (int64_t)result;
}
