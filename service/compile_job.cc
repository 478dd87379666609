#include "service/compile_job.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/driver/driver.h"
#include "engine/driver/numeric_drift.h"
#include "engine/driver/onnx_tensor.h"
#include "engine/driver/schedule_records.h"
#include "engine/ir/span.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "service/artifacts.h"
#include "service/compile_request.h"

namespace kiln::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

namespace {

void FillSummary(const std::string& compile_id, const CachedCompile& compile,
                 v1::CompileResponse* response) {
  response->set_compile_id(compile_id);
  response->set_kiln_version(KilnVersion());
  for (const v1::PassTiming& timing : compile.pass_timings) *response->add_pass_timings() = timing;
  for (const PassDiagnostic& diagnostic : compile.result.report.diagnostics) {
    v1::Diagnostic* out = response->add_diagnostics();
    out->set_severity(DiagnosticSeverityName(diagnostic.severity));
    out->set_pass_name(diagnostic.pass);
    out->set_message(diagnostic.message);
    for (const std::string& name : SpanSourceNames(diagnostic.span)) out->add_spans(name);
  }
  *response->mutable_signature() = ModelSignatureOf(compile.result);
}

// The printed IR of a pass event: graph text or loop script, or JSON.
std::string PrintEventIr(const IRModule& module, PassStage stage, v1::IrFormat format) {
  if (format == v1::JSON) return PrintModuleJson(module);
  PrintOptions options;
  if (stage != PassStage::kGraph) options.format = PrintOptions::Format::kScript;
  return PrintModule(module, options);
}

void FillSpanTable(const IRModule& module, v1::PassEvent* event) {
  for (NodeSources& node : ModuleSpanTable(module)) {
    v1::SpanEntry* entry = event->add_span_table();
    entry->set_function(std::move(node.function));
    entry->set_node(node.node);
    for (std::string& source : node.sources) entry->add_sources(std::move(source));
  }
}

// `is_cancelled` stops a long verification (a client gone, a deadline).
grpc::Status FillScheduleRecord(const v1::ScheduleRecordRequest& request,
                                const CachedCompile& compile,
                                const std::function<bool()>& is_cancelled,
                                v1::ScheduleRecord* response) {
  if (!compile.result.lowered) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the compile was not lowered");
  }
  driver::ScheduleRecordOptions options;
  options.verify = request.verify();
  options.first_only = true;
  options.is_cancelled = is_cancelled;
  absl::StatusOr<std::vector<driver::KernelScheduleRecord>> records =
      driver::ScheduleRecords(*compile.result.lowered, request.selector(), options);
  if (!records.ok()) return ToGrpcStatus(records.status());
  const lower::LoweredKernel& kernel = *records->front().kernel;
  const std::vector<lower::ScheduleRecordStep>* steps = &records->front().steps;
  response->set_kernel(kernel.name);
  for (const std::string& name : SpanSourceNames(kernel.span)) response->add_spans(name);
  PrintOptions script;
  script.format = PrintOptions::Format::kScript;
  for (const lower::ScheduleRecordStep& step : *steps) {
    v1::ScheduleStep* out = response->add_steps();
    out->set_step(step.step);
    out->set_primitive(step.primitive);
    for (const std::string& argument : step.arguments) out->add_arguments(argument);
    out->set_loop_ir(PrintNode(step.loop_ir, script));
    if (request.verify()) out->set_verified(step.verified);
  }
  return grpc::Status::OK;
}

// A compile's progress as it runs on a worker: timings, metrics and, for
// TracePass, the events its client asked for.
class Job final : public PassObserver {
 public:
  Job(Metrics* metrics, const v1::TraceRequest* trace, EventSink* stream,
      int64_t max_event_bytes = 0)
      : metrics_(metrics), trace_(trace), stream_(stream), max_event_bytes_(max_event_bytes) {}

  ObserverOptions observer_options() const {
    ObserverOptions options;
    options.include_sequential = false;  // containers would arrive after their children
    if (trace_ != nullptr) {
      // The numerics check runs the module before the first pass (as imported) and after each.
      options.include_ir_before = trace_->ir_before() || trace_->check_numerics();
      options.include_ir_after = trace_->ir_after() || trace_->check_numerics();
      options.include_span_stats = true;
    }
    return options;
  }

