// DriftChecker: seeded inputs, the reference run, and each snapshot's run compared with it.
#include "engine/driver/numeric_drift.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/module.h"
#include "engine/ir/span.h"
#include "engine/codegen/llvm/codegen.h"
#include "engine/driver/run_model.h"
#include "engine/lower/lower_module.h"
#include "engine/loop/prim_func.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {
namespace {

// Lowering needs primitive functions; level 0 fuses nothing together, so a snapshot's own
// fusion decisions (when FuseOps already ran) are kept and no optimization is added.
constexpr char kRunPipeline[] = "InferType,FuseOps{fuse_opt_level=0},InferType";

loop::HostTensor SeededTensor(const loop::HostTensor& like, std::mt19937_64& random) {
  std::vector<double> values(static_cast<size_t>(like.NumElements()));
  if (like.dtype == DataType::kString) {  // numbers in text, which casts to numbers can read
    std::vector<std::string> text;
    for (size_t i = 0; i < values.size(); ++i) text.push_back(std::to_string(random() % 4));
    return loop::HostTensor::FromStrings(like.shape, std::move(text));
  }
  if (IsFloat(like.dtype)) {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& v : values) v = uniform(random);
  } else if (like.dtype == DataType::kBool) {
    for (double& v : values) v = static_cast<double>(random() & 1);
  } else {
    for (double& v : values) v = static_cast<double>(random() % 4);
  }
  return loop::HostTensor::FromDoubles(like.dtype, like.shape, values);
}

