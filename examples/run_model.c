/* Runs a model Kiln compiled to kiln_model.o: input x[i] = (i % 17) / 17 - 0.5, prints output 0. */
#include <stdio.h>
#include <stdlib.h>
#include "kiln_model.h"
int main(void) {
  const kiln_tensor_info* in = kiln_model_input_info(0), *out = kiln_model_output_info(0);
  float* x = aligned_alloc(64, (in->bytes + 63) / 64 * 64), *y = aligned_alloc(64, (out->bytes + 63) / 64 * 64);
  for (int64_t i = 0; i < in->bytes / 4; ++i) x[i] = (float)(i % 17) / 17.0f - 0.5f;
  void* workspace = aligned_alloc(64, (kiln_model_workspace_size() + 63) / 64 * 64 + 64);
  int status = kiln_model_run((void* const[]){x}, (void* const[]){y}, workspace);
  for (int64_t i = 0; i < out->bytes / 4; ++i) printf("%.6f%s", y[i], i + 1 < out->bytes / 4 ? " " : "\n");
  return status;
}