  // With check_numerics: follows the compile's graph passes (its limits and cancellation), on
  // the request's inputs when it sends them (a bad one is InvalidArgument naming it).
  absl::Status TrackDrift(const driver::CompileOptions& options) {
    if (trace_ == nullptr || !trace_->check_numerics()) return absl::OkStatus();
    std::vector<loop::HostTensor> inputs;
    for (int i = 0; i < trace_->numerics_inputs_size(); ++i) {
      // Each is at most the request's own bytes, which the server's message limit bounds.
      absl::StatusOr<loop::HostTensor> input = driver::HostTensorFromOnnx(
          trace_->numerics_inputs(i), options.import.max_tensor_elements);
      if (!input.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("numerics_inputs[", i, "]: ", input.status().message()));
      }
      inputs.push_back(*std::move(input));
    }
    driver::DriftBackend backend;
    if (!driver::ParseDriftBackend(trace_->numerics_backend(), &backend)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "numerics_backend is '", trace_->numerics_backend().substr(0, 32),
          "'; expected auto, interp or native"));
    }
    drift_.emplace(trace_->numerics_seed(), options, std::move(inputs), backend);
    return absl::OkStatus();
  }
  // The native code's drift for the summary event (none without check_numerics).
  void FillNativeDrift(const driver::CompileResult& compiled, v1::PassEvent* summary) {
    if (!drift_.has_value()) return;
    if (!compiled.native.has_value()) {
      summary->mutable_numerics()->set_error("the compile generated no native code");
      return;
    }
    v1::NumericDrift* numerics = summary->mutable_numerics();
    FillDrift(drift_->AfterNative(compiled), numerics);
    absl::StatusOr<driver::KernelPrecisionReport> kernels = drift_->KernelPrecision(compiled);
    if (!kernels.ok()) {
      numerics->set_kernels_error(std::string(kernels.status().message()));
      return;
    }
    numerics->set_kernels_reference(kernels->reference);
    numerics->set_kernels_not_compared(kernels->kernels_not_compared);
    for (const driver::KernelDrift& drift : kernels->kernels) {
      v1::KernelDrift* kernel = numerics->add_kernels();
      kernel->set_kernel(drift.kernel);
      for (const std::string& layer : drift.layers) kernel->add_layers(layer);
      kernel->set_max_abs_error(drift.max_abs_error);
      kernel->set_max_rel_error(drift.max_rel_error);
    }
  }

  void OnPassEvent(const PassEvent& event) override {
    if (event.kind == PassEvent::Kind::kBefore) return;
    metrics_->ObservePass(event.stage, event.pass, event.duration_ms / 1e3);
    if (event.kind != PassEvent::Kind::kAfter) return;
    next_index_ = std::max(next_index_, event.index + 1);
    v1::PassTiming timing;
    timing.set_index(event.index);
    timing.set_stage(PassStageName(event.stage));
    timing.set_pass_name(event.pass);
    timing.set_depth(event.depth);
    timing.set_duration_ms(event.duration_ms);
    timing.set_changed(event.changed);
    timings_.push_back(timing);
    // The drift is followed through every pass, shown or not (a loop-only trace still needs the
    // graph passes' modules).
    v1::NumericDrift numerics;
    const bool checked = TrackDrift(event, &numerics);
    if (stream_ != nullptr && Wanted(event)) Send(event, checked ? &numerics : nullptr);
  }

  std::vector<v1::PassTiming> TakeTimings() { return std::move(timings_); }
  // One past the last pass index reported (the summary event's index).
  int64_t next_index() const { return next_index_; }
  // GetScheduleRecord: on a cache miss, lower only the kernels this selector
  // may pick (the partial result is not cached).
  void set_kernel_selector(std::string selector) { kernel_selector_ = std::move(selector); }
  const std::string& kernel_selector() const { return kernel_selector_; }
  bool streams() const { return stream_ != nullptr; }
  // The TracePass client is gone or stopped reading: the job should stop.
  bool reader_gone() const { return stream_ != nullptr && stream_->reader_gone(); }

 private:
  bool Wanted(const PassEvent& event) const {
    if (trace_->only_changed() && !event.changed) return false;
    if (!trace_->stages().empty()) {
      bool stage_listed = false;
      for (const std::string& stage : trace_->stages()) {
        stage_listed |= stage == PassStageName(event.stage);
      }
      if (!stage_listed) return false;
    }
    if (trace_->pass_filter().empty()) return true;
    for (const std::string& part : trace_->pass_filter()) {
      if (absl::StrContains(event.pass, part)) return true;
    }
    return false;
  }

  // With check_numerics, the drift after a graph or loop pass into `out`; false for other events.
  bool TrackDrift(const PassEvent& event, v1::NumericDrift* out) {
    if (!drift_.has_value()) return false;
    if (event.stage == PassStage::kGraph) {
      absl::StatusOr<driver::DriftReport> report = drift_->AfterGraphPass(event);
      FillDrift(report, out);
      if (report.ok()) AttributeFirstExcess(event, *report, out);
      return true;
    }
    if (event.stage == PassStage::kLoop) {
      FillDrift(drift_->AfterLoopPass(event), out);
      return true;
    }
    return false;
  }

  void Send(const PassEvent& event, const v1::NumericDrift* numerics) {
    v1::PassEvent out;
    out.set_index(event.index);
    out.set_stage(PassStageName(event.stage));
    out.set_pass_name(event.pass);
    out.set_depth(event.depth);
    out.set_changed(event.changed);
    out.set_duration_ms(event.duration_ms);
    if (event.spans) {
      out.set_calls(event.spans->calls);
      out.set_calls_with_span(event.spans->calls_with_span);
    }
    if (numerics != nullptr) *out.mutable_numerics() = *numerics;
    if (event.ir_before && trace_->ir_before()) {
      out.set_ir_before(PrintEventIr(event.ir_before, event.stage, trace_->format()));
    }
    if (event.ir_after && trace_->ir_after()) {
      out.set_ir_after(PrintEventIr(event.ir_after, event.stage, trace_->format()));
      FillSpanTable(event.ir_after, &out);
    }
    if (!event.backend_ir_after.empty() && trace_->ir_after()) {
      out.set_ir_after(event.backend_ir_after);  // LLVM IR
    }
    if (static_cast<int64_t>(out.ByteSizeLong()) > max_event_bytes_) {
      // One event must fit the buffer the reader drains: the IR goes.
      out.clear_ir_before();
      out.clear_ir_after();
      out.clear_span_table();
      out.set_ir_omitted(true);
    }
    metrics_->TraceEvent();
    stream_->Push(std::move(out));  // false: the reader is gone; reader_gone() says so
  }

  // At the first pass whose drift passes the request's tolerance, the layers it changed.
  void AttributeFirstExcess(const PassEvent& event, const driver::DriftReport& report,
                            v1::NumericDrift* out) {
    const double rtol = trace_->numerics_rtol() > 0 ? trace_->numerics_rtol() : 1e-5;
    const double atol = trace_->numerics_atol() > 0 ? trace_->numerics_atol() : 1e-6;
    bool over = false;
    for (const driver::OutputDrift& output : report.outputs) {
      over |= output.max_rel_error > rtol && output.max_abs_error > atol;
    }
    if (!over || attributed_) return;
    attributed_ = true;
    absl::StatusOr<std::vector<driver::LayerDrift>> layers = drift_->Attribute(event, rtol, atol);
    if (!layers.ok()) {
      out->set_layers_error(std::string(layers.status().message()));
      return;
    }
    for (size_t i = 0; i < layers->size() && i < 16; ++i) {
      v1::LayerDrift* layer = out->add_layers();
      for (const std::string& name : (*layers)[i].layers) layer->add_layers(name);
      layer->set_max_abs_error((*layers)[i].max_abs_error);
      layer->set_max_rel_error((*layers)[i].max_rel_error);
    }
  }

  static void FillDrift(const absl::StatusOr<driver::DriftReport>& report, v1::NumericDrift* out) {
    if (!report.ok()) {
      out->set_error(std::string(report.status().message()));
      return;
    }
    out->set_backend(report->backend);
    out->set_max_abs_error(report->max_abs_error);
    out->set_max_rel_error(report->max_rel_error);
    for (const driver::OutputDrift& drift : report->outputs) {
      v1::OutputDrift* output = out->add_outputs();
      output->set_name(drift.name);
      output->set_max_abs_error(drift.max_abs_error);
      output->set_max_rel_error(drift.max_rel_error);
    }
  }

  Metrics* metrics_;
  const v1::TraceRequest* trace_;
  std::optional<driver::DriftTracker> drift_;
  bool attributed_ = false;  // the first pass over the tolerance has had its layers named
  EventSink* stream_;
  int64_t max_event_bytes_;
  std::vector<v1::PassTiming> timings_;
  std::string kernel_selector_;
  int64_t next_index_ = 0;
};

