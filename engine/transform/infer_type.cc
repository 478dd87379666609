// InferType pass: a module pass over the incremental type inferencer.
#include "engine/transform/infer_type.h"

#include "engine/op/type_inference.h"

namespace kiln::transform {

Pass InferType() {
  return CreateModulePass(
      [](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        return ::kiln::InferType(module);
      },
      PassInfo{"InferType", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
