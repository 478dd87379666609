/* Paired A/B of compiled models: loads two or more shared objects built by
 * `kiln-opt MODEL -O3 --emit=so -o X.so` (same model, different compiler builds or options) into
 * one process and runs them in turn, round after round, each round's order rotated, so the
 * VM's speed, which drifts by up to 1.5x over minutes on these machines, falls on all of them
 * alike. Prints each one's fastest round median and the median over rounds of its round
 * median / the first one's: the figure to compare, never an absolute time. A benchmark, never a
 * test.
 *
 * usage: KILN_NUM_THREADS=N paired_so_bench ROUNDS A.so B.so [C.so ...]
 * Each .so carries its own runtime and thread pool, whose idle workers spin for a while after
 * their turn: each turn ends with a pause longer than that spin, so with more than one thread
 * the next build's workers have the cores (set KILN_NUM_THREADS: without it each pool starts a
 * thread per CPU). Inputs are a
 * fixed pattern (float32; other types zeros). A model with `_run_dynamic` instead of `_run`
 * (compiled per sample or over symbolic dims) runs with every run-time dim of its inputs
 * KILN_BENCH_DIM (default 1), each run allocating and freeing its outputs as a caller's would.
 * With an even number of rounds the upper median is printed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/runtime/kiln_runtime.h"

enum { kMaxModels = 8, kMaxTensors = 64, kMaxRounds = 200, kRunsPerRound = 9 };

/* The pause after each turn: longer than a thread pool's idle workers spin (thread_pool.c's
 * kSpinNanoseconds), so with more than one thread the next build's workers have the cores. */
enum { kSettleMicroseconds = 20000 };

typedef int32_t (*run_fn)(void* const*, void* const*, void*);
typedef int32_t (*run_dynamic_fn)(void* const*, const int64_t* const*, void**, int64_t* const*,
                                  void*);

typedef struct model {
  run_fn run;
  run_dynamic_fn run_dynamic;
  int32_t num_outputs;
  void* inputs[kMaxTensors];
  void* outputs[kMaxTensors];
  void* workspace;
  /* _run_dynamic only: the inputs' shapes and room for the outputs'. */
  const int64_t* input_shapes[kMaxTensors];
  int64_t* output_shapes[kMaxTensors];
} model;

/* One run of `m`; a dynamic run's outputs are freed after it. */
static int32_t run_model(model* m) {
  if (m->run != NULL) return m->run(m->inputs, m->outputs, m->workspace);
  int32_t status =
      m->run_dynamic(m->inputs, m->input_shapes, m->outputs, m->output_shapes, m->workspace);
  for (int32_t i = 0; status == 0 && i < m->num_outputs; ++i) free(m->outputs[i]);
  return status;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* A 64-byte aligned buffer of at least `bytes`; exits when there is no memory for it. */
static void* aligned_buffer(int64_t bytes) {
  void* buffer = aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64 + 64));
  if (buffer == NULL) {
    fprintf(stderr, "out of memory for a buffer of %lld bytes\n", (long long)bytes);
    exit(1);
  }
  return buffer;
}

