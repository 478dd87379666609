#include "service/compiler_service.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/driver/driver.h"
#include "engine/ir/span.h"
#include "engine/lower/kernel_selector.h"
#include "engine/lower/schedule_record.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_event.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "nlohmann/json.hpp"
#include "service/artifacts.h"
#include "service/compile_request.h"
#include "service/event_channel.h"

namespace kiln::service {
namespace {

using Clock = std::chrono::system_clock;

grpc::Status ToGrpcStatus(const absl::Status& status) {
  // absl's codes are gRPC's codes, number for number.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// Absent (no deadline) is the far future; kilnd's default applies then.
Clock::time_point EffectiveDeadline(const grpc::ServerContext& context,
                                    absl::Duration default_deadline) {
  Clock::time_point fallback = Clock::now() + absl::ToChronoNanoseconds(default_deadline);
  return std::min(context.deadline(), fallback);
}

void FillSummary(const std::string& compile_id, const CachedCompile& compile,
                 v1::CompileResponse* response) {
  response->set_compile_id(compile_id);
  response->set_kiln_version(KilnVersion());
  for (const v1::PassTiming& timing : compile.pass_timings) *response->add_pass_timings() = timing;
  for (const PassDiagnostic& diagnostic : compile.result.diagnostics) {
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

void LogRequest(Rpc rpc, const grpc::Status& status, const std::string& compile_id,
                const std::string& model_name, double seconds, const std::string& peer) {
  nlohmann::json line = {{"rpc", RpcName(rpc)},
                         {"compile_id", compile_id},
                         {"model", model_name},
                         {"status", StatusCodeName(status.error_code())},
                         {"duration_ms", std::round(seconds * 1e6) / 1e3},
                         {"peer", peer}};
  if (!status.ok()) line["message"] = status.error_message().substr(0, 200);
  // Names from a model may be any bytes: invalid UTF-8 is replaced, not thrown.
  std::fprintf(stderr, "%s\n",
               line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// `is_cancelled` stops a long verification (a client gone, a deadline).
grpc::Status FillScheduleRecord(const v1::ScheduleRecordRequest& request,
                                const CachedCompile& compile,
                                const std::function<bool()>& is_cancelled,
                                v1::ScheduleRecord* response) {
  if (!compile.result.lowered) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the compile was not lowered");
  }
  absl::StatusOr<std::vector<const lower::LoweredKernel*>> kernels =
      lower::SelectKernels(*compile.result.lowered, request.selector());
  if (!kernels.ok()) return ToGrpcStatus(kernels.status());
  const lower::LoweredKernel& kernel = *kernels->front();
  if (request.verify()) {
    // Verification runs every step on random tensors of the kernel's
    // parameter shapes (several copies): refuse what would exhaust memory.
    constexpr int64_t kMaxVerifyBytes = int64_t{256} << 20;
    int64_t bytes = 0;
    for (const te::Tensor& param : kernel.schedule_params) {
      int64_t elements = DataTypeBytes(param.dtype());
      for (int64_t d : param.shape()) {
        if (__builtin_mul_overflow(elements, d, &elements)) elements = kMaxVerifyBytes + 1;
      }
      bytes = std::min(bytes + elements, kMaxVerifyBytes + 1);
    }
    if (bytes > kMaxVerifyBytes) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("verifying kernel ", kernel.name, " needs more than ",
                                       kMaxVerifyBytes >> 20,
                                       " MiB of parameters; ask without verify"));
    }
  }
  absl::StatusOr<std::vector<lower::ScheduleRecordStep>> steps =
      lower::ExpandScheduleRecord(kernel, /*seed=*/0, request.verify(), [&] {
        loop::InterpreterOptions interpreter;
        interpreter.is_cancelled = is_cancelled;
        return interpreter;
      }());
  if (!steps.ok()) return ToGrpcStatus(steps.status());
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

}  // namespace

// A compile's progress as it runs on a worker: timings, metrics and, for
// TracePass, the events its client asked for.
class CompilerService::Job final : public PassObserver {
 public:
  Job(Metrics* metrics, const v1::TraceRequest* trace, EventChannel* channel)
      : metrics_(metrics), trace_(trace), channel_(channel) {}

  ObserverOptions observer_options() const {
    ObserverOptions options;
    options.include_sequential = false;  // containers would arrive after their children
    if (trace_ != nullptr) {
      options.include_ir_before = trace_->ir_before();
      options.include_ir_after = trace_->ir_after();
      options.include_span_stats = true;
    }
    return options;
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
    if (channel_ != nullptr && Wanted(event)) Send(event);
  }

  std::vector<v1::PassTiming> TakeTimings() { return std::move(timings_); }
  // Asked while a Push waits for a slow reader (see EventChannel::Push).
  void set_stop_check(std::function<bool()> stop) { stop_check_ = std::move(stop); }
  // One past the last pass index reported (the summary event's index).
  int64_t next_index() const { return next_index_; }
  // GetScheduleRecord: on a cache miss, lower only the kernels this selector
  // may pick (the partial result is not cached).
  void set_kernel_selector(std::string selector) { kernel_selector_ = std::move(selector); }
  const std::string& kernel_selector() const { return kernel_selector_; }
  // The TracePass client stopped reading: the job should stop too.
  void MarkReaderGone() { reader_gone_ = true; }
  bool reader_gone() const { return reader_gone_; }
  EventChannel* channel() const { return channel_; }

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

  void Send(const PassEvent& event) {
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
    if (event.ir_before) out.set_ir_before(PrintEventIr(event.ir_before, event.stage, trace_->format()));
    if (event.ir_after) {
      out.set_ir_after(PrintEventIr(event.ir_after, event.stage, trace_->format()));
      FillSpanTable(event.ir_after, &out);
    }
    metrics_->TraceEvent();
    if (!channel_->Push(std::move(out), stop_check_)) reader_gone_ = true;
  }

  Metrics* metrics_;
  const v1::TraceRequest* trace_;
  EventChannel* channel_;
  std::vector<v1::PassTiming> timings_;
  std::string kernel_selector_;
  std::function<bool()> stop_check_;
  int64_t next_index_ = 0;
  std::atomic<bool> reader_gone_{false};
};

struct CompilerService::Outcome {
  grpc::Status status;
  std::string compile_id;
  std::shared_ptr<const CachedCompile> compile;
};

// A compile's outcome, set once by whoever finishes it (a worker, or the
// RPC thread for cache hits and refusals).
class CompilerService::Completion {
 public:
  void Finish(Outcome outcome) {
    std::lock_guard<std::mutex> lock(mutex_);
    outcome_ = std::move(outcome);
    done_ = true;
    finished_.notify_all();
  }
  Outcome Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_; });
    return outcome_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  Outcome outcome_;
};

CompilerService::CompilerService(ServiceOptions options, Metrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      cache_(options_.cache_bytes),
      pool_(options_.workers, options_.queue_depth,
            [metrics](int queued, int busy) { metrics->SetLoad(queued, busy); }) {
  driver::EnsureBuiltinPassesRegistered();
}

CompilerService::~CompilerService() { Shutdown(); }

// One RPC from start to finish: counts it in flight (or refuses it with
// UNAVAILABLE while draining), authorizes it, and at the end records its
// metrics and its log line.
class CompilerService::CallGuard {
 public:
  CallGuard(CompilerService* service, Rpc rpc, const grpc::ServerContext* context,
            int64_t request_bytes)
      : service_(service), rpc_(rpc), context_(context), start_(std::chrono::steady_clock::now()) {
    if (rpc != Rpc::kListPasses) {
      service->metrics_->ObserveRequestBytes(static_cast<double>(request_bytes));
    }
    {
      std::lock_guard<std::mutex> lock(service->calls_mutex_);
      if (service->draining_) {
        status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "kilnd is shutting down");
        return;
      }
      ++service->calls_in_flight_;
      counted_ = true;
    }
    status_ = service->Authorize(context);
  }
  ~CallGuard() {
    if (!counted_) return;
    std::lock_guard<std::mutex> lock(service_->calls_mutex_);
    --service_->calls_in_flight_;
    service_->calls_changed_.notify_all();
  }
  // OK, or why the call may not proceed.
  const grpc::Status& status() const { return status_; }

  // Records the call's result; returns `status` for the handler to return.
  grpc::Status Finish(grpc::Status status, const std::string& compile_id,
                      const std::string& model_name) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    service_->metrics_->ObserveRequest(rpc_, status.error_code());
    LogRequest(rpc_, status, compile_id, model_name, seconds, context_->peer());
    return status;
  }

