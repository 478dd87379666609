// The stages of a compile, in order, under one PassContext.
#include "engine/driver/driver.h"

#include <chrono>
#include <functional>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/codegen/llvm/shared_library.h"
#include "engine/driver/bounded_outputs.h"
#include "engine/lower/kernel_flops.h"
#include "engine/lower/kernel_selector.h"
#include "engine/parser/parser.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pipeline.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {

const char* CompileStageName(CompileStage stage) {
  switch (stage) {
    case CompileStage::kConfigure: return "configure";
    case CompileStage::kImport: return "import";
    case CompileStage::kGraphPasses: return "graph passes";
    case CompileStage::kLower: return "lower";
    case CompileStage::kLoopPasses: return "loop passes";
    case CompileStage::kCodegen: return "codegen";
  }
  return "?";
}

namespace {

absl::Status Fail(CompileStage stage, absl::Status status, CompileFailure* failure,
                  CompileReport report = {}) {
  if (failure != nullptr) *failure = CompileFailure{stage, status, std::move(report)};
  return status;
}

absl::Status ConfigureContext(const CompileOptions& options, PassContext* context) {
  context->set_opt_level(options.opt_level);
  for (const std::string& name : options.required_passes) context->AddRequiredPass(name);
  for (const std::string& name : options.disabled_passes) context->AddDisabledPass(name);
  for (const std::string& assignment : options.config) {
    KILN_RETURN_IF_ERROR(context->SetConfigFromAssignment(assignment));
  }
  return absl::OkStatus();
}

std::shared_ptr<CompileBudget> MakeBudget(const CompileOptions& options) {
  return std::make_shared<CompileBudget>(options.limits, options.is_cancelled);
}

// The graph pipeline the options ask for (none when run_graph_passes is off); the default one
// blocks convolutions by `vector_lanes`.
absl::StatusOr<std::optional<Pass>> GraphPipeline(const CompileOptions& options,
                                                  int64_t vector_lanes) {
  if (!options.run_graph_passes) return std::nullopt;
  return ParsePipeline(options.pipeline.empty()
                           ? DefaultGraphPipeline(options.opt_level, vector_lanes)
                           : options.pipeline);
}

// The loop pipeline (none when the compile does not lower, lowers only some
// kernels, or the options ask for none).
absl::StatusOr<std::optional<Pass>> LoopPipeline(const CompileOptions& options) {
  const std::string& text = options.loop_pipeline.value_or(DefaultLoopPipeline());
  if (!options.lower || !options.only_kernels_named_by.empty() || text.empty()) {
    return std::nullopt;
  }
  absl::StatusOr<Pass> pipeline = ParsePipeline(text);
  if (!pipeline.ok()) {
    return absl::Status(pipeline.status().code(),
                        absl::StrCat("loop pipeline: ", std::string(pipeline.status().message())));
  }
  return *pipeline;
}

// What code generation allocates for `lowered`, as an upper estimate: the weights three times
// (the lowered constants are already charged; LLVM's constant, the object, the object's copy in
// the result) and a megabyte of IR, machine code and text per kernel.
int64_t CodegenBytesEstimate(const lower::LoweredModule& lowered) {
  int64_t weight_bytes = 0;
  for (const auto& [buffer, data] : lowered.constants) {
    weight_bytes += static_cast<int64_t>(data->bytes.size());
  }
  return 3 * weight_bytes + (static_cast<int64_t>(lowered.kernels.size()) + 1) * (int64_t{1} << 20);
}

// Seconds since `*start`, which moves to now.
double Lap(std::chrono::steady_clock::time_point* start) {
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - *start).count();
  *start = now;
  return seconds;
}