// Refuses a model whose inputs and outputs (main's first parameters) exceed kMaxCheckedBytes,
// computed from their buffers' shapes without allocating them.
absl::Status CheckSignatureBytes(const lower::LoweredModule& lowered) {
  const auto* main = lowered.module->Lookup("main").as<loop::PrimFuncNode>();
  if (main == nullptr) return absl::FailedPreconditionError("the lowered module has no main");
  int64_t bytes = 0;
  for (int i = 0; i < lowered.num_inputs + lowered.num_outputs; ++i) {
    const loop::Buffer& buffer = main->param_buffer(static_cast<size_t>(i));
    int64_t elements = 1;
    for (int64_t extent : buffer->shape) {
      // Saturating: a hostile shape cannot wrap the product below the bound.
      elements = extent > 0 && elements > kMaxCheckedBytes / extent ? kMaxCheckedBytes + 1
                                                                     : elements * extent;
    }
    bytes += std::min(elements, kMaxCheckedBytes + 1) * DataTypeBytes(buffer->dtype);
    if (bytes > kMaxCheckedBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the model's inputs and outputs exceed ", kMaxCheckedBytes,
          " bytes (at ", buffer->name, "); numerics are checked up to that"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::pair<double, double> ErrorsBetween(const loop::HostTensor& got_tensor,
                                        const loop::HostTensor& want_tensor) {
  if (got_tensor.dtype == DataType::kString || want_tensor.dtype == DataType::kString) {
    // Text either matches or it does not: any difference is an infinite error.
    bool same = got_tensor.dtype == want_tensor.dtype && got_tensor.Strings() == want_tensor.Strings();
    return same ? std::pair<double, double>{0, 0} : std::pair<double, double>{INFINITY, INFINITY};
  }
  std::vector<double> got = got_tensor.ToDoubles(), want = want_tensor.ToDoubles();
  double max_abs = 0, max_rel = 0;
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
    double error = std::fabs(got[k] - want[k]);
    if (std::isnan(got[k]) != std::isnan(want[k])) error = INFINITY;
    if (std::isnan(got[k]) && std::isnan(want[k])) error = 0;
    if (std::isinf(want[k]) && got[k] == want[k]) error = 0;
    max_abs = std::max(max_abs, error);
    max_rel = std::max(max_rel, error / std::max(std::fabs(want[k]), kDriftRelativeFloor));
  }
  return {max_abs, max_rel};
}

namespace {

// The values of main a layer attribution can compare: for each set of source names, the last
// call (in evaluation order) whose span names exactly that set and whose value is a tensor of
// static shape. Keyed by the names joined; `order` keeps evaluation order.
struct LayerValues {
  std::map<std::string, Expr> by_key;
  std::map<std::string, std::vector<std::string>> layers;
  std::vector<std::string> order;
};

absl::StatusOr<LayerValues> CollectLayerValues(const IRModule& module) {
  BaseFunc main = module->Lookup("main");
  const auto* function = main.as<FunctionNode>();
  if (function == nullptr) return absl::FailedPreconditionError("the module has no graph main");
  LayerValues values;
  PostOrderVisit(function->body, [&](const Expr& expr) {
    const auto* call = expr.as<CallNode>();
    const auto* type = expr->checked_type.as<TensorTypeNode>();
    if (call == nullptr || type == nullptr) return;
    for (const Dim& d : type->shape) {
      if (!d.is_static()) return;
    }
    std::vector<std::string> names = SpanSourceNames(expr->span);
    if (names.empty()) return;
    std::sort(names.begin(), names.end());
    std::string key = absl::StrJoin(names, "\x1f");
    if (values.by_key.emplace(key, expr).second) {
      values.order.push_back(key);
      values.layers[key] = std::move(names);
    } else {
      values.by_key[key] = expr;  // the layer's last value
    }
  });
  return values;
}

}  // namespace

IRModule WithExtraOutputs(const IRModule& module, const std::vector<Expr>& extra) {
  const auto* main = module->Lookup("main").as<FunctionNode>();
  std::vector<Expr> outputs;
  if (const auto* tuple = main->body.as<TupleNode>()) {
    outputs = tuple->elements;
  } else {
    outputs.push_back(main->body);
  }
  outputs.insert(outputs.end(), extra.begin(), extra.end());
  Function widened = MakeFunction(main->params, MakeTuple(outputs, main->body->span), nullptr,
                                  main->attrs, main->span);
  return WithFunction(module, module->GetGlobalVar("main"), widened);
}

absl::StatusOr<std::unique_ptr<DriftChecker>> DriftChecker::Create(
    const IRModule& imported, uint64_t seed, const CompileOptions& base,
    std::vector<loop::HostTensor> inputs, DriftBackend backend) {
  std::unique_ptr<DriftChecker> checker(new DriftChecker());
  CompileOptions& options = checker->options_;
  options.import = base.import;
  options.limits = base.limits;
  options.is_cancelled = base.is_cancelled;
  options.pipeline = kRunPipeline;
  options.opt_level = 0;
  options.lower = true;
  options.codegen.reset();

  KILN_ASSIGN_OR_RETURN(CompileResult reference, checker->Lower(imported));
  // Sized from main's signature before any tensor is allocated (each run holds a copy of the
  // inputs and the outputs; the reference keeps one more set of outputs).
  KILN_RETURN_IF_ERROR(CheckSignatureBytes(*reference.lowered));
  ModelTensors tensors = MakeModelTensors(reference);
  if (!inputs.empty()) {
    if (inputs.size() != tensors.inputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the numerics check was given ", inputs.size(),
                                                     " inputs; the model takes ",
                                                     tensors.inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const loop::HostTensor& want = tensors.inputs[i];
      if (inputs[i].dtype != want.dtype || inputs[i].shape != want.shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            "numerics input ", i, " (", tensors.input_names[i], ") is ",
            DataTypeName(inputs[i].dtype), "[", absl::StrJoin(inputs[i].shape, ", "),
            "]; the model takes ", DataTypeName(want.dtype), "[", absl::StrJoin(want.shape, ", "),
            "]"));
      }
    }
    checker->inputs_ = std::move(inputs);
  } else {
    std::mt19937_64 random(seed);
    for (const loop::HostTensor& input : tensors.inputs) {
      checker->inputs_.push_back(SeededTensor(input, random));
    }
  }
  checker->output_names_ = tensors.output_names;
  if (backend != DriftBackend::kNative) {
    absl::StatusOr<std::vector<loop::HostTensor>> interpreted = checker->Run(reference, false);
    if (interpreted.ok()) {
      checker->reference_ = *std::move(interpreted);
      return checker;
    }
    if (interpreted.status().code() != absl::StatusCode::kResourceExhausted ||
        backend == DriftBackend::kInterpreter) {
      return interpreted.status();
    }
  }
  // Too much work for the interpreter (a ResNet-50 is billions of steps): every module of this
  // check is compiled to native code for this machine and run in-process instead.
  checker->options_.codegen = HostCodegenOptions();
  KILN_ASSIGN_OR_RETURN(CompileResult native_reference, checker->Lower(imported));
  KILN_ASSIGN_OR_RETURN(checker->reference_, checker->Run(native_reference, true));
  return checker;
}