 private:
  CompilerService* service_;
  Rpc rpc_;
  const grpc::ServerContext* context_;
  std::chrono::steady_clock::time_point start_;
  bool counted_ = false;
  grpc::Status status_;
};

void CompilerService::StartDraining() {
  std::lock_guard<std::mutex> lock(calls_mutex_);
  draining_ = true;
}

bool CompilerService::WaitForIdle(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(calls_mutex_);
  return calls_changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                                 [&] { return calls_in_flight_ == 0; });
}

void CompilerService::Shutdown() { pool_.Shutdown(); }

grpc::Status CompilerService::Authorize(const grpc::ServerContext* context) const {
  if (options_.auth_tokens.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end()) {
    std::string value(it->second.data(), it->second.size());
    if (absl::StartsWith(value, "Bearer ") && options_.auth_tokens.count(value.substr(7)) > 0) {
      return grpc::Status::OK;
    }
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the bearer token is not valid");
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "this server requires `authorization: Bearer <token>` metadata");
}

std::shared_ptr<CompilerService::Completion> CompilerService::StartCompile(
    grpc::ServerContext* context, const v1::CompileRequest& request, Job* job) {
  auto completion = std::make_shared<Completion>();
  Outcome outcome;
  outcome.compile_id = CompileId(request);
  auto finish_now = [&](Outcome now) {
    if (job->channel() != nullptr) job->channel()->Close();
    completion->Finish(std::move(now));
    return completion;
  };
  if (job->channel() == nullptr) {
    if (auto hit = cache_.Find(outcome.compile_id)) {
      metrics_->CacheHit();
      outcome.compile = std::move(hit);
      return finish_now(std::move(outcome));
    }
  }
  metrics_->CacheMiss();
  absl::StatusOr<driver::CompileOptions> parsed = ToCompileOptions(request);
  if (!parsed.ok()) {
    outcome.status = ToGrpcStatus(parsed.status());
    return finish_now(std::move(outcome));
  }
  auto options = std::make_shared<driver::CompileOptions>(std::move(*parsed));
  const Clock::time_point deadline = EffectiveDeadline(*context, options_.default_deadline);
  // Past the deadline the call itself is cancelled too, so an RPC thread
  // blocked writing to a client that stopped reading is released.
  auto past_deadline = [context, deadline] {
    if (Clock::now() < deadline) return false;
    context->TryCancel();
    return true;
  };
  options->is_cancelled = [context, job, past_deadline] {
    return job->reader_gone() || context->IsCancelled() || past_deadline();
  };
  job->set_stop_check([context, past_deadline] { return context->IsCancelled() || past_deadline(); });
  options->instruments.push_back(std::make_shared<ObserverInstrument>(job, job->observer_options()));
  const bool partial = !job->kernel_selector().empty();
  if (partial) {
    options->lower_only_kernels = [selector = job->kernel_selector()](
                                      const lower::KernelCandidate& kernel) {
      return lower::KernelMayMatch(selector, kernel);
    };
  }

  // The caller waits for `completion` before `context`, `request` and `job`
  // go away, so the job may use them.
  const std::string compile_id = outcome.compile_id;
  bool accepted = pool_.TrySubmit([this, completion, options, deadline, compile_id, &request,
                                   job, partial] {
    auto start = std::chrono::steady_clock::now();
    // A job that waited in the queue past its client does not start.
    absl::StatusOr<driver::CompileResult> result =
        absl::CancelledError("the compile was cancelled before it started");
    if (!options->is_cancelled()) {
      // An exception must not reach the worker thread (it would end kilnd).
      try {
        result = RunCompile(request, *options);
      } catch (const std::bad_alloc&) {
        result = absl::ResourceExhaustedError("the compile ran out of memory");
      } catch (const std::exception& e) {
        result = absl::InternalError(absl::StrCat("the compile threw: ", e.what()));
      }
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Outcome finished;
    finished.compile_id = compile_id;
    if (result.ok()) {
      auto entry = std::make_shared<CachedCompile>();
      entry->bytes = EstimateBytes(*result, static_cast<int64_t>(request.onnx().size() +
                                                                 request.graph_ir_text().size()));
      entry->result = std::move(*result);
      entry->pass_timings = job->TakeTimings();
      if (!partial) cache_.Insert(compile_id, entry);
      finished.compile = std::move(entry);
    } else if (result.status().code() == absl::StatusCode::kCancelled &&
               Clock::now() >= deadline) {
      finished.status = grpc::Status(
          grpc::StatusCode::DEADLINE_EXCEEDED,
          absl::StrCat("the deadline expired during the compile (",
                       std::string(result.status().message()), ")"));
    } else {
      finished.status = ToGrpcStatus(result.status());
    }
    metrics_->ObserveCompile(finished.status.error_code(), seconds);
    if (job->channel() != nullptr) job->channel()->Close();
    completion->Finish(std::move(finished));
  });
  if (!accepted) {
    context->AddTrailingMetadata("grpc-retry-pushback-ms", "1000");
    outcome.status = grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("all ", options_.workers, " workers are busy and ", options_.queue_depth,
                     " compiles are queued; retry later"));
    return finish_now(std::move(outcome));
  }
  return completion;
}

