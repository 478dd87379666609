// ModuleContext: dtype -> LLVM type mapping and runtime declarations.
#include "engine/codegen/llvm/module_context.h"

#include "absl/strings/str_cat.h"
#include "engine/support/check.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/MDBuilder.h"

namespace kiln::codegen {
namespace {

llvm::Type* ScalarType(llvm::LLVMContext& context, DataType dtype, bool storage) {
  switch (dtype) {
    case DataType::kFloat16: return storage ? llvm::Type::getHalfTy(context) : llvm::Type::getFloatTy(context);
    case DataType::kBFloat16: return storage ? llvm::Type::getInt16Ty(context) : llvm::Type::getFloatTy(context);
    case DataType::kFloat32: return llvm::Type::getFloatTy(context);
    case DataType::kFloat64: return llvm::Type::getDoubleTy(context);
    case DataType::kInt8:
    case DataType::kUInt8: return llvm::Type::getInt8Ty(context);
    case DataType::kInt16:
    case DataType::kUInt16: return llvm::Type::getInt16Ty(context);
    case DataType::kInt32:
    case DataType::kUInt32: return llvm::Type::getInt32Ty(context);
    case DataType::kInt64:
    case DataType::kUInt64: return llvm::Type::getInt64Ty(context);
    case DataType::kBool: return storage ? llvm::Type::getInt8Ty(context) : llvm::Type::getInt1Ty(context);
    case DataType::kString: return llvm::Type::getInt64Ty(context);  // the pointer word
  }
  KILN_UNREACHABLE() << "dtype";
  return nullptr;
}

llvm::Type* WithLanes(llvm::Type* scalar, int lanes) {
  return lanes > 1 ? llvm::FixedVectorType::get(scalar, lanes) : scalar;
}

}  // namespace

ModuleContext::ModuleContext(llvm::Module& module, bool fast_math,
                             const VectorMathTarget& vector_math, const LoopSourceLines* source)
    : module(module), fast_math(fast_math), vector_math(vector_math), source_(source) {
  if (source_ == nullptr) return;
  di_ = std::make_unique<llvm::DIBuilder>(module);
  file_ = di_->createFile(source_->file_name, ".");
  // DW_LANG_Python: the printed loop IR is Python-like script (docs/loop-script-format.md).
  di_->createCompileUnit(llvm::dwarf::DW_LANG_Python, file_, "Kiln", source_->optimized, "", 0);
  void_type_ = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
}

ModuleContext::~ModuleContext() = default;

int ModuleContext::LineOf(const Object* node) const {
  if (source_ == nullptr || node == nullptr) return 0;
  auto it = source_->lines->find(node);
  return it == source_->lines->end() ? 0 : it->second;
}

llvm::DISubprogram* ModuleContext::AttachSubprogram(llvm::Function* function, int line) {
  if (di_ == nullptr) return nullptr;
  auto flags = llvm::DISubprogram::SPFlagDefinition;
  if (source_->optimized) flags |= llvm::DISubprogram::SPFlagOptimized;
  if (function->hasLocalLinkage()) flags |= llvm::DISubprogram::SPFlagLocalToUnit;
  llvm::DISubprogram* subprogram =
      di_->createFunction(file_, function->getName(), function->getName(), file_, line, void_type_,
                          line, llvm::DINode::FlagPrototyped, flags);
  function->setSubprogram(subprogram);
  return subprogram;
}

void ModuleContext::FinishDebugInfo() {
  if (di_ == nullptr) return;
  di_->finalize();
  module.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  module.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 5);
}

llvm::Type* ModuleContext::ComputeType(DataType dtype, int lanes) {
  return WithLanes(ScalarType(context(), dtype, /*storage=*/false), lanes);
}

llvm::Type* ModuleContext::StorageType(DataType dtype, int lanes) {
  return WithLanes(ScalarType(context(), dtype, /*storage=*/true), lanes);
}