// Main's inputs then its outputs as "input 'x': float32[1, 3]", with the batch symbol read as 1:
// what a per-sample model's one-sample import must give.
std::vector<std::string> OneSampleSignature(const FunctionNode& main, const std::string& symbol) {
  std::vector<std::string> out;
  std::function<void(const std::string&, const Type&)> add = [&](const std::string& what,
                                                                  const Type& type) {
    if (const auto* tuple = type.as<TupleTypeNode>()) {
      for (const Type& field : tuple->fields) add(what, field);
      return;
    }
    const auto* tensor = type.as<TensorTypeNode>();
    std::vector<std::string> dims;
    for (size_t d = 0; tensor != nullptr && d < tensor->shape.size(); ++d) {
      const Dim& dim = tensor->shape[d];
      dims.push_back(dim.is_static() ? absl::StrCat(dim.value) : dim.symbol == symbol ? "1" : "?");
    }
    out.push_back(tensor == nullptr ? what + ": not a tensor"
                                    : absl::StrCat(what, ": ", DataTypeName(tensor->dtype), "[",
                                                   absl::StrJoin(dims, ", "), "]"));
  };
  for (const Var& param : main.params) add("input '" + param->name_hint + "'", param->type_annotation);
  add("an output", main.body->checked_type);
  return out;
}

