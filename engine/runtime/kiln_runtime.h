/* kiln_runtime.h: the C ABI of code Kiln compiles, and of libkiln_rt, the small runtime that
 * code links against (a thread pool for parallel loops, aligned allocation, a few helpers).
 *
 * A compiled model is an object file exporting, for its symbol prefix P (the header artifact
 * declares them):
 *
 *   int32_t P_run(void* const* inputs, void* const* outputs, void* workspace);
 *   int64_t P_workspace_size(void);
 *   int32_t P_num_inputs(void);
 *   int32_t P_num_outputs(void);
 *   const kiln_tensor_info* P_input_info(int32_t index);   (NULL when out of range)
 *   const kiln_tensor_info* P_output_info(int32_t index);
 *   int32_t P_num_kernels(void);                           (see kernel profiles below)
 *   const char* P_kernel_name(int32_t index);
 *
 * Every pointer passed to P_run (each input, each output, the workspace) must be aligned to
 * KILN_ALIGNMENT bytes (aligned_alloc(64, ...)) and hold the bytes its info names; P_run returns
 * KILN_OK or a KILN_ERROR_* code and never reads a misaligned or null buffer. The workspace holds
 * P_workspace_size() bytes, known when the model was compiled (a static memory plan); one
 * workspace per concurrent call.
 *
 * Models with a batch dimension known only at run time (an ONNX dim_param on axis 0 of inputs,
 * each sample computed on its own; Kiln compiles them per sample) keep this ABI with -1 for the
 * batch in kiln_tensor_info.shape (and -1 bytes for tensors that have it), and export instead of
 * P_run:
 *
 *   int32_t P_run_dynamic(void* const* inputs, const int64_t* const* input_shapes,
 *                         void** outputs, int64_t* const* output_shapes, void* workspace);
 *
 * input_shapes[i] holds input i's ndim dimensions (the batch, then the dimensions its info fixes,
 * which must match; a scalar's may be NULL); every input with the batch must give the same one
 * (0 is allowed: then batched inputs may be NULL, and nothing runs unless an output does not
 * have the batch). The run
 * sets outputs[i] to a buffer from kiln_rt_alloc, which the caller releases with kiln_rt_free,
 * and writes its dimensions to output_shapes[i] (ndim of them, room the caller provides). The
 * workspace is P_workspace_size() bytes whatever the batch: the samples run one after another.
 * On an error no output is allocated. Static models' ABI does not change.
 *
 * Models with other dimensions known only at run time (an ONNX dim_param such as a sequence
 * length, anywhere in the inputs' shapes; Kiln compiles their kernels over the dimension's
 * value) export the same P_run_dynamic and no P_run: each symbol takes its value from the
 * inputs that have it (all must agree), the outputs' shapes follow, and the values between
 * kernels whose size depends on a symbol are allocated for the run (kiln_rt_alloc) besides the
 * workspace, whose P_workspace_size() bytes hold the rest. kiln_tensor_info has -1 for those
 * dims (and -1 bytes). A symbol's value is at most KILN_MAX_SYMBOL_VALUE (a larger one is
 * KILN_ERROR_SHAPE_MISMATCH): loops over it stay bounded even when another dim makes its
 * tensors empty. */
#ifndef KILN_RUNTIME_H_
#define KILN_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ALIGNMENT 64
#define KILN_MAX_SYMBOL_VALUE 2147483647

enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_NULL_BUFFER = 1,       /* an input, output or the workspace is NULL */
  KILN_ERROR_MISALIGNED_BUFFER = 2, /* one is not KILN_ALIGNMENT-aligned */
  KILN_ERROR_OUT_OF_MEMORY = 3,     /* kiln_rt_alloc failed */
  KILN_ERROR_SHAPE_MISMATCH = 4,    /* an input that decides a shape (a Reshape's shape, TopK's k,
                                       NonZero's count, ...) holds a value other than the one the
                                       model's declared shapes were compiled for, or (in
                                       P_run_dynamic) an input's shape is not the model's */
};