/* Loads `path` and allocates its buffers; 0 on success. */
static int load(const char* path, model* m) {
  /* dlopen searches the library path for a name without a slash: name the file itself. */
  char relative[4096];
  if (strchr(path, '/') == NULL) {
    snprintf(relative, sizeof relative, "./%s", path);
    path = relative;
  }
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  m->run = (run_fn)dlsym(handle, "kiln_model_run");
  m->run_dynamic = m->run ? NULL : (run_dynamic_fn)dlsym(handle, "kiln_model_run_dynamic");
  int64_t (*workspace_size)(void) = (int64_t (*)(void))dlsym(handle, "kiln_model_workspace_size");
  int32_t (*num_inputs)(void) = (int32_t (*)(void))dlsym(handle, "kiln_model_num_inputs");
  int32_t (*num_outputs)(void) = (int32_t (*)(void))dlsym(handle, "kiln_model_num_outputs");
  const kiln_tensor_info* (*input_info)(int32_t) =
      (const kiln_tensor_info* (*)(int32_t))dlsym(handle, "kiln_model_input_info");
  const kiln_tensor_info* (*output_info)(int32_t) =
      (const kiln_tensor_info* (*)(int32_t))dlsym(handle, "kiln_model_output_info");
  if ((!m->run && !m->run_dynamic) || !workspace_size || !num_inputs || !num_outputs ||
      !input_info || !output_info || num_inputs() > kMaxTensors || num_outputs() > kMaxTensors) {
    fprintf(stderr, "%s: not a Kiln model (no kiln_model_run and its queries: %s)\n", path,
            dlerror());
    return 1;
  }
  const char* dim_text = getenv("KILN_BENCH_DIM");
  const int64_t dim = dim_text != NULL ? atoll(dim_text) : 1;
  m->num_outputs = num_outputs();
  m->workspace = aligned_buffer(workspace_size());
  for (int32_t i = 0; i < num_inputs(); ++i) {
    const kiln_tensor_info* info = input_info(i);
    int64_t* shape = calloc((size_t)info->ndim + 1, sizeof(int64_t));
    int64_t bytes = info->dtype == KILN_FLOAT16 || info->dtype == KILN_BFLOAT16 ? 2 : 4;
    if (info->dtype == KILN_FLOAT64 || info->dtype == KILN_INT64 || info->dtype == KILN_UINT64) bytes = 8;
    if (info->dtype == KILN_INT8 || info->dtype == KILN_UINT8 || info->dtype == KILN_BOOL) bytes = 1;
    for (int32_t d = 0; d < info->ndim; ++d) {
      shape[d] = info->shape[d] < 0 ? dim : info->shape[d];
      bytes *= shape[d];
    }
    if (info->bytes >= 0) bytes = info->bytes;
    m->input_shapes[i] = shape;
    unsigned char* data = aligned_buffer(bytes);
    /* float32 inputs small values (0.000 .. 0.999), others zeros (a valid index, a false). */
    memset(data, 0, (size_t)bytes);
    for (int64_t j = 0; input_info(i)->dtype == KILN_FLOAT32 && j + 4 <= bytes; j += 4) {
      *(float*)(data + j) = (float)((j / 4 * 7919) % 1000) / 1000.0f;
    }
    m->inputs[i] = data;
  }
  for (int32_t i = 0; i < num_outputs(); ++i) {
    if (m->run != NULL) m->outputs[i] = aligned_buffer(output_info(i)->bytes);
    m->output_shapes[i] = calloc((size_t)output_info(i)->ndim + 1, sizeof(int64_t));
  }
  return 0;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 0, count = argc - 2;
  if (argc < 4 || rounds < 1 || rounds > kMaxRounds || count > kMaxModels) {
    fprintf(stderr, "usage: paired_so_bench ROUNDS(1-%d) A.so B.so [up to %d]\n", kMaxRounds,
            kMaxModels);
    return 2;
  }
  static model models[kMaxModels];
  static double medians[kMaxModels][kMaxRounds];
  for (int k = 0; k < count; ++k) {
    if (load(argv[k + 2], &models[k]) != 0) return 1;
  }
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < count; ++turn) {
      int k = (turn + r) % count;
      model* m = &models[k];
      double times[kRunsPerRound];
      int32_t status = run_model(m); /* warm-up, and a check */
      if (status != 0) {
        fprintf(stderr, "%s: the run failed with status %d (kiln_runtime.h's KILN_ERROR_*)\n",
                argv[k + 2], status);
        return 1;
      }
      for (int j = 0; j < kRunsPerRound; ++j) {
        double start = now_ms();
        run_model(m);
        times[j] = now_ms() - start;
      }
      qsort(times, kRunsPerRound, sizeof(double), compare_doubles);
      medians[k][r] = times[kRunsPerRound / 2];
      usleep(kSettleMicroseconds);
    }
  }
  for (int k = 0; k < count; ++k) {
    double fastest = medians[k][0], ratios[kMaxRounds];
    for (int r = 0; r < rounds; ++r) {
      if (medians[k][r] < fastest) fastest = medians[k][r];
      ratios[r] = medians[k][r] / medians[0][r];
    }
    qsort(ratios, (size_t)rounds, sizeof(double), compare_doubles);
    printf("%-32s fastest round %.3f ms  x%.3f the first (median of %d rounds)\n", argv[k + 2],
           fastest, ratios[rounds / 2], rounds);
  }
  return 0;
}
