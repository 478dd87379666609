// Compute definitions of the device annotations (device.cc): on_device and
// device_copy carry no arithmetic, so their compute is a copy of the input.
// (PlanDevices removes on_device before lowering; device_copy lowers to a
// copy kernel between the two devices' buffers.)
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

// A tuple-typed value contributes one input tensor per field and gets one
// copy per field.
ComputeDefinition Identity(std::string op) {
  return [op = std::move(op)](const ComputeInput& in) -> absl::StatusOr<std::vector<te::Tensor>> {
    std::vector<compute::ResultTensor> results;
    if (in.result_type.as<TupleTypeNode>() != nullptr) {
      KILN_ASSIGN_OR_RETURN(results, compute::TupleResult(in, op));
    } else {
      KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, op));
      results.push_back(std::move(result));
    }
    KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, results.size(), op));
    std::vector<te::Tensor> out;
    for (size_t i = 0; i < results.size(); ++i) {
      std::string name = compute::ComputeName(op);
      if (results.size() > 1) name += "_" + std::to_string(i);
      out.push_back(compute::Gather(name, results[i].shape, in.inputs[i],
                                    [](const std::vector<loop::PrimExpr>& p) { return p; }));
    }
    return out;
  };
}

}  // namespace

void RegisterDeviceComputes(OpRegistry& registry) {
  registry.SetCompute("on_device", Identity("on_device"));
  registry.SetCompute("device_copy", Identity("device_copy"));
}

}  // namespace kiln