absl::StatusOr<CompileResult> DriftChecker::LowerWith(const IRModule& module,
                                                      const CompileOptions& options) const {
  CompileFailure failure;
  absl::StatusOr<CompileResult> compiled = CompileModule(module, options, &failure);
  if (!compiled.ok()) {
    return absl::Status(compiled.status().code(),
                        absl::StrCat("running the module for the numerics check: ",
                                     CompileStageName(failure.stage), ": ",
                                     compiled.status().message()));
  }
  return compiled;
}

absl::StatusOr<std::vector<loop::HostTensor>> DriftChecker::Run(
    const CompileResult& compiled, bool native,
    const std::vector<loop::HostTensor>& given_inputs) const {
  ModelTensors tensors = MakeModelTensors(compiled);
  if (tensors.inputs.size() != given_inputs.size()) {
    return absl::FailedPreconditionError(absl::StrCat("the module has ", tensors.inputs.size(),
                                                      " inputs; the check has ",
                                                      given_inputs.size()));
  }
  std::vector<loop::HostTensor> inputs = given_inputs;
  std::vector<loop::HostTensor*> input_pointers, output_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != tensors.inputs[i].dtype || inputs[i].shape != tensors.inputs[i].shape) {
      return absl::FailedPreconditionError(absl::StrCat("input ", i, " (", tensors.input_names[i],
                                                        ") changed its type since the import"));
    }
    input_pointers.push_back(&inputs[i]);
  }
  for (loop::HostTensor& output : tensors.outputs) output_pointers.push_back(&output);
  if (native) {
    KILN_RETURN_IF_ERROR(RunNative(compiled, input_pointers, output_pointers));
  } else {
    // Each run may take what one compile may: the request's limits bound every check.
    loop::InterpreterOptions interpreter;
    interpreter.is_cancelled = options_.is_cancelled;
    interpreter.max_steps = options_.limits.max_interpreter_steps;
    interpreter.max_allocation_bytes = options_.limits.max_bytes;
    KILN_RETURN_IF_ERROR(RunModel(compiled, input_pointers, output_pointers, interpreter));
  }
  return std::move(tensors.outputs);
}

absl::StatusOr<DriftReport> DriftChecker::Compare(std::string backend,
                                                  const std::vector<loop::HostTensor>& outputs) const {
  if (outputs.size() != reference_.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the module has ", outputs.size(), " outputs; as imported it had ", reference_.size()));
  }
  DriftReport report;
  report.backend = std::move(backend);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].shape != reference_[i].shape) {
      return absl::FailedPreconditionError(
          absl::StrCat("output ", i, " (", output_names_[i], ") changed its shape"));
    }
    OutputDrift drift;
    drift.name = output_names_[i];
    std::tie(drift.max_abs_error, drift.max_rel_error) = ErrorsBetween(outputs[i], reference_[i]);
    report.max_abs_error = std::max(report.max_abs_error, drift.max_abs_error);
    report.max_rel_error = std::max(report.max_rel_error, drift.max_rel_error);
    report.outputs.push_back(std::move(drift));
  }
  return report;
}

