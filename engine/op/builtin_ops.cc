// The one place that lists every op family: explicit, ordered registration.
#include "engine/op/compute/compute_families.h"
#include "engine/op/op_families.h"

namespace kiln {

void RegisterBuiltinOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);
  RegisterNnOps(registry);
  RegisterReduceOps(registry);
  RegisterTransformOps(registry);
  RegisterDeviceOps(registry);
  RegisterShapeGuardOps(registry);
  RegisterControlFlowOps(registry);
  RegisterWriteRowOp(registry);
  RegisterStringOps(registry);
  // Compute definitions attach to the ops registered above.
  RegisterElementwiseComputes(registry);
  RegisterNnComputes(registry);
  RegisterReduceComputes(registry);
  RegisterTransformComputes(registry);
  RegisterIndexComputes(registry);
  RegisterDeviceComputes(registry);
  RegisterShapeGuardComputes(registry);
  RegisterStringComputes(registry);
}

}  // namespace kiln