grpc::Status CompilerService::RunOnWorker(grpc::ServerContext* context,
                                          const std::function<grpc::Status()>& work) {
  auto completion = std::make_shared<Completion>();
  bool accepted = pool_.TrySubmit([completion, &work] {
    Outcome outcome;
    try {
      outcome.status = work();
    } catch (const std::exception& e) {
      outcome.status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
    }
    completion->Finish(std::move(outcome));
  });
  if (!accepted) {
    context->AddTrailingMetadata("grpc-retry-pushback-ms", "1000");
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat("all ", options_.workers, " workers are busy and ",
                                     options_.queue_depth, " jobs are queued; retry later"));
  }
  return completion->Wait().status;
}

grpc::Status CompilerService::Compile(grpc::ServerContext* context,
                                      const v1::CompileRequest* request,
                                      v1::CompileResponse* response) {
  CallGuard call(this, Rpc::kCompile, context, static_cast<int64_t>(request->ByteSizeLong()));
  if (!call.status().ok()) return call.Finish(call.status(), "", request->name());
  Job job(metrics_, nullptr, nullptr);
  Outcome outcome = StartCompile(context, *request, &job)->Wait();
  if (outcome.status.ok()) {
    FillSummary(outcome.compile_id, *outcome.compile, response);
    AddArtifacts(*request, outcome.compile->result, outcome.compile_id, response);
  }
  return call.Finish(outcome.status, outcome.compile_id, request->name());
}