llvm::FunctionCallee ModuleContext::ParallelFor() {
  auto* i64 = llvm::Type::getInt64Ty(context());
  auto* ptr = llvm::PointerType::getUnqual(context());
  return module.getOrInsertFunction(
      "kiln_rt_parallel_for",
      llvm::FunctionType::get(llvm::Type::getVoidTy(context()), {i64, ptr, ptr}, false));
}

llvm::FunctionCallee ModuleContext::ProfileEnter() {
  return module.getOrInsertFunction(
      "kiln_rt_profile_enter",
      llvm::FunctionType::get(llvm::Type::getVoidTy(context()), {llvm::Type::getInt32Ty(context())}, false));
}

llvm::FunctionCallee ModuleContext::ProfileExit() {
  return module.getOrInsertFunction(
      "kiln_rt_profile_exit",
      llvm::FunctionType::get(llvm::Type::getVoidTy(context()), {llvm::Type::getInt32Ty(context())}, false));
}

llvm::FunctionCallee ModuleContext::IntPow() {
  auto* i64 = llvm::Type::getInt64Ty(context());
  return module.getOrInsertFunction("kiln_rt_ipow", llvm::FunctionType::get(i64, {i64, i64}, false));
}

llvm::FunctionCallee ModuleContext::Alloc() {
  auto* ptr = llvm::PointerType::getUnqual(context());
  return module.getOrInsertFunction(
      "kiln_rt_alloc", llvm::FunctionType::get(ptr, {llvm::Type::getInt64Ty(context())}, false));
}

llvm::FunctionCallee ModuleContext::Free() {
  auto* ptr = llvm::PointerType::getUnqual(context());
  return module.getOrInsertFunction(
      "kiln_rt_free", llvm::FunctionType::get(llvm::Type::getVoidTy(context()), {ptr}, false));
}

llvm::FunctionCallee ModuleContext::MathFunction(const std::string& name, llvm::Type* type,
                                                 int arity) {
  std::vector<llvm::Type*> params(arity, type);
  llvm::FunctionCallee callee =
      module.getOrInsertFunction(name, llvm::FunctionType::get(type, params, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotThrow();
    function->setWillReturn();
  }
  return callee;
}

llvm::FunctionCallee ModuleContext::RuntimeFunction(const std::string& name, llvm::Type* result,
                                                    std::vector<llvm::Type*> params) {
  return module.getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
}

std::string ModuleContext::OutlinedName(const std::string& parent) {
  return absl::StrCat(parent, "_parallel_", outlined++);
}

void ModuleContext::DeclareDisjointBuffers(const std::vector<const loop::VarNode*>& buffers) {
  if (buffers.size() < 2) return;  // nothing to tell apart
  llvm::MDBuilder md(context());
  // Named after a counter, not a pointer: the module's text stays the same from run to run.
  llvm::MDNode* domain = md.createAliasScopeDomain(absl::StrCat("kiln.kernel.", alias_domains_++));
  std::vector<llvm::MDNode*> scopes;
  // Scopes are uniqued by name within the domain: the index keeps two buffers of one name apart
  // (one scope for both would tell LLVM that each does not alias itself).
  for (size_t i = 0; i < buffers.size(); ++i) {
    scopes.push_back(md.createAliasScope(absl::StrCat(buffers[i]->name, ".", i), domain));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < buffers.size(); ++j) {
      if (j != i) others.push_back(scopes[j]);
    }
    alias_tags_[buffers[i]] = {llvm::MDNode::get(context(), {scopes[i]}),
                               llvm::MDNode::get(context(), others)};
  }
}

void ModuleContext::TagAccess(llvm::Instruction* access, const loop::VarNode* buffer) const {
  auto it = alias_tags_.find(buffer);
  if (it == alias_tags_.end()) return;
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.scope);
  access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.noalias);
}

}  // namespace kiln::codegen
