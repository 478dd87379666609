// Schedule-record steps run as native code: each step's PrimFunc becomes the one kernel of a
// module whose main calls it, goes through the default loop pipeline and LLVM for this machine,
// and runs from the JIT. So `verify` works on kernels far beyond the interpreter's step budget
// (a ResNet's 7x7 stem convolution), and checks the code users actually get.
#pragma once

#include "engine/te/verify_schedule.h"

namespace kiln::driver {

// A te::StepExecutor compiling every step for the host. `is_cancelled` (may be empty) is polled
// before each step's compile.
te::StepExecutor NativeStepExecutor(std::function<bool()> is_cancelled = {});

}  // namespace kiln::driver