/* Element types, in the order of Kiln's DataType. */
enum kiln_dtype {
  KILN_FLOAT16 = 0, KILN_BFLOAT16 = 1, KILN_FLOAT32 = 2, KILN_FLOAT64 = 3,
  KILN_INT8 = 4, KILN_INT16 = 5, KILN_INT32 = 6, KILN_INT64 = 7,
  KILN_UINT8 = 8, KILN_UINT16 = 9, KILN_UINT32 = 10, KILN_UINT64 = 11,
  KILN_BOOL = 12, /* one byte per element; nonzero reads as true */
  KILN_STRING = 13, /* one `const char*` per element (NUL-terminated; NULL reads as ""): see
                       string tensors below */
};

typedef struct kiln_tensor_info {
  const char* name;     /* an input's ONNX graph input name; outputs are out, or out0, out1, ...
                           in the graph's output order */
  int32_t dtype;        /* a kiln_dtype */
  int32_t ndim;
  const int64_t* shape; /* ndim dimensions (-1: known only at run time, dynamic models) */
  int64_t bytes;        /* the buffer's size (-1 for dynamic models) */
} kiln_tensor_info;

/* The body of a parallel loop: runs iterations [begin, end) with the captured `closure`. */
typedef void (*kiln_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, extent) in chunks the threads take from a shared counter (about 4 per
 * thread) and returns when all are done.
 * Called from inside a parallel body, or while another thread holds the pool, it runs the whole
 * range on the calling thread. */
void kiln_rt_parallel_for(int64_t extent, kiln_parallel_body body, void* closure);

/* Threads parallel loops use (the calling thread included). Default: the KILN_NUM_THREADS
 * environment variable when set to a positive number, otherwise the online CPU count. */
void kiln_rt_set_num_threads(int32_t threads);
int32_t kiln_rt_num_threads(void);

/* KILN_ALIGNMENT-aligned memory (NULL on failure), released by kiln_rt_free. */
void* kiln_rt_alloc(int64_t bytes);
void kiln_rt_free(void* pointer);

/* One sample's program and signature, which P_run_dynamic hands to kiln_rt_run_per_sample (code
 * Kiln generates calls it; see P_run_dynamic above). `inputs` and `outputs` describe one sample
 * (the batch axis 1); a tensor whose flag is 0 is the same for every sample. With T threads
 * (kiln_rt_set_num_threads) and a batch of at least T, up to 8 samples run at once, one per
 * thread, on workspaces the run allocates besides the caller's. */
typedef struct kiln_sample_plan {
  int32_t num_inputs;
  int32_t num_outputs;
  const kiln_tensor_info* inputs;
  const kiln_tensor_info* outputs;
  const uint8_t* input_batched;
  const uint8_t* output_batched;
  int32_t (*run_sample)(void* const* inputs, void* const* outputs, void* workspace);
  int64_t workspace_bytes; /* P_workspace_size(): each thread running samples gets one */
  int32_t profiled;        /* compiled with kernel profiling: samples run one at a time */
} kiln_sample_plan;
int32_t kiln_rt_run_per_sample(const kiln_sample_plan* plan, void* const* inputs,
                               const int64_t* const* input_shapes, void** outputs,
                               int64_t* const* output_shapes, void* workspace);

/* A model compiled over symbolic dims (see P_run_dynamic above), which P_run_dynamic hands to
 * kiln_rt_run_symbolic. Per input and output, `*_dims` holds its ndim dims (the info tables'
 * order, concatenated): a static extent, or -1 - k for symbol k. A value between kernels of
 * run-time size holds dynamic_coefficients[j] elements of kiln_dtype dynamic_dtypes[j] times
 * the value of each of its dynamic_symbol_counts[j] symbols (listed in dynamic_symbols, all the
 * values' lists concatenated). Equality j holds when its two products (2j and 2j + 1 in the
 * equality_* arrays, encoded alike) agree: what the model's types assumed of the symbols; a run
 * that breaks one is KILN_ERROR_SHAPE_MISMATCH. `run` takes the outputs array followed by the
 * dynamic buffers and then a pointer to the symbols' values (int64_t[num_symbols]). */
