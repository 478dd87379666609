// EmitNative: build the module, verify it, optimize it with the new pass manager at the
// request's level, then emit the object (and assembly, LLVM IR text, C header on request).
#include "engine/codegen/llvm/codegen.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/deferred_weights.h"
#include "engine/codegen/llvm/disassembly.h"
#include "engine/codegen/llvm/model_header.h"
#include "engine/codegen/llvm/module_builder.h"
#include "engine/codegen/llvm/pass_events.h"
#include "engine/codegen/llvm/provenance.h"
#include "engine/codegen/llvm/shared_library.h"
#include "engine/loop/prim_func.h"
#include "engine/printer/printer.h"
#include "engine/codegen/llvm/target.h"
#include "engine/support/huge_pages.h"
#include "engine/support/identifier.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace kiln::codegen {
namespace {

void Optimize(llvm::Module& module, llvm::TargetMachine& machine, int opt_level,
              const CodegenOptions& options) {
  const std::function<bool()>& is_cancelled = options.is_cancelled;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassInstrumentationCallbacks callbacks;
  if (is_cancelled) {
    callbacks.registerShouldRunOptionalPassCallback(
        [&](llvm::StringRef, llvm::Any) { return !is_cancelled(); });
  }
  std::optional<LlvmPassReporter> reporter;
  if (options.on_pass) {
    reporter.emplace(options.on_pass);
    reporter->Register(callbacks);
  }
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  llvm::TargetLibraryInfoImpl library(llvm::Triple(module.getTargetTriple()));
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager pipeline = level == llvm::OptimizationLevel::O0
                                         ? builder.buildO0DefaultPipeline(level)
                                         : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

constexpr char kLoopSourceName[] = "model.loop.py";

// The ONNX layers of each printed loop-IR line (its statement's or function's span), and the
// lines of each kernel.
LoopLineLayers LayersByLine(const lower::LoweredModule& lowered,
                            const std::unordered_map<const Object*, int>& lines) {
  LoopLineLayers out;
  out.file_name = kLoopSourceName;
  std::map<int, std::set<std::string>> names;
  for (const auto& [node, line] : lines) {
    Span span;
    if (loop::StmtNode::IsKind(node->kind())) span = static_cast<const loop::StmtNode*>(node)->span;
    if (node->kind() == ObjectKind::kPrimFunc) span = static_cast<const loop::PrimFuncNode*>(node)->span;
    for (std::string& name : SpanSourceNames(span)) names[line].insert(std::move(name));
  }
  for (auto& [line, set] : names) out.layers[line] = std::vector<std::string>(set.begin(), set.end());
  std::vector<int> starts;
  for (const auto& entry : lowered.module->functions) {
    auto it = lines.find(entry.second.get());
    if (it != lines.end()) starts.push_back(it->second);
  }
  std::sort(starts.begin(), starts.end());
  for (const lower::LoweredKernel& kernel : lowered.kernels) {
    auto it = lines.find(lowered.module->Lookup(kernel.name).get());
    if (it == lines.end()) continue;
    auto next = std::upper_bound(starts.begin(), starts.end(), it->second);
    out.kernel_lines.push_back({it->second, next == starts.end() ? INT32_MAX : *next - 1});
  }
  return out;
}

// LLVM gives line 0 to instructions it merges or hoists out of their statement (LICM, CSE,
// SimplifyCFG): they belong to no one line. They do belong to their function, though (a kernel,
// or a parallel loop outlined from one), so they get the function's line, whose span is every
// layer the function computes; an inlined instruction keeps its scope and inlinedAt.
void AttributeLineZeroToFunction(llvm::Module& module) {
  for (llvm::Function& function : module) {
    llvm::DISubprogram* subprogram = function.getSubprogram();
    if (subprogram == nullptr) continue;
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        const llvm::DebugLoc& location = instruction.getDebugLoc();
        if (!location) {  // made by a pass without one
          instruction.setDebugLoc(
              llvm::DILocation::get(module.getContext(), subprogram->getLine(), 0, subprogram));
          continue;
        }
        if (location.getLine() != 0) continue;
        llvm::DISubprogram* owner = location->getScope()->getSubprogram();
        if (owner == nullptr) continue;
        instruction.setDebugLoc(llvm::DILocation::get(module.getContext(), owner->getLine(), 0,
                                                      location->getScope(),
                                                      location->getInlinedAt()));
      }
    }
  }
}