absl::StatusOr<CompileResult> CompileWithBudget(IRModule module, const CompileOptions& options,
                                                std::shared_ptr<CompileBudget> budget,
                                                CompileFailure* failure,
                                                std::optional<double> import_seconds = {},
                                                std::optional<lower::SampleBatch> sample_batch = {}) {
  RegisteredPasses();
  CompileResult result;
  if (import_seconds) result.stage_times.push_back({CompileStage::kImport, *import_seconds});
  auto stage_start = std::chrono::steady_clock::now();
  result.imported = module;
  result.optimized = module;

  PassContext context;
  context.set_budget(budget);
  absl::Status configured = ConfigureContext(options, &context);
  if (!configured.ok()) return Fail(CompileStage::kConfigure, configured, failure);
  // Layouts and schedules are chosen for the target code is generated for (the host's when it
  // is not), so the graph and loops a trace shows are those that become native code. A target
  // LLVM does not know is code generation's error.
  absl::StatusOr<int64_t> vector_lanes = codegen::VectorFloatLanes(
      options.codegen ? options.codegen->target : options.layout_target);
  if (!vector_lanes.ok()) return Fail(CompileStage::kCodegen, vector_lanes.status(), failure);
  absl::StatusOr<int64_t> vector_registers = codegen::VectorRegisters(
      options.codegen ? options.codegen->target : options.layout_target);
  if (!vector_registers.ok()) {
    return Fail(CompileStage::kCodegen, vector_registers.status(), failure);
  }
  // Both pipelines are parsed before anything runs.
  absl::StatusOr<std::optional<Pass>> graph = GraphPipeline(options, *vector_lanes);
  if (!graph.ok()) return Fail(CompileStage::kGraphPasses, graph.status(), failure);
  absl::StatusOr<std::optional<Pass>> loop = LoopPipeline(options);
  if (!loop.ok()) return Fail(CompileStage::kLoopPasses, loop.status(), failure);
  const std::optional<Pass>& graph_pipeline = *graph;
  const std::optional<Pass>& loop_pipeline = *loop;
  absl::StatusOr<DebugInstruments> debug = DebugInstruments::Add(
      options.debug, options.instruments,
      graph_pipeline ? PrintPipeline(*graph_pipeline) : std::string(), context);
  // The instruments belong to the pass manager: their options fail with it.
  if (!debug.ok()) return Fail(CompileStage::kGraphPasses, debug.status(), failure);
  auto fail = [&](CompileStage stage, const absl::Status& status) {
    return Fail(stage, status, failure, debug->Report(context));
  };
  {
    PassContext::Scope scope(context);
    if (!scope.status().ok()) return fail(CompileStage::kGraphPasses, scope.status());
    if (graph_pipeline) {
      absl::StatusOr<IRModule> optimized = (**graph_pipeline)(module, context);
      if (!optimized.ok()) return fail(CompileStage::kGraphPasses, optimized.status());
      result.optimized = *optimized;
      result.stage_times.push_back({CompileStage::kGraphPasses, Lap(&stage_start)});
    }
    if (options.lower) {
      absl::Status cancelled = budget->CheckCancelled("before lowering");
      if (!cancelled.ok()) return fail(CompileStage::kLower, cancelled);
      lower::LowerOptions lower_options = lower::LowerOptionsFromContext(context);
      lower_options.vector_lanes = *vector_lanes;
      lower_options.vector_registers = *vector_registers;
      if (!options.only_kernels_named_by.empty()) {
        lower_options.only_kernels = [selector = options.only_kernels_named_by](
                                         const lower::KernelCandidate& kernel) {
          return lower::KernelMayMatch(selector, kernel);
        };
      }
      lower_options.budget = budget.get();
      absl::StatusOr<lower::LoweredModule> lowered =
          lower::LowerModule(result.optimized, lower_options);
      if (!lowered.ok()) return fail(CompileStage::kLower, lowered.status());
      result.lowered = std::move(*lowered);
      if (sample_batch) {
        if (static_cast<int>(sample_batch->inputs.size()) != result.lowered->num_inputs ||
            static_cast<int>(sample_batch->outputs.size()) != result.lowered->num_outputs) {
          return fail(CompileStage::kLower,
                      absl::InternalError("the per-sample compile's inputs and outputs are not the "
                                          "model's"));
        }
        result.lowered->sample_batch = std::move(sample_batch);
      }
      absl::StatusOr<std::vector<lower::BoundedOutput>> bounded =
          ReadBoundedOutputs(module, *result.lowered);
      if (!bounded.ok()) return fail(CompileStage::kLower, bounded.status());
      if (!bounded->empty() && result.lowered->sample_batch) {
        return fail(CompileStage::kLower,
                    absl::UnimplementedError(
                        "outputs whose length depends on the data and a batch known only at run "
                        "time in one model: give the inputs fixed shapes"));
      }
      result.lowered->bounded_outputs = *std::move(bounded);
      result.stage_times.push_back({CompileStage::kLower, Lap(&stage_start)});
      if (loop_pipeline) {
        absl::StatusOr<IRModule> loop_optimized =
            (**loop_pipeline)(result.lowered->module, context);
        if (!loop_optimized.ok()) return fail(CompileStage::kLoopPasses, loop_optimized.status());
        result.lowered->module = *loop_optimized;
        result.stage_times.push_back({CompileStage::kLoopPasses, Lap(&stage_start)});
      }
      if (options.codegen && options.only_kernels_named_by.empty()) {
        absl::Status cancelled = budget->CheckCancelled("before code generation");
        if (!cancelled.ok()) return fail(CompileStage::kCodegen, cancelled);
        // LLVM holds the weights twice (its constant, the object) plus IR and code per kernel:
        // charged before it allocates, released once the object is made.
        int64_t codegen_bytes = CodegenBytesEstimate(*result.lowered);
        absl::Status charged = budget->Charge(codegen_bytes, "native code generation");
        if (!charged.ok()) return fail(CompileStage::kCodegen, charged);
        codegen::CodegenOptions codegen_options = *options.codegen;
        codegen_options.is_cancelled = [&budget] { return !budget->CheckCancelled("").ok(); };
        codegen_options.on_pass = [&context](const BackendPassRun& run) {
          context.ReportBackendPass(run);
        };
        absl::StatusOr<codegen::NativeModule> native =
            codegen::EmitNative(*result.lowered, codegen_options);
        budget->Release(codegen_bytes);
        if (!native.ok()) return fail(CompileStage::kCodegen, native.status());
        result.native = *std::move(native);
        result.stage_times.push_back({CompileStage::kCodegen, Lap(&stage_start)});
      }
    }
    result.peak_bytes = budget->peak_bytes();
    absl::Status closed = scope.Close();
    if (!closed.ok()) return fail(CompileStage::kGraphPasses, closed);
  }
  result.report = debug->Report(context);
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
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<IRModule> module = ImportOnnxModel(model_bytes, import);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  if (!options.lower) return CompileWithBudget(*module, options, std::move(budget), failure, Lap(&start));
  // A symbolic batch dim: checked on the graph as imported, then the model imported again for
  // one sample (a fresh budget: the first import's tensors are gone with it).
  // Symbolic dims that are not such a batch (a sequence length) are compiled as they are: kernels
  // over them read the symbols' values at run time (lower::SymbolicSignature).
  absl::StatusOr<std::optional<lower::SampleBatch>> sample_batch = lower::FindSampleBatch(*module);
  if (!sample_batch.ok() || !*sample_batch) {
    return CompileWithBudget(*module, options, std::move(budget), failure, Lap(&start));
  }
  OnnxImportOptions one_sample = import;
  const auto* main = (*module)->Lookup("main").as<FunctionNode>();
  const std::vector<std::string> expected = OneSampleSignature(*main, (**sample_batch).symbol);
  for (size_t i = 0; i < main->params.size(); ++i) {
    if (!(**sample_batch).inputs[i]) continue;
    std::vector<int64_t> shape{1};
    const auto* type = main->params[i]->type_annotation.as<TensorTypeNode>();
    for (size_t axis = 1; type != nullptr && axis < type->shape.size(); ++axis) {
      shape.push_back(type->shape[axis].value);
    }
    one_sample.input_shapes[main->params[i]->name_hint] = std::move(shape);
  }
  *module = IRModule();
  budget = MakeBudget(options);
  one_sample.budget = budget.get();
  module = ImportOnnxModel(model_bytes, one_sample);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  // An import step that treats a batch of 1 differently (a Squeeze without axes) would change
  // what one sample's program takes or gives: refused rather than compiled wrong.
  const std::vector<std::string> got =
      OneSampleSignature(*(*module)->Lookup("main").as<FunctionNode>(), (**sample_batch).symbol);
  if (got != expected) {
    size_t k = 0;
    while (k < got.size() && k < expected.size() && got[k] == expected[k]) ++k;
    return Fail(CompileStage::kImport,
                absl::UnimplementedError(absl::StrCat(
                    "compiling per sample (batch dimension ", (**sample_batch).symbol,
                    "): the model imported for one sample has ",
                    k < got.size() ? got[k] : "nothing", " where the model with ",
                    (**sample_batch).symbol, " = 1 has ", k < expected.size() ? expected[k] : "nothing",
                    " (an op treats a batch of 1 differently); give the inputs fixed shapes")),
                failure);
  }
  return CompileWithBudget(*module, options, std::move(budget), failure, Lap(&start),
                           std::move(*sample_batch));
}