typedef struct kiln_symbolic_plan {
  int32_t num_inputs;
  int32_t num_outputs;
  int32_t num_symbols;
  int32_t num_dynamic;
  const kiln_tensor_info* inputs;
  const kiln_tensor_info* outputs;
  const int64_t* input_dims;
  const int64_t* output_dims;
  const int32_t* dynamic_dtypes;
  const int64_t* dynamic_coefficients;
  const int32_t* dynamic_symbol_counts;
  const int32_t* dynamic_symbols;
  int32_t num_equalities;
  const int64_t* equality_coefficients;
  const int32_t* equality_symbol_counts;
  const int32_t* equality_symbols;
  int32_t (*run)(void* const* inputs, void* const* outputs, void* workspace);
} kiln_symbolic_plan;
int32_t kiln_rt_run_symbolic(const kiln_symbolic_plan* plan, void* const* inputs,
                             const int64_t* const* input_shapes, void** outputs,
                             int64_t* const* output_shapes, void* workspace);

/* Kernel profiles. Every model exports `int32_t P_num_kernels(void)` and
 * `const char* P_kernel_name(int32_t)` (NULL when out of range); one compiled with kernel
 * profiling (CodegenOptions::profile_kernels, kiln-run --benchmark) also brackets each kernel
 * call with enter/exit, and the calls and nanoseconds of kernel i accumulate in this library until
 * reset. Kernels at or above KILN_PROFILE_MAX_KERNELS are not timed. One profiled model runs at
 * a time per process. */
#define KILN_PROFILE_MAX_KERNELS 4096
void kiln_rt_profile_enter(int32_t kernel);
void kiln_rt_profile_exit(int32_t kernel);
void kiln_rt_profile_read(int32_t kernel, int64_t* calls, int64_t* nanoseconds);
void kiln_rt_profile_reset(void);

/* base ** exponent with integer wrap-around; a negative exponent gives 0 except for bases 1 and
 * -1 (the loop IR's integer pow). */
int64_t kiln_rt_ipow(int64_t base, int64_t exponent);

/* String tensors (KILN_STRING). An input holds one `const char*` per element, NUL-terminated,
 * which the run only reads. A run fills each string output with pointers to strings it
 * allocated with malloc: the caller owns them and releases them with kiln_rt_strings_free (or
 * free() each); after an error the output's words are undefined and not to be freed. Strings
 * the kernels create in between live in an arena of the calling thread for one run:
 * P_run calls begin, keep (once per string output) and end itself. */
void* kiln_rt_strings_begin(void);             /* returns the enclosing run's arena, for end */
int32_t kiln_rt_strings_keep(void* words, int64_t count); /* words -> malloc'ed copies */
int32_t kiln_rt_strings_end(void* enclosing); /* KILN_ERROR_OUT_OF_MEMORY if one failed */
void kiln_rt_strings_free(void* words, int64_t count);
/* What kernels call (ONNX Cast to and from STRING, StringNormalizer): numbers print as the
 * shortest decimal that reads back as the same value, NumPy's layout ("0.1", "1.0", "1e-05"),
 * "NaN", "INF", "-INF"; text is read as strtod reads it (NaN, or 0 for integers, when it holds
 * no number); case changes are ASCII (other bytes unchanged). */
const char* kiln_rt_string_from_f32(float value);
const char* kiln_rt_string_from_f64(double value);
const char* kiln_rt_string_from_i64(int64_t value);
const char* kiln_rt_string_from_u64(uint64_t value);
float kiln_rt_string_to_f32(const char* text);
double kiln_rt_string_to_f64(const char* text);
int64_t kiln_rt_string_to_i64(const char* text);
uint64_t kiln_rt_string_to_u64(const char* text);
const char* kiln_rt_string_upper(const char* text);
const char* kiln_rt_string_lower(const char* text);
int32_t kiln_rt_string_equal(const char* a, const char* b);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H_ */