// Weights (`<prefix>_weight_<i>`) become zeroinitializer: `.zero N` in assembly.
void ElideWeights(llvm::Module& module, const std::string& prefix) {
  std::string weight = prefix + "_weight_";
  for (llvm::GlobalVariable& global : module.globals()) {
    if (global.getName().starts_with(weight) && global.hasInitializer()) {
      global.setInitializer(llvm::ConstantAggregateZero::get(global.getValueType()));
    }
  }
}

// A stream into the std::string returned (ELF writing seeks back to patch headers, hence
// pwrite): the object is written where it is kept, not copied out of a buffer, a copy that cost
// ResNet-50 100 MB of fresh pages and a quarter of its page faults.
class StringPwriteStream final : public llvm::raw_pwrite_stream {
 public:
  explicit StringPwriteStream(std::string& out) : out_(out) { SetUnbuffered(); }

 private:
  void write_impl(const char* data, size_t size) override { out_.append(data, size); }
  void pwrite_impl(const char* data, size_t size, uint64_t offset) override {
    std::memcpy(out_.data() + offset, data, size);
  }
  uint64_t current_pos() const override { return out_.size(); }

  std::string& out_;
};

absl::StatusOr<std::string> EmitFile(llvm::Module& module, llvm::TargetMachine& machine,
                                     llvm::CodeGenFileType type, size_t expected_bytes) {
  std::string out;
  // Reserved up front: growing a 100 MB buffer by doubling copies it again and again.
  out.reserve(expected_bytes);
  AdviseHugePages(out.data(), expected_bytes);
  StringPwriteStream stream(out);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type)) {
    return absl::InternalError(absl::StrCat("LLVM cannot emit ",
                                            type == llvm::CodeGenFileType::ObjectFile ? "objects" : "assembly",
                                            " for ", module.getTargetTriple()));
  }
  passes.run(module);
  return out;
}

}  // namespace

