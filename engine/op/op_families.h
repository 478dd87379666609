// Registration entry points of the op families, called in order by
// RegisterBuiltinOps (builtin_ops.cc). One family per file.
#pragma once

#include "engine/op/op_registry.h"

namespace kiln {

void RegisterElementwiseOps(OpRegistry& registry);  // elementwise.cc
void RegisterNnOps(OpRegistry& registry);           // nn.cc
void RegisterReduceOps(OpRegistry& registry);       // reduce.cc
void RegisterTransformOps(OpRegistry& registry);    // transform.cc
void RegisterDeviceOps(OpRegistry& registry);       // device.cc
void RegisterShapeGuardOps(OpRegistry& registry);   // shape_guard.cc
void RegisterControlFlowOps(OpRegistry& registry);  // while_loop.cc
void RegisterWriteRowOp(OpRegistry& registry);      // write_row.cc
void RegisterStringOps(OpRegistry& registry);       // string_ops.cc

}  // namespace kiln
