// The shape every loop pass shares: a module pass (stage loop) that rewrites
// each PrimFunc of an IRModule and leaves graph Functions untouched. When
// no function changes, the module comes back as the same node, so "changed"
// stays a pointer test for instruments.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "engine/loop/prim_func.h"
#include "engine/pass/pass.h"

namespace kiln::loop::transform {

using PrimFuncPassFunc = std::function<absl::StatusOr<PrimFunc>(const PrimFunc&, PassContext&)>;

// `info.stage` is set to PassStage::kLoop.
Pass CreatePrimFuncPass(PrimFuncPassFunc func, PassInfo info);

// For passes that only rewrite the body.
Pass CreatePrimFuncBodyPass(std::function<Stmt(const PrimFunc&, PassContext&)> rewrite_body,
                            PassInfo info);

}  // namespace kiln::loop::transform
