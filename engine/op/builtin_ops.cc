// The one place that lists every op family: explicit, ordered registration.
#include "engine/op/op_families.h"

namespace kiln {

void RegisterBuiltinOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);
  RegisterNnOps(registry);
  RegisterReduceOps(registry);
  RegisterTransformOps(registry);
  RegisterDeviceOps(registry);
}

}  // namespace kiln
