/* kiln_rt_run_symbolic: the run of a model compiled over symbolic dims (kiln_runtime.h). The
 * symbols take their values from the inputs' shapes, every byte the run allocates is counted
 * with overflow checks first, and on any error nothing stays allocated. */
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/kiln_runtime.h"

static int64_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case KILN_FLOAT16: case KILN_BFLOAT16: case KILN_INT16: case KILN_UINT16: return 2;
    case KILN_FLOAT32: case KILN_INT32: case KILN_UINT32: return 4;
    case KILN_FLOAT64: case KILN_INT64: case KILN_UINT64: return 8;
    case KILN_INT8: case KILN_UINT8: case KILN_BOOL: return 1;
    case KILN_STRING: return (int64_t)sizeof(const char*);
    default: return 0;
  }
}

/* bytes * factor, or -1 past INT64_MAX. */
static int64_t times(int64_t bytes, int64_t factor) {
  int64_t product;
  if (bytes < 0 || factor < 0 || __builtin_mul_overflow(bytes, factor, &product)) return -1;
  return product;
}

/* The bytes of a tensor of `ndim` dims encoded as in kiln_symbolic_plan; its shape to `shape`
 * when not NULL. */
static int64_t tensor_bytes(const kiln_tensor_info* info, const int64_t* dims,
                            const int64_t* symbols, int64_t* shape) {
  int64_t bytes = dtype_bytes(info->dtype);
  for (int32_t d = 0; d < info->ndim; ++d) {
    int64_t extent = dims[d] >= 0 ? dims[d] : symbols[-1 - dims[d]];
    if (shape != NULL) shape[d] = extent;
    bytes = times(bytes, extent);
  }
  return bytes;
}

/* A zero-size input may be passed as NULL; the program still wants an aligned pointer. */
static _Alignas(KILN_ALIGNMENT) char empty_input[KILN_ALIGNMENT];