absl::StatusOr<DriftReport> DriftChecker::CheckGraphModule(const IRModule& snapshot) const {
  KILN_ASSIGN_OR_RETURN(CompileResult compiled, Lower(snapshot));
  const bool native = options_.codegen.has_value();
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> outputs, Run(compiled, native));
  return Compare(native ? "native" : "interp", outputs);
}

absl::StatusOr<std::vector<LayerDrift>> DriftChecker::AttributeLayers(const IRModule& before,
                                                                      const IRModule& after) const {
  KILN_ASSIGN_OR_RETURN(LayerValues old_values, CollectLayerValues(before));
  KILN_ASSIGN_OR_RETURN(LayerValues new_values, CollectLayerValues(after));
  std::vector<Expr> old_extra, new_extra;
  std::vector<std::string> keys;
  int64_t bytes = 0;
  for (const std::string& key : new_values.order) {
    auto old_it = old_values.by_key.find(key);
    if (old_it == old_values.by_key.end()) continue;
    const Expr& now = new_values.by_key.at(key);
    const auto* old_type = old_it->second->checked_type.as<TensorTypeNode>();
    const auto* new_type = now->checked_type.as<TensorTypeNode>();
    if (old_type->dtype != new_type->dtype || old_type->shape.size() != new_type->shape.size()) continue;
    int64_t elements = 1;
    bool same = true;
    for (size_t d = 0; d < new_type->shape.size(); ++d) {
      same &= old_type->shape[d].value == new_type->shape[d].value;
      elements *= new_type->shape[d].value;
    }
    if (!same) continue;
    bytes += 2 * elements * DataTypeBytes(new_type->dtype);
    if (bytes > kMaxCheckedBytes || static_cast<int>(keys.size()) == kMaxAttributedLayers) break;
    keys.push_back(key);
    old_extra.push_back(old_it->second);
    new_extra.push_back(now);
  }
  std::vector<LayerDrift> drifts;
  if (keys.empty()) return drifts;
  KILN_ASSIGN_OR_RETURN(CompileResult old_compiled, Lower(WithExtraOutputs(before, old_extra)));
  const bool native = options_.codegen.has_value();
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> old_outputs, Run(old_compiled, native));
  KILN_ASSIGN_OR_RETURN(CompileResult new_compiled, Lower(WithExtraOutputs(after, new_extra)));
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> new_outputs, Run(new_compiled, native));
  const size_t first = new_outputs.size() - keys.size();
  if (old_outputs.size() != new_outputs.size() || new_outputs.size() < keys.size()) {
    return absl::InternalError("the widened modules returned different numbers of values");
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    LayerDrift drift;
    drift.layers = new_values.layers.at(keys[i]);
    std::tie(drift.max_abs_error, drift.max_rel_error) =
        ErrorsBetween(new_outputs[first + i], old_outputs[first + i]);
    drifts.push_back(std::move(drift));
  }
  return drifts;
}

absl::StatusOr<DriftReport> DriftChecker::CheckLoopModule(const IRModule& snapshot,
                                                          const IRModule& final_graph) {
  if (!loop_base_.has_value() || !loop_base_graph_.same_as(final_graph)) {
    CompileOptions lowering = options_;
    lowering.loop_pipeline = "";  // the lowered module as the loop passes receive it
    lowering.codegen.reset();     // each snapshot gets its own code
    CompileFailure failure;
    absl::StatusOr<CompileResult> base = CompileModule(final_graph, lowering, &failure);
    if (!base.ok()) return base.status();
    loop_base_ = *std::move(base);
    loop_base_graph_ = final_graph;
  }
  CompileResult run = *loop_base_;
  run.lowered->module = snapshot;
  // A model too large for the interpreter: the snapshot compiled as it is (code generation
  // takes loop IR at any stage of the loop pipeline).
  const bool native = options_.codegen.has_value();
  if (native) {
    absl::StatusOr<codegen::NativeModule> code = codegen::EmitNative(*run.lowered, *options_.codegen);
    if (!code.ok()) {
      return absl::Status(code.status().code(),
                          absl::StrCat("compiling the loop module for the numerics check: ",
                                       code.status().message()));
    }
    run.native = *std::move(code);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> outputs, Run(run, native));
  return Compare(native ? "native" : "interp", outputs);
}

