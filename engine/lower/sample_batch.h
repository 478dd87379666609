// Models whose graph inputs have a symbolic batch dimension (ONNX dim_param "N", "batch", ...).
//
// Kiln's buffers and kernels have static shapes. A model whose symbolic dimension is a batch
// axis -- axis 0 of the inputs that have it, every sample computed on its own -- needs no
// runtime-sized kernels: it is compiled for one sample, and its entry `<prefix>_run_dynamic`
// runs that program once per sample of the batch the caller passes, on each sample's slice of
// the inputs and outputs (kiln_rt_run_per_sample, engine/runtime/kiln_runtime.h). The static
// memory plan, schedules and kernels are those of one sample.
//
// FindSampleBatch proves the "every sample on its own" part on the imported graph, op by op:
// a value whose type mentions the batch symbol has it on axis 0, and each op that reads or
// produces such a value keeps the samples apart (elementwise ops, reductions and softmax over
// other axes, convolutions and pooling over NCHW data, matmul rows, reshapes that keep axis 0,
// ...). Anything else -- an op mixing samples, a symbolic dim elsewhere, two batch symbols -- is
// an Unimplemented error naming the op and its ONNX layer, and asks for fixed input shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"

namespace kiln::lower {

struct SampleBatch {
  // The dimension's name ("N").
  std::string symbol;
  // Per graph input / output of main, in order: whether its axis 0 is the batch (false: the
  // tensor is the same for every sample, e.g. a mask input or a constant output).
  std::vector<bool> inputs;
  std::vector<bool> outputs;
};

// nullopt when main's parameters and results have static shapes; otherwise the batch, or an
// error saying why the model cannot run per sample. `imported` must be typed (the importer's
// output).
absl::StatusOr<std::optional<SampleBatch>> FindSampleBatch(const IRModule& imported);

}  // namespace kiln::lower