int32_t kiln_rt_run_symbolic(const kiln_symbolic_plan* plan, void* const* inputs,
                             const int64_t* const* input_shapes, void** outputs,
                             int64_t* const* output_shapes, void* workspace) {
  if (inputs == NULL || input_shapes == NULL || outputs == NULL || output_shapes == NULL) {
    return KILN_ERROR_NULL_BUFFER;
  }
  const int32_t num_inputs = plan->num_inputs, num_outputs = plan->num_outputs;
  for (int32_t o = 0; o < num_outputs; ++o) {
    if (output_shapes[o] == NULL && plan->outputs[o].ndim > 0) return KILN_ERROR_NULL_BUFFER;
    outputs[o] = NULL;
  }
  /* Aligned like every buffer the program takes. */
  int64_t* symbols = kiln_rt_alloc(((int64_t)plan->num_symbols + 1) * (int64_t)sizeof(int64_t));
  void** input_pointers = calloc((size_t)num_inputs + 1, sizeof(void*));
  /* The program's outputs array: the outputs, the dynamic buffers, the symbols' values. */
  void** run_outputs = calloc((size_t)num_outputs + (size_t)plan->num_dynamic + 1, sizeof(void*));
  int32_t status = KILN_OK;
  void* arena = NULL; /* the values between kernels */
  if (symbols == NULL || input_pointers == NULL || run_outputs == NULL) {
    status = KILN_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  for (int32_t k = 0; k < plan->num_symbols; ++k) symbols[k] = -1;
  /* Each symbol's value from the inputs that have it; static dims must be the model's. */
  const int64_t* dims = plan->input_dims;
  for (int32_t i = 0; i < num_inputs; ++i) {
    const kiln_tensor_info* info = &plan->inputs[i];
    if (input_shapes[i] == NULL && info->ndim > 0) {
      status = KILN_ERROR_NULL_BUFFER;
      goto done;
    }
    for (int32_t d = 0; d < info->ndim; ++d) {
      int64_t extent = input_shapes[i][d];
      int64_t* symbol = dims[d] >= 0 ? NULL : &symbols[-1 - dims[d]];
      if (extent < 0 || (symbol != NULL && extent > KILN_MAX_SYMBOL_VALUE) ||
          (symbol == NULL && extent != dims[d]) ||
          (symbol != NULL && *symbol >= 0 && *symbol != extent)) {
        status = KILN_ERROR_SHAPE_MISMATCH;
        goto done;
      }
      if (symbol != NULL) *symbol = extent;
    }
    int64_t bytes = tensor_bytes(info, dims, symbols, NULL);
    if (bytes < 0) {
      status = KILN_ERROR_SHAPE_MISMATCH; /* no caller holds that many bytes */
      goto done;
    }
    input_pointers[i] = inputs[i] == NULL && bytes == 0 ? (void*)empty_input : inputs[i];
    dims += info->ndim;
  }
  /* What the model's types assumed of the symbols. */
  const int32_t* factors = plan->equality_symbols;
  for (int32_t j = 0; j < 2 * plan->num_equalities; j += 2) {
    int64_t sides[2];
    for (int32_t s = 0; s < 2; ++s) {
      sides[s] = plan->equality_coefficients[j + s];
      for (int32_t f = 0; f < plan->equality_symbol_counts[j + s]; ++f) {
        sides[s] = times(sides[s], symbols[factors[f]]);
      }
      factors += plan->equality_symbol_counts[j + s];
    }
    if (sides[0] < 0 || sides[0] != sides[1]) {
      status = KILN_ERROR_SHAPE_MISMATCH;
      goto done;
    }
  }
  /* Outputs and the values between kernels: sized, then allocated. */
  dims = plan->output_dims;
  for (int32_t o = 0; o < num_outputs; ++o) {
    const kiln_tensor_info* info = &plan->outputs[o];
    int64_t bytes = tensor_bytes(info, dims, symbols, output_shapes[o]);
    run_outputs[o] = bytes < 0 ? NULL : kiln_rt_alloc(bytes);
    if (run_outputs[o] == NULL) {
      status = KILN_ERROR_OUT_OF_MEMORY;
      goto done;
    }
    dims += info->ndim;
  }
  /* The values between kernels share one allocation (one mapping a run, not one each), each
   * at a KILN_ALIGNMENT-aligned offset. */
  factors = plan->dynamic_symbols;
  int64_t arena_bytes = 0;
  for (int32_t j = 0; j < plan->num_dynamic; ++j) {
    int64_t bytes = times(dtype_bytes(plan->dynamic_dtypes[j]), plan->dynamic_coefficients[j]);
    for (int32_t f = 0; f < plan->dynamic_symbol_counts[j]; ++f) bytes = times(bytes, symbols[factors[f]]);
    factors += plan->dynamic_symbol_counts[j];
    int64_t rounded = times((bytes + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT, KILN_ALIGNMENT);
    if (bytes < 0 || rounded < 0 || __builtin_add_overflow(arena_bytes, rounded, &arena_bytes)) {
      status = KILN_ERROR_OUT_OF_MEMORY;
      goto done;
    }
    run_outputs[num_outputs + j] = (void*)(intptr_t)(arena_bytes - rounded); /* an offset, for now */
  }
  arena = kiln_rt_alloc(arena_bytes);
  if (arena == NULL) {
    status = KILN_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  for (int32_t j = 0; j < plan->num_dynamic; ++j) {
    run_outputs[num_outputs + j] = (char*)arena + (intptr_t)run_outputs[num_outputs + j];
  }
  run_outputs[num_outputs + plan->num_dynamic] = symbols;
  status = plan->run(input_pointers, run_outputs, workspace);

done:
  kiln_rt_free(arena);
  if (run_outputs != NULL) {
    for (int32_t o = 0; o < num_outputs; ++o) {
      if (status == KILN_OK) {
        outputs[o] = run_outputs[o];
      } else {
        kiln_rt_free(run_outputs[o]);
      }
    }
  }
  free(run_outputs);
  free(input_pointers);
  kiln_rt_free(symbols);
  return status;
}