struct Outcome {
  grpc::Status status;
  std::string compile_id;
  std::shared_ptr<const CachedCompile> compile;
};

// The compile of `request`, from the cache or compiled now (and cached). A
// `job` with an event sink always compiles (its events are the point).
Outcome CompileNow(const JobEnvironment& environment, JobControl& call,
                   const v1::CompileRequest& request, Job& job) {
  Outcome outcome;
  outcome.compile_id = CompileId(request);
  auto stopped = [&](const std::string& what) {
    return call.PastDeadline()
               ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                              absl::StrCat("the deadline expired ", what))
               : grpc::Status(grpc::StatusCode::CANCELLED,
                              absl::StrCat("the call was cancelled ", what));
  };
  // A job that waited in the queue past its client does not start.
  if (call.ShouldStop() || job.reader_gone()) {
    outcome.status = stopped("before the compile started");
    return outcome;
  }
  if (!job.streams()) {
    if (auto hit = environment.cache->Find(outcome.compile_id)) {
      environment.metrics->CacheHit();
      outcome.compile = std::move(hit);
      return outcome;
    }
  }
  environment.metrics->CacheMiss();
  absl::StatusOr<driver::CompileOptions> options = ToCompileOptions(request);
  if (!options.ok()) {
    outcome.status = ToGrpcStatus(options.status());
    return outcome;
  }
  options->limits = environment.limits;
  options->is_cancelled = [&call, &job] { return job.reader_gone() || call.ShouldStop(); };
  if (absl::Status drift = job.TrackDrift(*options); !drift.ok()) {
    outcome.status = ToGrpcStatus(drift);
    return outcome;
  }
  options->instruments.push_back(std::make_shared<ObserverInstrument>(&job, job.observer_options()));
  const bool partial = !job.kernel_selector().empty();
  if (partial) options->only_kernels_named_by = job.kernel_selector();
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<driver::CompileResult> result = absl::UnknownError("not run");
  // An exception must not reach the worker thread (it would end kilnd).
  try {
    result = RunCompile(request, *options);
  } catch (const std::bad_alloc&) {
    result = absl::ResourceExhaustedError("the compile ran out of memory");
  } catch (const std::exception& e) {
    result = absl::InternalError(absl::StrCat("the compile threw: ", e.what()));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.ok()) {
    auto entry = std::make_shared<CachedCompile>();
    entry->bytes = EstimateBytes(*result, static_cast<int64_t>(request.onnx().size() +
                                                               request.graph_ir_text().size()));
    entry->result = std::move(*result);
    entry->pass_timings = job.TakeTimings();
    if (!partial) environment.cache->Insert(outcome.compile_id, entry);
    outcome.compile = std::move(entry);
  } else if (result.status().code() == absl::StatusCode::kCancelled) {
    outcome.status = stopped(absl::StrCat("during the compile (", result.status().message(), ")"));
  } else {
    outcome.status = ToGrpcStatus(result.status());
  }
  environment.metrics->ObserveCompile(outcome.status.error_code(), seconds);
  return outcome;
}

}  // namespace