absl::StatusOr<CompileResult> CompileGraphText(std::string_view text,
                                               const CompileOptions& options,
                                               CompileFailure* failure) {
  std::shared_ptr<CompileBudget> budget = MakeBudget(options);
  ParseOptions parse;
  parse.source_name = options.source_name;
  if (options.text_request_limits) parse.max_nesting_depth = kMaxSyntaxNesting;
  absl::StatusOr<IRModule> module = ParseModule(text, parse);
  if (!module.ok()) return Fail(CompileStage::kImport, module.status(), failure);
  if (!options.text_request_limits) {
    return CompileWithBudget(*module, options, std::move(budget), failure);
  }
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
                        options.source_name, ": parameter '", param->name_hint, "' of @", name->name_hint,
                        " would have more than ", options.import.max_tensor_elements,
                        " elements (the limit on one tensor)")),
                    failure);
      }
    }
  }
  return CompileWithBudget(*module, options, std::move(budget), failure);
}

absl::StatusOr<std::string> DefaultGraphPipelineFor(int opt_level,
                                                    const codegen::TargetOptions& target) {
  KILN_ASSIGN_OR_RETURN(int64_t lanes, codegen::VectorFloatLanes(target));
  return DefaultGraphPipeline(opt_level, lanes);
}

absl::StatusOr<std::string> LinkSharedLibrary(const CompileResult& compiled) {
  if (!compiled.native) return absl::FailedPreconditionError("the compile generated no native code");
  return codegen::LinkSharedLibrary(*compiled.native);
}

std::map<std::string, int64_t> KernelFlopsByName(const CompileResult& compiled) {
  std::map<std::string, int64_t> flops;
  if (!compiled.lowered) return flops;
  for (const lower::LoweredKernel& kernel : compiled.lowered->kernels) {
    flops[kernel.name] = lower::KernelFlops(kernel);
  }
  return flops;
}

}  // namespace kiln::driver