absl::StatusOr<DriftReport> DriftChecker::CheckNative(const CompileResult& compiled) const {
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> outputs, Run(compiled, /*native=*/true));
  return Compare("native", outputs);
}

bool ParseDriftBackend(std::string_view name, DriftBackend* backend) {
  if (name.empty() || name == "auto") {
    *backend = DriftBackend::kAuto;
  } else if (name == "interp") {
    *backend = DriftBackend::kInterpreter;
  } else if (name == "native") {
    *backend = DriftBackend::kNative;
  } else {
    return false;
  }
  return true;
}

absl::Status DriftTracker::EnsureChecker(const IRModule& imported) {
  if (!tried_) {
    tried_ = true;
    absl::StatusOr<std::unique_ptr<DriftChecker>> checker =
        DriftChecker::Create(imported, seed_, base_, inputs_, backend_);
    if (checker.ok()) {
      checker_ = *std::move(checker);
    } else {
      creation_ = checker.status();
    }
  }
  return creation_;
}

absl::StatusOr<DriftReport> DriftTracker::AfterGraphPass(const PassEvent& event) {
  if (!tried_) {
    if (!event.ir_before) {
      return absl::InternalError("the first graph pass's event carries no input module");
    }
    KILN_RETURN_IF_ERROR(EnsureChecker(event.ir_before));
  }
  KILN_RETURN_IF_ERROR(creation_);
  if (!event.ir_after) return absl::InternalError("the pass's event carries no output module");
  last_graph_ = event.ir_after;
  if (!event.changed && last_.has_value()) return *last_;
  absl::StatusOr<DriftReport> report = checker_->CheckGraphModule(event.ir_after);
  if (report.ok()) last_ = *report;
  return report;
}

absl::StatusOr<DriftReport> DriftTracker::AfterLoopPass(const PassEvent& event) {
  KILN_RETURN_IF_ERROR(creation_);
  if (checker_ == nullptr || !last_graph_) {
    return absl::FailedPreconditionError("no graph pass was followed before the loop passes");
  }
  if (!event.ir_after) return absl::InternalError("the pass's event carries no output module");
  if (!event.changed && last_loop_.has_value()) return *last_loop_;
  absl::StatusOr<DriftReport> report = checker_->CheckLoopModule(event.ir_after, last_graph_);
  if (report.ok()) last_loop_ = *report;
  return report;
}

absl::StatusOr<std::vector<LayerDrift>> DriftTracker::Attribute(const PassEvent& event,
                                                                double rtol, double atol) {
  KILN_RETURN_IF_ERROR(creation_);
  if (checker_ == nullptr || !event.ir_before || !event.ir_after) {
    return absl::FailedPreconditionError("the pass's event carries no modules to compare");
  }
  KILN_ASSIGN_OR_RETURN(std::vector<LayerDrift> layers,
                        checker_->AttributeLayers(event.ir_before, event.ir_after));
  std::vector<LayerDrift> over;
  for (LayerDrift& layer : layers) {
    if (layer.max_rel_error > rtol && layer.max_abs_error > atol) over.push_back(std::move(layer));
  }
  return over;
}

absl::StatusOr<DriftReport> DriftTracker::AfterNative(const CompileResult& compiled) {
  KILN_RETURN_IF_ERROR(EnsureChecker(compiled.imported));
  return checker_->CheckNative(compiled);
}

