/* libkiln_rt's kernel profile: models compiled with kernel profiling bracket every kernel call
 * in <prefix>_run with kiln_rt_profile_enter/exit; the calls and time of each kernel accumulate
 * here until kiln_rt_profile_reset (kiln-run --benchmark reads them). The entry runs kernels one
 * after another on the calling thread, so one profiled model runs at a time per process. */
#include <time.h>

#include "engine/runtime/kiln_runtime.h"

static int64_t g_calls[KILN_PROFILE_MAX_KERNELS];
static int64_t g_nanoseconds[KILN_PROFILE_MAX_KERNELS];
static int64_t g_started[KILN_PROFILE_MAX_KERNELS];

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int in_range(int32_t kernel) { return kernel >= 0 && kernel < KILN_PROFILE_MAX_KERNELS; }

void kiln_rt_profile_enter(int32_t kernel) {
  if (in_range(kernel)) g_started[kernel] = now_ns();
}

void kiln_rt_profile_exit(int32_t kernel) {
  if (!in_range(kernel)) return;
  g_nanoseconds[kernel] += now_ns() - g_started[kernel];
  g_calls[kernel] += 1;
}

void kiln_rt_profile_read(int32_t kernel, int64_t* calls, int64_t* nanoseconds) {
  *calls = in_range(kernel) ? g_calls[kernel] : 0;
  *nanoseconds = in_range(kernel) ? g_nanoseconds[kernel] : 0;
}

void kiln_rt_profile_reset(void) {
  for (int i = 0; i < KILN_PROFILE_MAX_KERNELS; ++i) g_calls[i] = g_nanoseconds[i] = 0;
}
