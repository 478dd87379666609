// What the functions of one generated LLVM module share: the module, the type mapping from
// Kiln's dtypes, declarations of libkiln_rt and libm functions, and names for outlined code.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include <vector>

#include "engine/codegen/llvm/vector_math.h"
#include "engine/ir/dtype.h"
#include "engine/ir/object.h"
#include "engine/loop/expr.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/Module.h"

namespace kiln::codegen {

// Debug info from the printed loop IR: the file every DILocation names and the line each loop
// statement (and function) prints on.
struct LoopSourceLines {
  std::string file_name;  // "model.loop.py"
  const std::unordered_map<const Object*, int>* lines = nullptr;
  bool optimized = true;
};

struct ModuleContext {
  ModuleContext(llvm::Module& module, bool fast_math, const VectorMathTarget& vector_math,
                const LoopSourceLines* source = nullptr);
  ~ModuleContext();

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
  // void kiln_rt_profile_enter(i32), void kiln_rt_profile_exit(i32).
  llvm::FunctionCallee ProfileEnter();
  llvm::FunctionCallee ProfileExit();
  // A C math function of one or two `type` arguments (tanhf, erf, ...).
  llvm::FunctionCallee MathFunction(const std::string& name, llvm::Type* type, int arity);
  // A libkiln_rt string function (kiln_runtime.h: kiln_rt_string_*, kiln_rt_strings_*).
  llvm::FunctionCallee RuntimeFunction(const std::string& name, llvm::Type* result,
                                       std::vector<llvm::Type*> params);

  // A fresh name for a function outlined from `parent` ("<parent>_parallel_<n>").
  std::string OutlinedName(const std::string& parent);

  // Debug info (all null/0 without a LoopSourceLines): the line `node` prints on (0 when it
  // does not), a subprogram for `function` starting at `line`, and the module's finishing
  // touches (DIBuilder::finalize, the module flags).
  int LineOf(const Object* node) const;
  llvm::DISubprogram* AttachSubprogram(llvm::Function* function, int line);
  void FinishDebugInfo();

  // Alias scopes: `buffers` (the storage of one kernel's buffers that never overlap: its
  // Allocates and the params no other param shares) get one scope each, and TagAccess marks a
  // load or store of one as touching its scope and none of the others. So LLVM may keep a value
  // of one buffer in registers across stores to another, even inside outlined parallel loops
  // whose pointers come from a closure.
  void DeclareDisjointBuffers(const std::vector<const loop::VarNode*>& buffers);
  void TagAccess(llvm::Instruction* access, const loop::VarNode* buffer) const;

  llvm::Module& module;
  const bool fast_math;
  const VectorMathTarget vector_math;
  int outlined = 0;

 private:
  const LoopSourceLines* source_;
  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DIFile* file_ = nullptr;
  llvm::DISubroutineType* void_type_ = nullptr;
  struct AliasTags {
    llvm::MDNode* scope;    // !alias.scope: its own scope
    llvm::MDNode* noalias;  // !noalias: the kernel's other scopes
  };
  std::unordered_map<const loop::VarNode*, AliasTags> alias_tags_;
  int alias_domains_ = 0;
};

}  // namespace kiln::codegen
