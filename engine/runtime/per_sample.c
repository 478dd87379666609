/* kiln_rt_run_per_sample: the body of `<prefix>_run_dynamic` for models compiled per sample (a
 * symbolic batch dimension, engine/lower/sample_batch.h). Checks the shapes the caller passes
 * against one sample's, allocates the outputs for the batch, and runs the one-sample program on
 * each sample's slice (contiguous, since the batch is axis 0). A slice that is not
 * KILN_ALIGNMENT-aligned (a sample of 10 floats) goes through an aligned copy.
 *
 * Threads: with T > 1 threads and a batch of at least T, the samples run T at a time, one per
 * thread, each thread on its own workspace (the caller's and T - 1 more from kiln_rt_alloc),
 * their kernels' parallel loops then serial; what is left of the batch (batch % T) runs one
 * sample at a time with parallel kernels. A whole sample per thread shares no data between
 * threads and synchronises once per sample instead of once per kernel. Profiled models (whose
 * per-kernel counters are not thread-safe) always run one sample at a time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/kiln_runtime.h"

/* Workspaces a call allocates for its threads: at most this many samples run at once. */
#define KILN_MAX_CONCURRENT_SAMPLES 8

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

/* One call's state. Per slot (a thread's share): a workspace and, per tensor (inputs then
 * outputs), the aligned copy its slices go through (NULL: slices are used in place) and the
 * pointer the sample program gets. */
typedef struct {
  const kiln_sample_plan* plan;
  void* const* inputs;
  void** outputs;
  int64_t batch;
  int32_t count; /* tensors */
  int32_t slots;
  void** workspaces;
  void** stage;  /* slots * count */
  void** slices; /* slots * count */
  int32_t status; /* the first error, set atomically */
} sample_run;

static const kiln_tensor_info* tensor_info(const sample_run* run, int32_t t) {
  const int32_t num_inputs = run->plan->num_inputs;
  return t < num_inputs ? &run->plan->inputs[t] : &run->plan->outputs[t - num_inputs];
}

static int tensor_batched(const sample_run* run, int32_t t) {
  const int32_t num_inputs = run->plan->num_inputs;
  return t < num_inputs ? run->plan->input_batched[t] : run->plan->output_batched[t - num_inputs];
}

/* Runs sample n on slot `slot` (an empty batch runs one sample of zeros, for the outputs
 * every sample shares). */
static int32_t run_sample(sample_run* run, int32_t slot, int64_t n) {
  const int32_t num_inputs = run->plan->num_inputs;
  void** stage = run->stage + (int64_t)slot * run->count;
  void** slices = run->slices + (int64_t)slot * run->count;
  for (int32_t t = 0; t < run->count; ++t) {
    const kiln_tensor_info* info = tensor_info(run, t);
    char* base = (char*)(t < num_inputs ? run->inputs[t] : run->outputs[t - num_inputs]);
    if (!tensor_batched(run, t)) {
      slices[t] = stage[t] != NULL ? stage[t] : base; /* an output other slots write and drop */
    } else if (stage[t] != NULL) {
      if (t < num_inputs && run->batch > 0) {
        memcpy(stage[t], base + n * info->bytes, (size_t)info->bytes);
      }
      slices[t] = stage[t];
    } else {
      slices[t] = base + n * info->bytes;
    }
  }
  int32_t status = run->plan->run_sample(slices, slices + num_inputs, run->workspaces[slot]);
  if (status != KILN_OK) return status;
  for (int32_t t = num_inputs; t < run->count; ++t) {
    if (stage[t] != NULL && tensor_batched(run, t) && run->batch > 0) {
      const int64_t bytes = tensor_info(run, t)->bytes;
      memcpy((char*)run->outputs[t - num_inputs] + n * bytes, stage[t], (size_t)bytes);
    }
  }
  return KILN_OK;
}

