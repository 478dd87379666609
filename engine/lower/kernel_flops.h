// The arithmetic a kernel does, for reports of how close to the machine's peak it runs: twice
// the multiply-adds of its reductions (a convolution's or matmul's), the convention of FLOP
// counts for CNNs and transformers. Elementwise work is not counted.
#pragma once

#include <cstdint>

#include "engine/lower/lower_module.h"

namespace kiln::lower {

// 2 x (output elements x reduce extent) summed over the reduction stages of the kernel's
// default schedule: conv2d, dense, matmul, pooling and reduce stages. Saturates at INT64_MAX;
// 0 for a kernel over a symbolic dimension (its count depends on the run).
int64_t KernelFlops(const LoweredKernel& kernel);

}  // namespace kiln::lower
