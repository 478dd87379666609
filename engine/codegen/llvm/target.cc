// Target resolution and TargetMachine creation.
#include "engine/codegen/llvm/target.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/support/status_macros.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::codegen {

void InitializeLlvmTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
    llvm::InitializeAllDisassemblers();
    // Machine instructions without a source line (spills, reloads, epilogues) continue the
    // line before them in the DWARF line table instead of getting line 0, as GCC's do: they
    // are the same statement's code, and line 0 would hide their layers from objdump -S and
    // perf. LLVM offers this as an option only; it is set once, before any compile.
    // Tail merging folds equal instruction runs of different statements into one with line 0.
    auto& registered = llvm::cl::getRegisteredOptions();
    for (const auto& [name, value] : {std::pair<const char*, const char*>{"use-unknown-locations", "Disable"},
                                      {"enable-tail-merge", "false"}}) {
      if (auto it = registered.find(name); it != registered.end()) {
        it->second->addOccurrence(0, name, value);
      }
    }
  });
}

namespace {

// Features a request may turn off: extensions above an architecture's base ISA. Turning off the
// base itself (x86-64 without SSE2, AArch64 without its FP/SIMD registers) makes LLVM stop the
// process with a fatal error instead of reporting one, so those are refused up front.
bool MayDisable(std::string_view feature) {
  static constexpr std::string_view kPrefixes[] = {
      "avx", "fma", "sse3", "ssse3", "sse4", "f16c", "bmi", "amx", "vaes", "vpclmulqdq", "gfni",
      "sve", "sme", "dotprod", "fullfp16", "fp16fml", "bf16", "i8mm", "rcpc", "lse", "crc"};
  for (std::string_view prefix : kPrefixes) {
    if (feature.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

// Every entry of `features` is +name or -name with a feature `subtarget` knows; none is a
// soft-float mode or takes away the base ISA.
absl::Status CheckFeatures(const std::string& features, const llvm::MCSubtargetInfo& subtarget,
                           const std::string& triple) {
  if (features.empty()) return absl::OkStatus();
  std::vector<std::string> entries = absl::StrSplit(features, ',');
  for (const std::string& entry : entries) {
    if (entry.size() < 2 || (entry[0] != '+' && entry[0] != '-')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target feature '", entry, "' must be +NAME or -NAME (e.g. +avx2,-avx512f)"));
    }
    std::string name = entry.substr(1);
    bool known = false;
    for (const llvm::SubtargetFeatureKV& feature : subtarget.getAllProcessorFeatures()) {
      if (name == feature.Key) known = true;
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("target feature '", name, "' is not a feature of ", triple));
    }
    if (name.find("soft-float") != std::string::npos || (entry[0] == '-' && !MayDisable(name))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target feature '", entry, "' is not supported: it removes the floating-point or base "
          "instruction set native code needs"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResolvedTarget> ResolveTarget(const TargetOptions& options) {
  InitializeLlvmTargets();
  bool host = options.triple.empty();
  ResolvedTarget resolved;
  resolved.triple = llvm::Triple::normalize(host ? llvm::sys::getProcessTriple() : options.triple);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(resolved.triple, error);
  if (target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target triple '", options.triple, "' is not one LLVM knows: ", error));
  }
  resolved.cpu = !options.cpu.empty() ? options.cpu
                 : host               ? std::string(llvm::sys::getHostCPUName())
                                      : "generic";
  resolved.features = options.features;
  if (host && options.cpu.empty() && options.features.empty()) {
    // The host's features, sorted so the string (part of the compile id) is stable.
    std::vector<std::string> features;
    for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures()) {
      features.push_back(absl::StrCat(enabled ? "+" : "-", std::string(name)));
    }
    std::sort(features.begin(), features.end());
    resolved.features = absl::StrJoin(features, ",");
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(resolved.triple, "", ""));
  if (subtarget == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("LLVM has no subtarget for ", resolved.triple));
  }
  if (resolved.cpu != "generic" && !subtarget->isCPUStringValid(resolved.cpu)) {
    return absl::InvalidArgumentError(absl::StrCat("target cpu '", resolved.cpu,
                                                   "' is not a CPU of ", resolved.triple));
  }
  // The host's own feature list is LLVM's, not a request's.
  if (!(host && options.cpu.empty() && options.features.empty())) {
    if (absl::Status status = CheckFeatures(resolved.features, *subtarget, resolved.triple);
        !status.ok()) {
      return status;
    }
  }
  return resolved;
}

namespace {

// Whether the x86 target `resolved` names has AVX-512 (`feature` "+avx512f") or AVX ("+avx").
absl::StatusOr<bool> HasX86Feature(const ResolvedTarget& resolved, const char* feature) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(resolved.triple, error);
  if (target == nullptr) return absl::InvalidArgumentError(error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(resolved.triple, resolved.cpu, resolved.features));
  if (subtarget == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("LLVM has no subtarget for ", resolved.triple));
  }
  return subtarget->checkFeatures(feature);
}

}  // namespace

absl::StatusOr<int64_t> VectorFloatLanes(const TargetOptions& options) {
  KILN_ASSIGN_OR_RETURN(ResolvedTarget resolved, ResolveTarget(options));
  if (!llvm::Triple(resolved.triple).isX86()) return 4;
  KILN_ASSIGN_OR_RETURN(bool avx512, HasX86Feature(resolved, "+avx512f"));
  if (avx512) return 16;
  KILN_ASSIGN_OR_RETURN(bool avx, HasX86Feature(resolved, "+avx"));
  return avx ? 8 : 4;
}

absl::StatusOr<int64_t> VectorRegisters(const TargetOptions& options) {
  KILN_ASSIGN_OR_RETURN(ResolvedTarget resolved, ResolveTarget(options));
  llvm::Triple triple(resolved.triple);
  if (triple.isAArch64()) return 32;
  if (!triple.isX86()) return 16;
  KILN_ASSIGN_OR_RETURN(bool avx512, HasX86Feature(resolved, "+avx512f"));
  return avx512 ? 32 : 16;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const ResolvedTarget& resolved, int opt_level) {
  InitializeLlvmTargets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(resolved.triple, error);
  if (target == nullptr) return absl::InvalidArgumentError(error);
  llvm::CodeGenOptLevel level = opt_level <= 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  llvm::TargetOptions target_options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      resolved.triple, resolved.cpu, resolved.features, target_options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, level));
  if (machine == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("LLVM cannot generate code for ", resolved.triple, " (cpu ", resolved.cpu, ")"));
  }
  return machine;
}

}  // namespace kiln::codegen