/* Slot s of the concurrent part runs samples s, s + slots, s + 2 slots, ... below `end`. */
static void run_slots(int64_t begin, int64_t end, void* closure) {
  sample_run* run = (sample_run*)closure;
  const int64_t concurrent = run->batch - run->batch % run->slots;
  for (int64_t slot = begin; slot < end; ++slot) {
    for (int64_t n = slot; n < concurrent; n += run->slots) {
      if (__atomic_load_n(&run->status, __ATOMIC_RELAXED) != KILN_OK) return;
      int32_t status = run_sample(run, (int32_t)slot, n);
      if (status != KILN_OK) {
        int32_t ok = KILN_OK;
        __atomic_compare_exchange_n(&run->status, &ok, status, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        return;
      }
    }
  }
}

int32_t kiln_rt_run_per_sample(const kiln_sample_plan* plan, void* const* inputs,
                               const int64_t* const* input_shapes, void** outputs,
                               int64_t* const* output_shapes, void* workspace) {
  const int32_t num_inputs = plan->num_inputs, num_outputs = plan->num_outputs;
  /* The workspace is checked by the sample program, as P_run checks it. A scalar's shape
   * pointer may be NULL; so may a batched input's data when the batch is empty. */
  if (inputs == NULL || input_shapes == NULL || outputs == NULL || output_shapes == NULL) {
    return KILN_ERROR_NULL_BUFFER;
  }
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (input_shapes[i] == NULL && plan->inputs[i].ndim > 0) return KILN_ERROR_NULL_BUFFER;
  }
  for (int32_t o = 0; o < num_outputs; ++o) {
    if (output_shapes[o] == NULL && plan->outputs[o].ndim > 0) return KILN_ERROR_NULL_BUFFER;
    outputs[o] = NULL;
  }
  const int64_t batch = batch_of(plan, input_shapes);
  if (batch < 0) return KILN_ERROR_SHAPE_MISMATCH;
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (plan->input_batched[i] && batch == 0) continue;
    if (inputs[i] == NULL) return KILN_ERROR_NULL_BUFFER;
    if (misaligned(inputs[i])) return KILN_ERROR_MISALIGNED_BUFFER;
  }
  /* An empty batch runs one sample of zeros only for outputs every sample shares (they do not
   * depend on the batched inputs). */
  int shared_outputs = 0;
  for (int32_t o = 0; o < num_outputs; ++o) shared_outputs |= !plan->output_batched[o];
  const int64_t runs = batch == 0 ? shared_outputs : batch;

  sample_run run = {plan, inputs, outputs, batch, num_inputs + num_outputs, 1, NULL, NULL, NULL,
                    KILN_OK};
  const int32_t threads = plan->profiled ? 1 : kiln_rt_num_threads();
  if (threads > 1 && batch >= threads) {
    run.slots = threads < KILN_MAX_CONCURRENT_SAMPLES ? threads : KILN_MAX_CONCURRENT_SAMPLES;
  }
  run.workspaces = calloc((size_t)run.slots, sizeof(void*));
  run.stage = calloc((size_t)run.slots * (size_t)run.count, sizeof(void*));
  run.slices = calloc((size_t)run.slots * (size_t)run.count, sizeof(void*));
  if (run.workspaces == NULL || run.stage == NULL || run.slices == NULL) {
    run.status = KILN_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  run.workspaces[0] = workspace;
  for (int32_t s = 1; s < run.slots; ++s) {
    run.workspaces[s] = kiln_rt_alloc(plan->workspace_bytes);
    if (run.workspaces[s] == NULL) {
      run.status = KILN_ERROR_OUT_OF_MEMORY;
      goto done;
    }
  }
  for (int32_t t = 0; t < run.count; ++t) {
    const kiln_tensor_info* info = tensor_info(&run, t);
    const int batched = tensor_batched(&run, t);
    const int64_t bytes = info->bytes;
    if (t >= num_inputs) {
      int64_t total = bytes;
      if (batched && batch > 0 && __builtin_mul_overflow(bytes, batch, &total)) {
        run.status = KILN_ERROR_OUT_OF_MEMORY;
        goto done;
      }
      outputs[t - num_inputs] = kiln_rt_alloc(total);
      if (outputs[t - num_inputs] == NULL) {
        run.status = KILN_ERROR_OUT_OF_MEMORY;
        goto done;
      }
      int64_t* shape = output_shapes[t - num_inputs];
      for (int32_t d = 0; d < info->ndim; ++d) shape[d] = info->shape[d];
      if (batched && info->ndim == 0) {
        run.status = KILN_ERROR_SHAPE_MISMATCH; /* never generated: a batched tensor has axis 0 */
        goto done;
      }
      if (batched) shape[0] = batch;
    }
    /* Batched slices that are not aligned (or an empty batch) go through copies; an output
     * without the batch is written by slot 0 only, the other slots' copies of it dropped, so
     * no two threads write one buffer. */
    const int staged = batched ? (bytes % KILN_ALIGNMENT != 0 || batch == 0) : t >= num_inputs;
    if (staged) {
      for (int32_t s = batched ? 0 : 1; s < run.slots; ++s) {
        void* copy = kiln_rt_alloc(bytes);
        if (copy == NULL) {
          run.status = KILN_ERROR_OUT_OF_MEMORY;
          goto done;
        }
        memset(copy, 0, (size_t)bytes);
        run.stage[(int64_t)s * run.count + t] = copy;
      }
    }
  }

  if (run.slots > 1) kiln_rt_parallel_for(run.slots, run_slots, &run);
  const int64_t first = run.slots > 1 ? batch - batch % run.slots : 0;
  for (int64_t n = first; run.status == KILN_OK && n < runs; ++n) {
    run.status = run_sample(&run, 0, n);
  }

done:
  if (run.workspaces != NULL) {
    for (int32_t s = 1; s < run.slots; ++s) kiln_rt_free(run.workspaces[s]);
  }
  if (run.stage != NULL) {
    for (int64_t k = 0; k < (int64_t)run.slots * run.count; ++k) kiln_rt_free(run.stage[k]);
  }
  free(run.workspaces);
  free(run.stage);
  free(run.slices);
  if (run.status != KILN_OK) {
    for (int32_t o = 0; o < num_outputs; ++o) {
      kiln_rt_free(outputs[o]);
      outputs[o] = NULL;
    }
  }
  return run.status;
}