grpc::Status RunCompileJob(const JobEnvironment& environment, JobControl& control,
                           const v1::CompileRequest& request, v1::CompileResponse* response) {
  Job job(environment.metrics, nullptr, nullptr);
  Outcome outcome = CompileNow(environment, control, request, job);
  if (outcome.status.ok()) {
    FillSummary(outcome.compile_id, *outcome.compile, response);
    if (absl::Status added = AddArtifacts(request, outcome.compile->result, outcome.compile_id, response);
        !added.ok()) {
      outcome.status = ToGrpcStatus(added);
      response->Clear();
    }
  }
  control.Describe(outcome.compile_id, request.name());
  return outcome.status;
}

grpc::Status RunTraceJob(const JobEnvironment& environment, JobControl& control,
                         const v1::TraceRequest& request, EventSink& sink) {
  Job job(environment.metrics, &request, &sink, environment.max_event_bytes);
  Outcome outcome = CompileNow(environment, control, request.compile(), job);
  control.Describe(outcome.compile_id, request.compile().name());
  if (!outcome.status.ok()) return outcome.status;
  v1::PassEvent summary;
  summary.set_index(job.next_index());
  FillSummary(outcome.compile_id, *outcome.compile, summary.mutable_summary());
  job.FillNativeDrift(outcome.compile->result, &summary);
  if (sink.reader_gone() || !sink.Push(std::move(summary))) {
    return control.PastDeadline()
               ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                              "the deadline passed before the client read the trace")
               : grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading the trace");
  }
  return grpc::Status::OK;
}

grpc::Status RunScheduleRecordJob(const JobEnvironment& environment, JobControl& call,
                                  const v1::ScheduleRecordRequest& request,
                                  v1::ScheduleRecord* response) {
  auto is_cancelled = [&call] { return call.ShouldStop(); };
  auto fill = [&](const Outcome& outcome) {
    grpc::Status filled = FillScheduleRecord(request, *outcome.compile, is_cancelled, response);
    if (filled.error_code() == grpc::StatusCode::CANCELLED && call.PastDeadline()) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "the deadline expired while expanding the schedule record");
    }
    return filled;
  };
  // A cache hit has every kernel; a miss lowers only those the selector may
  // pick. An unknown selector is answered by a full compile, so the error
  // lists every kernel.
  Job job(environment.metrics, nullptr, nullptr);
  job.set_kernel_selector(request.selector());
  Outcome outcome = CompileNow(environment, call, request.compile(), job);
  grpc::Status status = outcome.status;
  if (status.ok()) status = fill(outcome);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND && !request.selector().empty()) {
    Job full_job(environment.metrics, nullptr, nullptr);
    outcome = CompileNow(environment, call, request.compile(), full_job);
    status = outcome.status;
    response->Clear();
    if (status.ok()) status = fill(outcome);
  }
  response->set_compile_id(outcome.compile_id);
  call.Describe(outcome.compile_id, request.compile().name());
  return status;
}

}  // namespace kiln::service
