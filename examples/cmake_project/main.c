/* Runs the model kiln_add_model compiled (kiln_model.h, the C ABI of kiln_runtime.h) on the
 * numbers given as arguments and prints the outputs, one per line. */
#include <stdio.h>
#include <stdlib.h>

#include "kiln_model.h"

int main(int argc, char** argv) {
  const kiln_tensor_info* in_info = kiln_model_input_info(0);
  const kiln_tensor_info* out_info = kiln_model_output_info(0);
  int64_t in_count = 1, out_count = 1;
  for (int32_t d = 0; d < in_info->ndim; ++d) in_count *= in_info->shape[d];
  for (int32_t d = 0; d < out_info->ndim; ++d) out_count *= out_info->shape[d];
  if (argc - 1 != in_count) {
    fprintf(stderr, "usage: %s X1 ... X%lld\n", argv[0], (long long)in_count);
    return 2;
  }
  /* Every buffer KILN_ALIGNMENT-aligned, sizes rounded up to it as aligned_alloc wants. */
  size_t in_bytes = ((size_t)in_count * sizeof(float) + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT * KILN_ALIGNMENT;
  size_t out_bytes = ((size_t)out_count * sizeof(float) + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT * KILN_ALIGNMENT;
  size_t workspace_bytes = (size_t)kiln_model_workspace_size() + KILN_ALIGNMENT;
  float* input = aligned_alloc(KILN_ALIGNMENT, in_bytes);
  float* output = aligned_alloc(KILN_ALIGNMENT, out_bytes);
  void* workspace = aligned_alloc(KILN_ALIGNMENT, workspace_bytes);
  if (input == NULL || output == NULL || workspace == NULL) return 1;
  for (int64_t i = 0; i < in_count; ++i) input[i] = strtof(argv[i + 1], NULL);
  void* inputs[] = {input};
  void* outputs[] = {output};
  int32_t status = kiln_model_run(inputs, outputs, workspace);
  if (status != KILN_OK) {
    fprintf(stderr, "kiln_model_run returned %d\n", status);
    return 1;
  }
  for (int64_t i = 0; i < out_count; ++i) printf("%g\n", output[i]);
  free(input);
  free(output);
  free(workspace);
  return 0;
}