absl::StatusOr<KernelPrecisionReport> DriftTracker::KernelPrecision(const CompileResult& compiled) {
  KILN_RETURN_IF_ERROR(EnsureChecker(compiled.imported));
  return checker_->CheckKernels(compiled, base_.codegen.has_value() && base_.codegen->fast_math);
}

namespace {

class GraphPassChecker final : public PassObserver {
 public:
  GraphPassChecker(std::shared_ptr<DriftTracker> tracker, double rtol, double atol,
                   bool loop_passes, std::function<void(const PassDrift&)> on_pass)
      : tracker_(std::move(tracker)), rtol_(rtol), atol_(atol), loop_passes_(loop_passes),
        on_pass_(std::move(on_pass)) {}

  void OnPassEvent(const PassEvent& event) override {
    if (event.kind != PassEvent::Kind::kAfter) return;
    if (event.stage != PassStage::kGraph && (event.stage != PassStage::kLoop || !loop_passes_)) {
      return;
    }
    PassDrift drift;
    drift.index = event.index;
    drift.pass = event.pass;
    drift.stage = PassStageName(event.stage);
    if (event.stage == PassStage::kLoop) {
      drift.report = tracker_->AfterLoopPass(event);
      on_pass_(drift);
      return;
    }
    drift.report = tracker_->AfterGraphPass(event);
    if (drift.report.ok() && !attributed_) {
      bool over = false;
      for (const OutputDrift& output : drift.report->outputs) {
        over |= output.max_rel_error > rtol_ && output.max_abs_error > atol_;
      }
      if (over) {
        attributed_ = true;
        absl::StatusOr<std::vector<LayerDrift>> layers = tracker_->Attribute(event, rtol_, atol_);
        if (layers.ok()) {
          drift.layers = *std::move(layers);
        } else {
          drift.layers_status = layers.status();
        }
      }
    }
    on_pass_(drift);
  }

 private:
  std::shared_ptr<DriftTracker> tracker_;
  double rtol_, atol_;
  bool loop_passes_;
  std::function<void(const PassDrift&)> on_pass_;
  bool attributed_ = false;
};

// The observer and the instrument that feeds it, kept alive together.
class GraphPassInstrument final : public PassInstrument {
 public:
  GraphPassInstrument(std::unique_ptr<GraphPassChecker> checker, ObserverOptions observe)
      : PassInstrument("NumericDrift"), checker_(std::move(checker)), inner_(checker_.get(), observe) {}
  absl::Status RunBeforePass(const IRModule& module, const PassInvocation& pass) override {
    return inner_.RunBeforePass(module, pass);
  }
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override {
    return inner_.RunAfterPass(module, pass);
  }
  absl::Status RunAfterPassFailed(const IRModule& before, const PassInvocation& pass,
                                  const absl::Status& error) override {
    return inner_.RunAfterPassFailed(before, pass, error);
  }

 private:
  std::unique_ptr<GraphPassChecker> checker_;
  ObserverInstrument inner_;
};

}  // namespace

std::shared_ptr<DriftTracker> CheckEveryPass(
    CompileOptions* options, uint64_t seed, std::vector<loop::HostTensor> inputs, double rtol,
    double atol, bool loop_passes, std::function<void(const PassDrift&)> on_pass,
    DriftBackend backend) {
  auto tracker = std::make_shared<DriftTracker>(seed, *options, std::move(inputs), backend);
  ObserverOptions observe;
  observe.include_ir_before = true;
  observe.include_ir_after = true;
  observe.include_sequential = false;
  options->instruments.push_back(std::make_shared<GraphPassInstrument>(
      std::make_unique<GraphPassChecker>(tracker, rtol, atol, loop_passes, std::move(on_pass)),
      observe));
  return tracker;
}

}  // namespace kiln::driver
