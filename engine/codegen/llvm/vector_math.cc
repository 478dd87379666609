// libmvec calls: the variant names of the x86-64 Vector Function ABI and the splitting of a
// vector into the chunks a variant takes.
#include "engine/codegen/llvm/vector_math.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::codegen {
namespace {

// glibc 2.35+ libmvec (Debian 12 ships 2.36): every function with float and double variants at
// 128 and 256 bits. pow takes two vectors, the rest one.
constexpr std::array<const char*, 20> kVectorFunctions = {
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "erf",  "exp",
    "exp2", "expm1", "log",  "log1p", "log2", "pow",   "sin", "sinh", "tan", "tanh"};

}  // namespace

VectorMathTarget VectorMathTarget::For(const llvm::TargetMachine& machine) {
  VectorMathTarget target;
  const llvm::Triple& triple = machine.getTargetTriple();
  if (triple.getArch() == llvm::Triple::x86_64) {
    target.avx512 = machine.getMCSubtargetInfo()->checkFeatures("+avx512f,+avx512dq,+avx512vl");
  }
  if (triple.getArch() != llvm::Triple::x86_64 || !triple.isOSLinux() || !triple.isGNUEnvironment()) {
    return target;
  }
  target.enabled = true;
  const llvm::MCSubtargetInfo* subtarget = machine.getMCSubtargetInfo();
  if (subtarget->checkFeatures("+avx2")) {
    target.isa_256 = 'd';
  } else if (subtarget->checkFeatures("+avx")) {
    target.isa_256 = 'c';
  }
  return target;
}

bool HasVectorVariant(const std::string& name) {
  return std::find(kVectorFunctions.begin(), kVectorFunctions.end(), name) != kVectorFunctions.end();
}

llvm::Value* EmitVectorMathCall(llvm::IRBuilderBase& builder, llvm::Module& module,
                                const VectorMathTarget& target, const std::string& name,
                                const std::vector<llvm::Value*>& args) {
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(args[0]->getType());
  if (!target.enabled || type == nullptr || !HasVectorVariant(name)) return nullptr;
  llvm::Type* element = type->getElementType();
  if (!element->isFloatTy() && !element->isDoubleTy()) return nullptr;
  int lanes = static_cast<int>(type->getNumElements());
  int element_bits = element->isFloatTy() ? 32 : 64;
  int total_bits = lanes * element_bits;
  char isa;
  int chunk_bits;
  if (target.isa_256 != 0 && total_bits % 256 == 0) {
    isa = target.isa_256;
    chunk_bits = 256;
  } else if (total_bits % 128 == 0) {
    isa = 'b';
    chunk_bits = 128;
  } else {
    return nullptr;  // 2 floats, 3 lanes, ...: per lane
  }
  int chunk_lanes = chunk_bits / element_bits;
  auto* chunk_type = llvm::FixedVectorType::get(element, chunk_lanes);
  std::string symbol = absl::StrCat("_ZGV", std::string(1, isa), "N", chunk_lanes,
                                    std::string(args.size(), 'v'), "_", name,
                                    element->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> params(args.size(), chunk_type);
  llvm::FunctionCallee callee =
      module.getOrInsertFunction(symbol, llvm::FunctionType::get(chunk_type, params, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // The vector variants never set errno: pure functions LLVM may hoist and combine.
    function->setDoesNotThrow();
    function->setWillReturn();
    function->setDoesNotAccessMemory();
  }
  if (chunk_lanes == lanes) return builder.CreateCall(callee, args);
  std::vector<llvm::Value*> results;
  for (int start = 0; start < lanes; start += chunk_lanes) {
    llvm::SmallVector<int, 16> mask;
    for (int lane = 0; lane < chunk_lanes; ++lane) mask.push_back(start + lane);
    std::vector<llvm::Value*> chunk_args;
    for (llvm::Value* arg : args) chunk_args.push_back(builder.CreateShuffleVector(arg, mask));
    results.push_back(builder.CreateCall(callee, chunk_args));
  }
  return llvm::concatenateVectors(builder, results);
}

}  // namespace kiln::codegen
