// Whether loop IR touches string elements (DataType::kString): such code calls libkiln_rt's
// string functions, which allocate in the calling thread's run arena, so its kernels stay serial
// and its entry opens and closes that arena (engine/runtime/strings.c).
#pragma once

#include "engine/ir/module.h"
#include "engine/loop/prim_func.h"

namespace kiln::loop {

// A parameter, store, load or expression of `func` is a string.
bool TouchesStrings(const PrimFuncNode& func);
// Some PrimFunc of `module` touches strings.
bool ModuleTouchesStrings(const IRModule& module);

}  // namespace kiln::loop
