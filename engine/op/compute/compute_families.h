// Registration entry points of the op compute definitions, one per family
// file in engine/op/compute/, called in order at the end of
// RegisterBuiltinOps (builtin_ops.cc) once every op is registered.
#pragma once

#include "engine/op/op_registry.h"

namespace kiln {

void RegisterElementwiseComputes(OpRegistry& registry);  // elementwise_compute.cc
void RegisterNnComputes(OpRegistry& registry);           // nn_compute.cc
// Called by RegisterNnComputes, as nn.cc registers the window and image ops.
void RegisterWindowComputes(OpRegistry& registry);  // window_compute.cc
void RegisterImageComputes(OpRegistry& registry);   // image_compute.cc
void RegisterReduceComputes(OpRegistry& registry);       // reduce_compute.cc
void RegisterTransformComputes(OpRegistry& registry);    // transform_compute.cc
void RegisterIndexComputes(OpRegistry& registry);        // index_compute.cc
void RegisterDeviceComputes(OpRegistry& registry);       // device_compute.cc
void RegisterShapeGuardComputes(OpRegistry& registry);   // shape_guard_compute.cc
void RegisterStringComputes(OpRegistry& registry);       // string_compute.cc

}  // namespace kiln
