// The stages of a compile, in order, under one PassContext.
#include "engine/driver/driver.h"

#include <limits>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "engine/parser/parser.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/pipeline.h"
#include "engine/support/request_limits.h"
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

absl::Status ConfigureContext(const CompileOptions& options, PassContext* context) {
  context->set_opt_level(options.opt_level);
  for (const std::string& name : options.required_passes) context->AddRequiredPass(name);
  for (const std::string& name : options.disabled_passes) context->AddDisabledPass(name);
  for (const std::string& assignment : options.config) {
    KILN_RETURN_IF_ERROR(context->SetConfigFromAssignment(assignment));
  }
  for (const auto& instrument : options.instruments) context->AddInstrument(instrument);
  return absl::OkStatus();
}

std::shared_ptr<CompileBudget> MakeBudget(const CompileOptions& options) {
  return std::make_shared<CompileBudget>(options.limits, options.is_cancelled);
}

absl::StatusOr<CompileResult> CompileWithBudget(IRModule module, const CompileOptions& options,
                                                std::shared_ptr<CompileBudget> budget,
                                                CompileFailure* failure) {
  EnsureBuiltinPassesRegistered();
  CompileResult result;
  result.imported = module;

  PassContext context;
  context.set_budget(budget);
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
      absl::Status cancelled = budget->CheckCancelled("before lowering");
      if (!cancelled.ok()) return Fail(CompileStage::kLower, cancelled, failure);
      lower::LowerOptions lower_options = lower::LowerOptionsFromContext(context);
      lower_options.only_kernels = options.lower_only_kernels;
      lower_options.budget = budget.get();
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
    result.peak_bytes = budget->peak_bytes();
    absl::Status closed = scope.Close();
    if (!closed.ok()) return Fail(CompileStage::kGraphPasses, closed, failure);
  }
  return result;
}

}  // namespace

absl::StatusOr<CompileResult> CompileModule(IRModule module, const CompileOptions& options,
                                            CompileFailure* failure) {
  return CompileWithBudget(std::move(module), options, MakeBudget(options), failure);
}

absl::StatusOr<CompileResult> CompileOnnx(std::string_view model_bytes,
                                          const CompileOptions& options,
                                          CompileFailure* failure) {
  // One budget from the first byte imported to the last kernel lowered.
  std::shared_ptr<CompileBudget> budget = MakeBudget(options);
  OnnxImportOptions import = options.import;
  import.budget = budget.get();
  absl::StatusOr<IRModule> module = ImportOnnxModel(model_bytes, import);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  return CompileWithBudget(*module, options, std::move(budget), failure);
}

absl::StatusOr<CompileResult> CompileGraphText(std::string_view text,
                                               const CompileOptions& options,
                                               CompileFailure* failure) {
  std::shared_ptr<CompileBudget> budget = MakeBudget(options);
  ParseOptions parse;
  parse.source_name = "graph_ir_text";
  parse.max_nesting_depth = kMaxSyntaxNesting;
  absl::StatusOr<IRModule> module = ParseModule(text, parse);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  // Parameters are what ONNX graph inputs are: the same element limit.
  for (const auto& [name, base] : (*module)->functions) {
    const auto* function = base.as<FunctionNode>();
    if (function == nullptr) continue;
    for (const Var& param : function->params) {
      const auto* type = param->type_annotation.as<TensorTypeNode>();
      if (type == nullptr) continue;
      int64_t elements = 1;
      for (const Dim& dim : type->shape) {
        if (dim.is_static() && __builtin_mul_overflow(elements, dim.value, &elements)) {
          elements = std::numeric_limits<int64_t>::max();
        }
      }
      if (elements > options.import.max_tensor_elements) {
        return Fail(CompileStage::kImport,
                    absl::InvalidArgumentError(absl::StrCat(
                        "graph_ir_text: parameter '", param->name_hint, "' of @", name->name_hint,
                        " would have more than ", options.import.max_tensor_elements,
                        " elements (the limit on one tensor)")),
                    failure);
      }
    }
  }
  return CompileWithBudget(*module, options, std::move(budget), failure);
}

}  // namespace kiln::driver
