// LlvmPassReporter: new-PM callbacks to BackendPassRun reports.
#include "engine/codegen/llvm/pass_events.h"

#include <algorithm>

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::codegen {
namespace {

// LLVM's pass-manager plumbing ("PassManager<Function>") only wraps the passes it runs.
bool IsPlumbing(llvm::StringRef name) { return name.starts_with("PassManager"); }

const llvm::Module* ModuleOf(const llvm::Any& ir) {
  if (const auto* module = llvm::any_cast<const llvm::Module*>(&ir)) return *module;
  return nullptr;
}

}  // namespace

std::string PrintFunctions(const llvm::Module& module, size_t max_bytes) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  for (const llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.print(stream);
    stream.flush();
    if (text.size() > max_bytes) {
      text.resize(max_bytes);
      text += "\n; ... (truncated)\n";
      break;
    }
  }
  return text;
}

void LlvmPassReporter::Register(llvm::PassInstrumentationCallbacks& callbacks) {
  callbacks.registerBeforeNonSkippedPassCallback(
      [this](llvm::StringRef name, llvm::Any ir) { Before(name, ir); });
  callbacks.registerAfterPassCallback(
      [this](llvm::StringRef name, llvm::Any ir, const llvm::PreservedAnalyses& preserved) {
        After(name, ModuleOf(ir), !preserved.areAllPreserved());
      });
  callbacks.registerAfterPassInvalidatedCallback(
      [this](llvm::StringRef name, const llvm::PreservedAnalyses&) {
        After(name, nullptr, /*changed=*/true);  // the unit it ran on is gone (deleted)
      });
}

void LlvmPassReporter::Before(llvm::StringRef name, llvm::Any ir) {
  if (IsPlumbing(name)) return;
  Open open{name.str(), Clock::now()};
  if (ModuleOf(ir) != nullptr) {
    module_passes_.push_back(std::move(open));
  } else {
    inner_passes_.push_back(std::move(open));
  }
}

void LlvmPassReporter::After(llvm::StringRef name, const llvm::Module* module, bool changed) {
  if (IsPlumbing(name)) return;
  auto elapsed_ms = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  if (!inner_passes_.empty() && llvm::StringRef(inner_passes_.back().name) == name) {
    double ms = elapsed_ms(inner_passes_.back().start);
    inner_passes_.pop_back();
    auto it = std::find_if(summed_.begin(), summed_.end(),
                           [&](const Summed& s) { return llvm::StringRef(s.name) == name; });
    if (it == summed_.end()) it = summed_.insert(summed_.end(), Summed{name.str()});
    it->ms += ms;
    it->changed |= changed;
    return;
  }
  if (module_passes_.empty() || llvm::StringRef(module_passes_.back().name) != name) return;
  Open open = std::move(module_passes_.back());
  module_passes_.pop_back();
  int depth = static_cast<int>(module_passes_.size());
  for (const Summed& inner : summed_) {
    report_(BackendPassRun{PassStage::kLlvm, inner.name, depth + 1, inner.ms, inner.changed, {}});
  }
  summed_.clear();
  BackendPassRun run{PassStage::kLlvm, open.name, depth, elapsed_ms(open.start), changed, {}};
  if (module != nullptr) {
    run.ir_after = [module] { return PrintFunctions(*module, 256 * 1024); };
  }
  report_(run);
}

}  // namespace kiln::codegen
