// The nn op family is registered by RegisterNnOps (nn.cc), which calls these
// parts kept in their own files so each stays readable: sliding-window ops
// (convolutions and pooling) and image resizing.
#pragma once

#include "engine/op/op_registry.h"

namespace kiln {

void RegisterWindowOps(OpRegistry& registry);  // nn_window.cc
void RegisterImageOps(OpRegistry& registry);   // image.cc

}  // namespace kiln
