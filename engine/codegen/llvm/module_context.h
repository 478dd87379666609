// What the functions of one generated LLVM module share: the module, the type mapping from
// Kiln's dtypes, declarations of libkiln_rt and libm functions, and names for outlined code.
#pragma once

#include <string>

#include "engine/ir/dtype.h"
#include "llvm/IR/Module.h"

namespace kiln::codegen {

struct ModuleContext {
  ModuleContext(llvm::Module& module, bool fast_math) : module(module), fast_math(fast_math) {}

  llvm::LLVMContext& context() { return module.getContext(); }

  // The type a value of `dtype` is computed in (float16/bfloat16: float, bool: i1) and the type
  // it is stored as (float16: half, bfloat16: i16, bool: i8); `lanes` > 1 gives a vector.
  llvm::Type* ComputeType(DataType dtype, int lanes = 1);
  llvm::Type* StorageType(DataType dtype, int lanes = 1);

  // void kiln_rt_parallel_for(i64, ptr, ptr), i64 kiln_rt_ipow(i64, i64),
  // ptr kiln_rt_alloc(i64), void kiln_rt_free(ptr).
  llvm::FunctionCallee ParallelFor();
  llvm::FunctionCallee IntPow();
  llvm::FunctionCallee Alloc();
  llvm::FunctionCallee Free();
  // A C math function of one or two `type` arguments (tanhf, erf, ...).
  llvm::FunctionCallee MathFunction(const std::string& name, llvm::Type* type, int arity);

  // A fresh name for a function outlined from `parent` ("<parent>_parallel_<n>").
  std::string OutlinedName(const std::string& parent);

  llvm::Module& module;
  const bool fast_math;
  int outlined = 0;
};

}  // namespace kiln::codegen
