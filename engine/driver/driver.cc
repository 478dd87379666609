// The stages of a compile, in order, under one PassContext.
#include "engine/driver/driver.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/pipeline.h"
#include "engine/support/status_macros.h"
#include "engine/loop/transform/register_loop_passes.h"

namespace kiln::driver {

void EnsureBuiltinPassesRegistered() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterBuiltinPasses(PassRegistry::Global());
    loop::transform::RegisterLoopPasses(PassRegistry::Global());
  });
}

const char* CompileStageName(CompileStage stage) {
  switch (stage) {
    case CompileStage::kImport: return "import";
    case CompileStage::kGraphPasses: return "graph passes";
    case CompileStage::kLower: return "lower";
    case CompileStage::kLoopPasses: return "loop passes";
  }
  return "?";
}

namespace {

absl::Status Fail(CompileStage stage, absl::Status status, CompileFailure* failure) {
  if (failure != nullptr) *failure = CompileFailure{stage, status};
  return status;
}

// Stops the pipeline at the next pass boundary once `is_cancelled` says so.
class CancellationCheck final : public PassInstrument {
 public:
  explicit CancellationCheck(std::function<bool()> is_cancelled)
      : PassInstrument("CancellationCheck"), is_cancelled_(std::move(is_cancelled)) {}
  absl::Status RunBeforePass(const IRModule&, const PassInvocation& pass) override {
    if (!is_cancelled_()) return absl::OkStatus();
    return absl::CancelledError(absl::StrCat("the compile was cancelled before pass ", pass.name()));
  }

 private:
  std::function<bool()> is_cancelled_;
};

absl::Status ConfigureContext(const CompileOptions& options, PassContext* context) {
  context->set_opt_level(options.opt_level);
  for (const std::string& name : options.required_passes) context->AddRequiredPass(name);
  for (const std::string& name : options.disabled_passes) context->AddDisabledPass(name);
  for (const std::string& assignment : options.config) {
    KILN_RETURN_IF_ERROR(context->SetConfigFromAssignment(assignment));
  }
  if (options.is_cancelled) {
    context->AddInstrument(std::make_shared<CancellationCheck>(options.is_cancelled));
  }
  for (const auto& instrument : options.instruments) context->AddInstrument(instrument);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompileResult> CompileModule(IRModule module, const CompileOptions& options,
                                            CompileFailure* failure) {
  EnsureBuiltinPassesRegistered();
  CompileResult result;
  result.imported = module;

  PassContext context;
  absl::Status configured = ConfigureContext(options, &context);
  if (!configured.ok()) return Fail(CompileStage::kGraphPasses, configured, failure);
  const std::string& pipeline_text =
      options.pipeline.empty() ? DefaultPipeline(options.opt_level) : options.pipeline;
  absl::StatusOr<Pass> pipeline = ParsePipeline(pipeline_text);
  if (!pipeline.ok()) return Fail(CompileStage::kGraphPasses, pipeline.status(), failure);
  {
    PassContext::Scope scope(context);
    if (!scope.status().ok()) return Fail(CompileStage::kGraphPasses, scope.status(), failure);
    absl::StatusOr<IRModule> optimized = (**pipeline)(module, context);
    if (!optimized.ok()) return Fail(CompileStage::kGraphPasses, optimized.status(), failure);
    result.optimized = *optimized;
    if (options.lower) {
      if (options.is_cancelled && options.is_cancelled()) {
        return Fail(CompileStage::kLower, absl::CancelledError("the compile was cancelled before lowering"),
                    failure);
      }
      lower::LowerOptions lower_options = lower::LowerOptionsFromContext(context);
      lower_options.only_kernels = options.lower_only_kernels;
      absl::StatusOr<lower::LoweredModule> lowered =
          lower::LowerModule(result.optimized, lower_options);
      if (!lowered.ok()) return Fail(CompileStage::kLower, lowered.status(), failure);
      result.lowered = std::move(*lowered);
      if (options.run_loop_passes && !options.lower_only_kernels) {
        absl::StatusOr<Pass> loop_pipeline =
            ParsePipeline(loop::transform::DefaultLoopPipeline());
        if (!loop_pipeline.ok()) {
          return Fail(CompileStage::kLoopPasses, loop_pipeline.status(), failure);
        }
        absl::StatusOr<IRModule> loop_optimized =
            (**loop_pipeline)(result.lowered->module, context);
        if (!loop_optimized.ok()) {
          return Fail(CompileStage::kLoopPasses, loop_optimized.status(), failure);
        }
        result.lowered->module = *loop_optimized;
      }
    }
    result.diagnostics = context.diagnostics();
    absl::Status closed = scope.Close();
    if (!closed.ok()) return Fail(CompileStage::kGraphPasses, closed, failure);
  }
  return result;
}

absl::StatusOr<CompileResult> CompileOnnx(std::string_view model_bytes,
                                          const CompileOptions& options,
                                          CompileFailure* failure) {
  absl::StatusOr<IRModule> module = ImportOnnxModel(model_bytes, options.import);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  return CompileModule(*module, options, failure);
}

}  // namespace kiln::driver
