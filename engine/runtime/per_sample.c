/* kiln_rt_run_per_sample: the body of `<prefix>_run_dynamic` for models compiled per sample (a
 * symbolic batch dimension, engine/lower/sample_batch.h). Checks the shapes the caller passes
 * against one sample's, allocates the outputs for the batch, and runs the one-sample program on
 * each sample's slice (contiguous, since the batch is axis 0). A slice that is not
 * KILN_ALIGNMENT-aligned (a sample of 10 floats) goes through an aligned copy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/kiln_runtime.h"

static int misaligned(const void* pointer) {
  return ((uintptr_t)pointer % KILN_ALIGNMENT) != 0;
}

/* The batch the inputs' shapes give (-1: a shape is not the model's). */
static int64_t batch_of(const kiln_sample_plan* plan, const int64_t* const* input_shapes) {
  int64_t batch = -1;
  for (int32_t i = 0; i < plan->num_inputs; ++i) {
    const kiln_tensor_info* info = &plan->inputs[i];
    const int64_t* shape = input_shapes[i];
    for (int32_t d = 0; d < info->ndim; ++d) {
      if (d == 0 && plan->input_batched[i]) {
        if (shape[0] < 0 || (batch >= 0 && shape[0] != batch)) return -1;
        batch = shape[0];
      } else if (shape[d] != info->shape[d]) {
        return -1;
      }
    }
  }
  return batch;
}

int32_t kiln_rt_run_per_sample(const kiln_sample_plan* plan, void* const* inputs,
                               const int64_t* const* input_shapes, void** outputs,
                               int64_t* const* output_shapes, void* workspace) {
  const int32_t num_inputs = plan->num_inputs, num_outputs = plan->num_outputs;
  const int32_t count = num_inputs + num_outputs;
  if (inputs == NULL || input_shapes == NULL || outputs == NULL || output_shapes == NULL ||
      workspace == NULL) {
    return KILN_ERROR_NULL_BUFFER;
  }
  if (misaligned(workspace)) return KILN_ERROR_MISALIGNED_BUFFER;
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] == NULL || input_shapes[i] == NULL) return KILN_ERROR_NULL_BUFFER;
    if (misaligned(inputs[i])) return KILN_ERROR_MISALIGNED_BUFFER;
  }
  for (int32_t o = 0; o < num_outputs; ++o) {
    if (output_shapes[o] == NULL) return KILN_ERROR_NULL_BUFFER;
    outputs[o] = NULL;
  }
  const int64_t batch = batch_of(plan, input_shapes);
  if (batch < 0) return KILN_ERROR_SHAPE_MISMATCH;

  /* Per tensor (inputs, then outputs): one sample's bytes, whether it is sliced by sample, and
   * the aligned copy its slices go through when they are not aligned (or, for an empty batch,
   * the zeros one sample is run on, so outputs without the batch are still computed). */
  int32_t status = KILN_OK;
  void** stage = calloc((size_t)count, sizeof(void*));
  void** slices = calloc((size_t)count, sizeof(void*));
  if (stage == NULL || slices == NULL) {
    status = KILN_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  for (int32_t t = 0; t < count; ++t) {
    const int is_input = t < num_inputs;
    const kiln_tensor_info* info = is_input ? &plan->inputs[t] : &plan->outputs[t - num_inputs];
    const int batched = is_input ? plan->input_batched[t] : plan->output_batched[t - num_inputs];
    const int64_t bytes = info->bytes;
    if (!is_input) {
      int64_t total = bytes;
      if (batched && batch > 0 && __builtin_mul_overflow(bytes, batch, &total)) {
        status = KILN_ERROR_OUT_OF_MEMORY;
        goto done;
      }
      outputs[t - num_inputs] = kiln_rt_alloc(total);
      if (outputs[t - num_inputs] == NULL) {
        status = KILN_ERROR_OUT_OF_MEMORY;
        goto done;
      }
      int64_t* shape = output_shapes[t - num_inputs];
      for (int32_t d = 0; d < info->ndim; ++d) shape[d] = info->shape[d];
      if (batched) shape[0] = batch;
    }
    if (batched && (bytes % KILN_ALIGNMENT != 0 || batch == 0)) {
      stage[t] = kiln_rt_alloc(bytes);
      if (stage[t] == NULL) {
        status = KILN_ERROR_OUT_OF_MEMORY;
        goto done;
      }
      memset(stage[t], 0, (size_t)bytes);
    }
  }

  for (int64_t n = 0; n < (batch == 0 ? 1 : batch); ++n) {
    for (int32_t t = 0; t < count; ++t) {
      const int is_input = t < num_inputs;
      const kiln_tensor_info* info = is_input ? &plan->inputs[t] : &plan->outputs[t - num_inputs];
      const int batched = is_input ? plan->input_batched[t] : plan->output_batched[t - num_inputs];
      char* base = (char*)(is_input ? inputs[t] : outputs[t - num_inputs]);
      if (!batched) {
        slices[t] = base;
      } else if (stage[t] != NULL) {
        if (is_input && batch > 0) memcpy(stage[t], base + n * info->bytes, (size_t)info->bytes);
        slices[t] = stage[t];
      } else {
        slices[t] = base + n * info->bytes;
      }
    }
    status = plan->run_sample(slices, slices + num_inputs, workspace);
    if (status != KILN_OK) goto done;
    for (int32_t o = 0; o < num_outputs; ++o) {
      const int32_t t = num_inputs + o;
      if (stage[t] != NULL && batch > 0) {
        memcpy((char*)outputs[o] + n * plan->outputs[o].bytes, stage[t],
               (size_t)plan->outputs[o].bytes);
      }
    }
  }

done:
  if (stage != NULL) {
    for (int32_t t = 0; t < count; ++t) kiln_rt_free(stage[t]);
  }
  free(stage);
  free(slices);
  if (status != KILN_OK) {
    for (int32_t o = 0; o < num_outputs; ++o) {
      kiln_rt_free(outputs[o]);
      outputs[o] = NULL;
    }
  }
  return status;
}
