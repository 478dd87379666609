// LabelOps: names fused (Primitive) functions after the operators they hold,
// so dumps, timings and schedule records can say which kernel is which.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Gives every nested Primitive function the attribute `name`:
// `fused_` followed by its operator names in post-order, '.' replaced by '_',
// joined with '_' (`fused_nn_conv2d_add_nn_relu`). Names longer than 80
// characters are cut and end in a stable hash of the full name. The functions
// stay nested. Opt level 0.
Pass LabelOps();

}  // namespace kiln::transform