grpc::Status CompilerService::TracePass(grpc::ServerContext* context,
                                        const v1::TraceRequest* request,
                                        grpc::ServerWriter<v1::PassEvent>* writer) {
  CallGuard call(this, Rpc::kTracePass, context, static_cast<int64_t>(request->ByteSizeLong()));
  const std::string& name = request->compile().name();
  if (!call.status().ok()) return call.Finish(call.status(), "", name);
  EventChannel channel(options_.max_event_bytes);
  Job job(metrics_, request, &channel);
  std::shared_ptr<Completion> completion = StartCompile(context, request->compile(), &job);
  // Each event goes out as soon as its pass finishes; a failed write means
  // the client is gone, and the job stops at its next pass boundary. The
  // job closes the channel when it finishes.
  while (std::optional<v1::PassEvent> event = channel.Pop()) {
    if (!writer->Write(*event)) {
      job.MarkReaderGone();
      channel.Close();
    }
  }
  Outcome outcome = completion->Wait();
  grpc::Status status = outcome.status;
  if (status.ok() && (job.reader_gone() || context->IsCancelled())) {
    status = grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the trace");
  } else if (status.ok()) {
    v1::PassEvent last;
    last.set_index(job.next_index());
    FillSummary(outcome.compile_id, *outcome.compile, last.mutable_summary());
    writer->Write(last);
  }
  return call.Finish(status, outcome.compile_id, name);
}

