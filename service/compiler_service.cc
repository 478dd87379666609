#include "service/compiler_service.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <mutex>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/driver/driver.h"
#include "engine/ir/span.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "service/artifacts.h"
#include "service/compile_request.h"
#include "service/rpc_call.h"
#include "service/shared_cache_runner.h"
#include "service/trace_stream.h"

namespace kiln::service {

// A unary call: its job fills the response, then Done() finishes it.
class CompilerService::UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  UnaryCall(Rpc rpc, grpc::CallbackServerContext* context, absl::Duration default_deadline,
            Metrics* metrics)
      : call_(rpc, context, default_deadline, metrics) {}
  RpcCall& call() { return call_; }
  // The last thing done with the call: it may be gone once this returns.
  void Done(grpc::Status status) {
    status_ = ForClient(std::move(status));
    call_.Record(status_);
    Finish(status_);
  }
  void OnDone() override {
    call_.End();
    delete this;
  }

 private:
  RpcCall call_;
  grpc::Status status_;
};

CompilerService::CompilerService(ServiceOptions options, Metrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      cache_(options_.cache_bytes),
      runner_(options_.runner != nullptr
                  ? options_.runner
                  : std::make_shared<InProcessJobRunner>(
                        JobEnvironment{metrics, &cache_, options_.compile_limits,
                                       options_.max_event_bytes})),
      pool_(options_.workers, options_.queue_depth,
            [metrics](int queued, int busy) { metrics->SetLoad(queued, busy); }) {
  driver::RegisteredPasses();
  metrics->SetCapacity(options_.workers, options_.queue_depth);
  if (options_.shared_cache != nullptr) {
    // Workers in other processes keep their own caches: only an in-process one is asked first.
    runner_ = std::make_shared<SharedCacheJobRunner>(
        runner_, options_.shared_cache, options_.shared_ttl, metrics,
        options_.runner == nullptr ? &cache_ : nullptr);
  }
}

CompilerService::~CompilerService() { Shutdown(); }

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

grpc::Status CompilerService::Admit(const grpc::CallbackServerContext* context) {
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    if (draining_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "kilnd is shutting down");
  }
  grpc::Status authorized = Authorize(context);
  if (!authorized.ok()) return authorized;
  std::lock_guard<std::mutex> lock(calls_mutex_);
  if (draining_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "kilnd is shutting down");
  ++calls_in_flight_;
  return grpc::Status::OK;
}

void CompilerService::CallEnded() {
  std::lock_guard<std::mutex> lock(calls_mutex_);
  --calls_in_flight_;
  calls_changed_.notify_all();
}

grpc::Status CompilerService::Authorize(const grpc::CallbackServerContext* context) const {
  if (options_.auth_tokens.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server requires `authorization: Bearer <token>` metadata");
  }
  if (!options_.auth_tokens.Accepts(std::string_view(it->second.data(), it->second.size()))) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the bearer token is not valid");
  }
  return grpc::Status::OK;
}

bool CompilerService::Submit(std::function<void()> work) {
  return pool_.TrySubmit([work = std::move(work)] { work(); });
}

grpc::Status CompilerService::QueueFull(grpc::CallbackServerContext* context) const {
  context->AddTrailingMetadata("grpc-retry-pushback-ms", "1000");
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat("all ", options_.workers, " workers are busy and ",
                                   options_.queue_depth, " jobs are queued; retry later"));
}

void CompilerService::Launch(RpcCall& call, int64_t request_bytes,
                             const std::function<void(grpc::Status)>& refuse,
                             std::function<void()> work) {
  grpc::Status admitted = Admit(call.context());
  if (!admitted.ok()) return refuse(admitted);
  call.set_on_end([this] { CallEnded(); });
  metrics_->ObserveRequestBytes(static_cast<double>(request_bytes));
  call.ArmDeadline();
  if (!Submit(std::move(work))) refuse(QueueFull(call.context()));
}

grpc::ServerUnaryReactor* CompilerService::Compile(grpc::CallbackServerContext* context,
                                                   const v1::CompileRequest* request,
                                                   v1::CompileResponse* response) {
  auto* reactor = new UnaryCall(Rpc::kCompile, context, options_.default_deadline, metrics_);
  Launch(reactor->call(), static_cast<int64_t>(request->ByteSizeLong()),
         [reactor](grpc::Status refused) { reactor->Done(std::move(refused)); },
         [this, reactor, request, response] {
           reactor->Done(runner_->Compile(reactor->call(), *request, response));
         });
  return reactor;
}

grpc::ServerWriteReactor<v1::PassEvent>* CompilerService::TracePass(
    grpc::CallbackServerContext* context, const v1::TraceRequest* request) {
  auto* stream = new TraceStream(context, options_.default_deadline, metrics_,
                                 options_.max_event_bytes);
  Launch(stream->call(), static_cast<int64_t>(request->ByteSizeLong()),
         [stream](grpc::Status refused) { stream->JobDone(std::move(refused)); },
         [this, stream, request] {
           stream->JobDone(runner_->Trace(stream->call(), *request, *stream));
         });
  return stream;
}

grpc::ServerUnaryReactor* CompilerService::GetScheduleRecord(
    grpc::CallbackServerContext* context, const v1::ScheduleRecordRequest* request,
    v1::ScheduleRecord* response) {
  auto* reactor =
      new UnaryCall(Rpc::kGetScheduleRecord, context, options_.default_deadline, metrics_);
  Launch(reactor->call(), static_cast<int64_t>(request->ByteSizeLong()),
         [reactor](grpc::Status refused) { reactor->Done(std::move(refused)); },
         [this, reactor, request, response] {
           reactor->Done(runner_->ScheduleRecord(reactor->call(), *request, response));
         });
  return reactor;
}

grpc::ServerUnaryReactor* CompilerService::ListPasses(grpc::CallbackServerContext* context,
                                                      const v1::ListPassesRequest*,
                                                      v1::ListPassesResponse* response) {
  auto* reactor = new UnaryCall(Rpc::kListPasses, context, options_.default_deadline, metrics_);
  grpc::Status admitted = Admit(context);
  if (!admitted.ok()) {
    reactor->Done(admitted);
    return reactor;
  }
  reactor->call().set_on_end([this] { CallEnded(); });
  // The registry is small and in memory: answered on the RPC thread.
  for (const PassRegistration* entry : driver::RegisteredPasses().List()) {
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
  reactor->Done(grpc::Status::OK);
  return reactor;
}

}  // namespace kiln::service