absl::StatusOr<NativeModule> EmitNative(const lower::LoweredModule& lowered,
                                        const CodegenOptions& options) {
  if (options.symbol_prefix.empty() || !IsIdentStart(options.symbol_prefix[0]) ||
      !AllIdentChars(options.symbol_prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "symbol prefix '", options.symbol_prefix, "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"));
  }
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen opt level ", options.opt_level, " is outside 0..3"));
  }
  absl::StatusOr<ResolvedTarget> target = ResolveTarget(options.target);
  if (!target.ok()) return target.status();
  if (options.emit_shared_library) {
    if (absl::Status status = CheckSharedLibraryTarget(*target); !status.ok()) return status;
  }
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine =
      CreateTargetMachine(*target, options.opt_level);
  if (!machine.ok()) return machine.status();

  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  Clock::time_point start = Clock::now();
  llvm::LLVMContext context;
  NativeModule native;
  std::unordered_map<const Object*, int> lines;
  LoopSourceLines source{kLoopSourceName, &lines, options.opt_level > 0};
  if (options.debug_info) {
    PrintOptions script;
    script.format = PrintOptions::Format::kScript;
    native.loop_source = PrintModuleWithSourceLines(lowered.module, script, &lines);
  }
  absl::StatusOr<BuiltModule> built =
      BuildModule(context, lowered, options, VectorMathTarget::For(**machine),
                  options.debug_info ? &source : nullptr);
  if (!built.ok()) return built.status();
  llvm::Module& module = *built->module;
  module.setTargetTriple(target->triple);
  module.setDataLayout((*machine)->createDataLayout());
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream)) {
    return absl::InternalError(
        absl::StrCat("the generated LLVM module is invalid (a Kiln bug): ", problems.substr(0, 2000)));
  }
  double build_seconds = seconds_since(start);
  start = Clock::now();
  Optimize(module, **machine, options.opt_level, options);
  if (options.debug_info) AttributeLineZeroToFunction(module);
  const bool patch_weights =
      DefineDeferredWeights(built->deferred_weights, lowered, llvm::Triple(target->triple));
  double optimize_seconds = seconds_since(start);
  start = Clock::now();
  if (options.is_cancelled && options.is_cancelled()) {
    return absl::CancelledError("code generation was cancelled");
  }

  native.target = *target;
  native.symbol_prefix = options.symbol_prefix;
  native.workspace_bytes = built->workspace_bytes;
  if (options.emit_llvm_ir) {
    // The text is for reading: a copy whose weights are zeros (a ResNet's 100 MB of weights
    // would otherwise be most of it). Code generation rewrites the IR it runs on, which is one
    // more reason for a copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    ElideWeights(*copy, options.symbol_prefix);
    llvm::raw_string_ostream ir(native.llvm_ir);
    copy->print(ir, nullptr);
  }
  // Read before code generation consumes the module: each function's own line.
  std::map<std::string, int> function_lines;
  for (const llvm::Function& function : module) {
    if (const llvm::DISubprogram* subprogram = function.getSubprogram()) {
      function_lines[function.getName().str()] = subprogram->getLine();
    }
  }
  size_t weight_bytes = 0;
  for (const auto& [buffer, data] : lowered.constants) weight_bytes += data->bytes.size();
  // Generous: reserved pages that are never written cost address space, not memory, while an
  // object outgrowing its reserve is copied whole.
  absl::StatusOr<std::string> object = EmitFile(module, **machine, llvm::CodeGenFileType::ObjectFile,
                                                weight_bytes + (size_t{32} << 20));
  if (!object.ok()) return object.status();
  native.object = *std::move(object);
  if (patch_weights) {
    if (absl::Status status = PatchDeferredWeights(built->deferred_weights, lowered, native.object);
        !status.ok()) {
      return status;
    }
  }
  if (options.emit_assembly) {
    // The object disassembled: the code users link, for the cost of a disassembly rather than
    // a second run of code generation.
    absl::StatusOr<std::string> assembly = DisassembleObject(native.object, *target);
    if (!assembly.ok()) return assembly.status();
    native.assembly = *std::move(assembly);
    if (options.debug_info) {
      std::set<std::string> queries;
      for (const char* suffix : {"_input_info", "_output_info", "_num_inputs", "_num_outputs",
                                 "_workspace_size", "_num_kernels", "_kernel_name", "_run_dynamic"}) {
        queries.insert(options.symbol_prefix + suffix);
      }
      bool arm = llvm::Triple(target->triple).isAArch64();
      LoopLineLayers line_layers = LayersByLine(lowered, lines);
      line_layers.function_lines = std::move(function_lines);
      AsmProvenance provenance = AnnotateAssembly(native.assembly, line_layers, arm ? "//" : "#",
                                                  EntryName(lowered, options.symbol_prefix), queries);
      native.assembly = std::move(provenance.annotated_assembly);
      native.provenance_json = std::move(provenance.json);
      native.kernel_instructions = provenance.kernel_instructions;
      native.kernel_instructions_with_layers = provenance.kernel_instructions_with_layers;
    }
  }
  native.header = ModelHeader(lowered, options.symbol_prefix, native.workspace_bytes);
  native.build_seconds = build_seconds;
  native.optimize_seconds = optimize_seconds;
  native.emit_seconds = seconds_since(start);
  if (options.on_pass) {
    options.on_pass(BackendPassRun{PassStage::kLlvm, "MachineCode", 0, native.emit_seconds * 1e3,
                                   true, {}});
  }
  if (options.emit_shared_library) {
    start = Clock::now();
    absl::StatusOr<std::string> library = LinkSharedLibrary(native);
    if (!library.ok()) return library.status();
    native.shared_library = *std::move(library);
    native.link_seconds = seconds_since(start);
    if (options.on_pass) {
      options.on_pass(BackendPassRun{PassStage::kLlvm, "LinkSharedLibrary", 0,
                                     native.link_seconds * 1e3, true, {}});
    }
  }
  return native;
}

}  // namespace kiln::codegen