grpc::Status CompilerService::GetScheduleRecord(grpc::ServerContext* context,
                                                const v1::ScheduleRecordRequest* request,
                                                v1::ScheduleRecord* response) {
  CallGuard call(this, Rpc::kGetScheduleRecord, context,
                 static_cast<int64_t>(request->ByteSizeLong()));
  const std::string& name = request->compile().name();
  if (!call.status().ok()) return call.Finish(call.status(), "", name);
  // A cache hit has every kernel; a miss lowers only those the selector may
  // pick. An unknown selector is answered by a full compile, so the error
  // lists every kernel.
  Job job(metrics_, nullptr, nullptr);
  job.set_kernel_selector(request->selector());
  Outcome outcome = StartCompile(context, request->compile(), &job)->Wait();
  // Expanding (and verifying) the record is compile work too: on a worker.
  const Clock::time_point deadline = EffectiveDeadline(*context, options_.default_deadline);
  auto is_cancelled = [context, deadline] {
    return context->IsCancelled() || Clock::now() >= deadline;
  };
  auto fill = [&] {
    grpc::Status filled = RunOnWorker(context, [&] {
      return FillScheduleRecord(*request, *outcome.compile, is_cancelled, response);
    });
    if (filled.error_code() == grpc::StatusCode::CANCELLED && Clock::now() >= deadline) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "the deadline expired while verifying the schedule record");
    }
    return filled;
  };
  grpc::Status status = outcome.status;
  if (status.ok()) status = fill();
  if (status.error_code() == grpc::StatusCode::NOT_FOUND && !request->selector().empty()) {
    Job full_job(metrics_, nullptr, nullptr);
    outcome = StartCompile(context, request->compile(), &full_job)->Wait();
    status = outcome.status;
    response->Clear();
    if (status.ok()) status = fill();
  }
  response->set_compile_id(outcome.compile_id);
  return call.Finish(status, outcome.compile_id, name);
}

grpc::Status CompilerService::ListPasses(grpc::ServerContext* context,
                                         const v1::ListPassesRequest*,
                                         v1::ListPassesResponse* response) {
  CallGuard call(this, Rpc::kListPasses, context, 0);
  if (!call.status().ok()) return call.Finish(call.status(), "", "");
  for (const PassRegistration* entry : PassRegistry::Global().List()) {
    v1::PassDescription* pass = response->add_passes();
    pass->set_name(entry->info.name);
    pass->set_stage(PassStageName(entry->info.stage));
    pass->set_opt_level(entry->info.opt_level);
    for (const std::string& required : entry->info.required) pass->add_required(required);
    pass->set_summary(entry->summary);
    for (const PassOptionSpec& option : entry->options) {
      v1::ConfigOption* out = pass->add_options();
      out->set_name(option.name);
      out->set_type(ConfigTypeName(option.type));
      out->set_doc(option.doc);
    }
  }
  for (const PassConfigOption* option : PassConfigRegistry::Global().List()) {
    v1::ConfigOption* out = response->add_config_options();
    out->set_name(option->name);
    out->set_type(ConfigTypeName(option->type));
    out->set_doc(option->doc);
  }
  return call.Finish(grpc::Status::OK, "", "");
}

}  // namespace kiln::service
