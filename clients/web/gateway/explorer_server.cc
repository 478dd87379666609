// ExplorerServer: civetweb serving the web app's files, and /api/... translated into kilnd calls.
#include "clients/web/gateway/explorer_server.h"

#include <civetweb.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "clients/cli/proto_json.h"
#include "clients/cli/unified_diff.h"
#include "clients/web/gateway/compile_options.h"
#include "clients/web/gateway/http_exchange.h"
#include "clients/web/gateway/model_inputs.h"
#include "clients/web/gateway/model_store.h"
#include "clients/web/gateway/trace_store.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace kiln::explorer {

struct ExplorerServer::State {
  explicit State(ExplorerOptions options_in)
      : options(std::move(options_in)),
        channel(cli::MakeChannel(options.kilnd)),
        stub(v1::Compiler::NewStub(channel)),
        models(options.max_model_bytes),
        traces(options.max_trace_bytes) {}

  ExplorerOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Compiler::Stub> stub;
  ModelStore models;
  TraceStore traces;
};

namespace {

using State = ExplorerServer::State;

absl::Status FromGrpc(const grpc::Status& status, const std::string& server) {
  if (status.ok()) return absl::OkStatus();
  std::string message = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message = absl::StrCat("kilnd at ", server, " is unavailable: ", message);
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

std::unique_ptr<grpc::ClientContext> CallContext(const State& state) {
  cli::Connection connection = state.options.kilnd;
  connection.deadline = std::chrono::system_clock::now() + state.options.call_deadline;
  return cli::MakeContext(connection);
}

// The example models: *.onnx in the examples directory and its immediate subdirectories,
// named by their path relative to it ("small_cnn/model.onnx").
std::vector<std::pair<std::string, int64_t>> ListExamples(const std::string& dir) {
  std::vector<std::pair<std::string, int64_t>> examples;
  if (dir.empty()) return examples;
  std::error_code error;
  namespace fs = std::filesystem;
  auto add = [&](const fs::path& path) {
    if (path.extension() == ".onnx" && fs::is_regular_file(path, error)) {
      examples.emplace_back(path.lexically_relative(dir).generic_string(),
                            static_cast<int64_t>(fs::file_size(path, error)));
    }
  };
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_directory(error)) {
      for (const fs::directory_entry& inner : fs::directory_iterator(entry.path(), error)) {
        add(inner.path());
      }
    } else {
      add(entry.path());
    }
  }
  std::sort(examples.begin(), examples.end());
  return examples;
}

std::shared_ptr<const StoredModel> ModelOf(State& state, const HttpExchange& exchange,
                                           absl::Status* error) {
  std::optional<std::string> id = exchange.Query("model");
  if (!id || id->empty()) {
    *error = absl::InvalidArgumentError("model: the id of an uploaded model is required");
    return nullptr;
  }
  std::shared_ptr<const StoredModel> model = state.models.Get(*id);
  if (model == nullptr) {
    *error = absl::NotFoundError(absl::StrCat("model '", id->substr(0, 32),
                                              "' is not held by the gateway (upload it again)"));
  }
  return model;
}

void HandleHealth(State& state, HttpExchange& exchange) {
  v1::ListPassesRequest request;
  v1::ListPassesResponse response;
  auto context = CallContext(state);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status status = state.stub->ListPasses(context.get(), request, &response);
  nlohmann::json body = {{"kilnd", state.options.kilnd.server}, {"serving", status.ok()}};
  if (!status.ok()) body["message"] = FromGrpc(status, state.options.kilnd.server).message();
  exchange.SendJson(200, body.dump());
}

void HandlePasses(State& state, HttpExchange& exchange) {
  v1::ListPassesResponse response;
  auto context = CallContext(state);
  grpc::Status status = state.stub->ListPasses(context.get(), v1::ListPassesRequest(), &response);
  if (!status.ok()) return exchange.SendError(FromGrpc(status, state.options.kilnd.server));
  exchange.SendJson(200, cli::ToJsonLine(response));
}

void HandleExamples(State& state, HttpExchange& exchange) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, bytes] : ListExamples(state.options.examples_dir)) {
    list.push_back({{"name", name}, {"bytes", bytes}});
  }
  exchange.SendJson(200, list.dump());
}

// POST /api/models?name=FILE (the body is the model) or ?example=NAME.
void HandleUpload(State& state, HttpExchange& exchange) {
  std::string name, bytes;
  if (std::optional<std::string> example = exchange.Query("example")) {
    bool listed = false;
    for (const auto& [known, size] : ListExamples(state.options.examples_dir)) listed |= known == *example;
    if (!listed) {
      return exchange.SendError(absl::NotFoundError(
          absl::StrCat("no example named '", example->substr(0, 64), "'")));
    }
    std::ifstream file(std::filesystem::path(state.options.examples_dir) / *example,
                       std::ios::binary);
    std::ostringstream content;
    content << file.rdbuf();
    name = std::filesystem::path(*example).filename() == "model.onnx"
               ? absl::StrCat(std::filesystem::path(*example).parent_path().filename().string(),
                              ".onnx")
               : std::filesystem::path(*example).filename().string();
    bytes = content.str();
  } else {
    name = exchange.Query("name").value_or("model.onnx").substr(0, 128);
    absl::StatusOr<std::string> body = exchange.ReadBody(state.options.max_upload_bytes);
    if (!body.ok()) return exchange.SendError(body.status());
    bytes = *std::move(body);
  }
  if (bytes.empty()) return exchange.SendError(absl::InvalidArgumentError("the model is empty"));
  if (static_cast<int64_t>(bytes.size()) > state.models.max_bytes()) {
    return exchange.SendError(absl::ResourceExhaustedError(
        absl::StrCat("the model is ", bytes.size(), " bytes; the gateway keeps at most ",
                     state.models.max_bytes(), " (--max-model-bytes)")));
  }
  // Graph IR text goes to kilnd as it is; an ONNX file is read here first, so a file that is no
  // model is refused at upload and the page learns which inputs need shapes.
  nlohmann::json inputs = nlohmann::json::array();
  if (!name.ends_with(".kir") && !name.ends_with(".txt")) {
    absl::StatusOr<nlohmann::json> read = OnnxModelInputs(bytes);
    if (!read.ok()) return exchange.SendError(read.status());
    inputs = *std::move(read);
  }
  absl::StatusOr<std::shared_ptr<const StoredModel>> model =
      state.models.Put(std::move(name), std::move(bytes));
  if (!model.ok()) return exchange.SendError(model.status());
  nlohmann::json body = {{"model", (*model)->id},
                         {"name", (*model)->name},
                         {"bytes", (*model)->bytes.size()},
                         {"inputs", std::move(inputs)}};
  exchange.SendJson(200, body.dump());
}

std::set<std::string> LayersOf(const v1::PassEvent& event) {
  std::set<std::string> layers;
  for (const v1::SpanEntry& entry : event.span_table()) {
    layers.insert(entry.sources().begin(), entry.sources().end());
  }
  return layers;
}

// GET /api/trace?model=ID&...: the pass trace as server-sent events. `start` names the trace
// (its id fetches each pass's IR later), one `pass` per event (its header, and the ONNX layers
// that appeared in or vanished from the IR since the last pass of its stage), then `done` with
// the compile's summary, or `error`.
void HandleTrace(State& state, HttpExchange& exchange) {
  absl::Status error;
  std::shared_ptr<const StoredModel> model = ModelOf(state, exchange, &error);
  if (model == nullptr) return exchange.SendError(error);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromQuery(exchange);
  if (!options.ok()) return exchange.SendError(options.status());

  v1::TraceRequest request;
  *request.mutable_compile() = MakeCompileRequest(*model, *options);
  request.set_ir_after(true);
  request.set_format(v1::TEXT);
  request.set_check_numerics(options->check_numerics);
  // 0 on the wire means kilnd's default: an exact check asks for the least positive tolerance.
  if (options->numerics_rtol) request.set_numerics_rtol(std::max(*options->numerics_rtol, 1e-300));
  if (options->numerics_atol) request.set_numerics_atol(std::max(*options->numerics_atol, 1e-300));
  for (const std::string& stage : options->stages) request.add_stages(stage);

  std::shared_ptr<Trace> trace =
      state.traces.Create(model->id, KilnTraceCommand(*model, *options),
                          KilnOptPrefix(*model, *options));
  exchange.StartEvents();
  nlohmann::json start = {{"trace", trace->id()}, {"model", model->id},
                          {"command", trace->command()}};
  if (!exchange.Event("start", start.dump())) return;

  auto context = CallContext(state);
  std::unique_ptr<grpc::ClientReader<v1::PassEvent>> reader =
      state.stub->TracePass(context.get(), request);
  std::map<std::string, std::set<std::string>> last_layers;  // by stage
  v1::PassEvent event;
  v1::CompileResponse summary;
  nlohmann::json native_numerics;
  bool client_gone = false;
  while (reader->Read(&event)) {
    if (event.has_summary()) summary = event.summary();
    if (event.pass_name().empty()) {  // the summary event (with the native code's drift)
      if (event.has_numerics()) native_numerics = nlohmann::json::parse(cli::ToJsonLine(event.numerics()));
      continue;
    }
    v1::PassEvent kept = trace->Add(event);
    nlohmann::json header = {{"index", kept.index()},
                             {"stage", kept.stage()},
                             {"pass_name", kept.pass_name()},
                             {"depth", kept.depth()},
                             {"changed", kept.changed()},
                             {"duration_ms", kept.duration_ms()},
                             {"calls", kept.calls()},
                             {"calls_with_span", kept.calls_with_span()},
                             {"has_ir", !kept.ir_after().empty()},
                             {"ir_omitted", kept.ir_omitted()}};
    if (kept.has_numerics()) header["numerics"] = nlohmann::json::parse(cli::ToJsonLine(kept.numerics()));
    if (kept.span_table_size() > 0) {
      std::set<std::string> layers = LayersOf(kept);
      std::set<std::string>& before = last_layers[kept.stage()];
      nlohmann::json added = nlohmann::json::array(), gone = nlohmann::json::array();
      for (const std::string& layer : layers) {
        if (!before.count(layer)) added.push_back(layer);
      }
      for (const std::string& layer : before) {
        if (!layers.count(layer)) gone.push_back(layer);
      }
      header["layers_added"] = std::move(added);
      header["layers_gone"] = std::move(gone);
      before = std::move(layers);
    }
    if (!exchange.Event("pass", header.dump())) {
      client_gone = true;  // the page closed the stream: stop the compile
      context->TryCancel();
      break;
    }
  }
  grpc::Status status = reader->Finish();
  trace->Finish();
  if (client_gone) return;
  if (!status.ok()) {
    absl::Status failure = FromGrpc(status, state.options.kilnd.server);
    nlohmann::json body = {{"code", absl::StatusCodeToString(failure.code())},
                           {"message", std::string(failure.message())}};
    exchange.Event("error", body.dump());
    return;
  }
  nlohmann::json done = {{"trace", trace->id()},
                         {"native_numerics", native_numerics.is_null()
                                                 ? nlohmann::json()
                                                 : native_numerics},
                         {"compile_id", summary.compile_id()},
                         {"passes", summary.pass_timings_size()},
                         {"diagnostics", nlohmann::json::parse(cli::ToJsonLine(summary))["diagnostics"]}};
  exchange.Event("done", done.dump());
}

// GET /api/traces/T/passes/N: the IR after pass N, the IR before it (after the last pass of the
// same stage), their unified diff, the layers in it, and the kiln-opt command that prints it.
// GET /api/traces/T/events.ndjson: every event as one JSON line.
void HandleTraceData(State& state, HttpExchange& exchange) {
  std::vector<std::string> parts = absl::StrSplit(exchange.path(), '/', absl::SkipEmpty());
  // ["api", "traces", T, ...]
  if (parts.size() < 4) return exchange.SendError(absl::NotFoundError("no such trace resource"));
  std::shared_ptr<Trace> trace = state.traces.Get(parts[2]);
  if (trace == nullptr) {
    return exchange.SendError(absl::NotFoundError(absl::StrCat(
        "trace '", parts[2].substr(0, 32), "' is not held by the gateway (run it again)")));
  }
  if (parts.size() == 4 && parts[3] == "events.ndjson") {
    std::string lines;
    for (const v1::PassEvent& event : trace->Events()) {
      absl::StrAppend(&lines, cli::ToJsonLine(event), "\n");
    }
    return exchange.SendBytes(200, "application/x-ndjson", lines,
                              absl::StrCat("kiln-trace-", trace->id(), ".ndjson"));
  }
  int64_t index = -1;
  if (parts.size() != 5 || parts[3] != "passes" || !absl::SimpleAtoi(parts[4], &index)) {
    return exchange.SendError(absl::NotFoundError("no such trace resource"));
  }
  v1::PassEvent event;
  std::string before, before_label;
  if (!trace->EventWithPrevious(index, &event, &before, &before_label)) {
    return exchange.SendError(
        absl::NotFoundError(absl::StrCat("trace ", trace->id(), " has no pass ", index)));
  }
  const int occurrence = trace->Occurrence(index);
  const std::string after_label = absl::StrCat("after #", event.index(), " ", event.pass_name());
  nlohmann::json layers = nlohmann::json::array();
  for (const std::string& layer : LayersOf(event)) layers.push_back(layer);
  nlohmann::json body = {
      {"index", event.index()},
      {"stage", event.stage()},
      {"pass_name", event.pass_name()},
      {"changed", event.changed()},
      {"ir_omitted", event.ir_omitted()},
      {"ir_after", event.ir_after()},
      {"ir_before", before},
      {"before_label", before_label},
      {"after_label", after_label},
      {"diff", before.empty() || event.ir_after().empty()
                   ? std::string()
                   : cli::UnifiedDiff(before, event.ir_after(), before_label, after_label)},
      {"layers", std::move(layers)}};
  // LLVM's passes run inside code generation, where kiln-opt's --print-after does not reach:
  // their IR comes from a trace of that stage, dumped one file per pass.
  std::string file_name = event.pass_name();  // as `kiln trace --dump-dir` names it
  for (char& c : file_name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  body["command"] =
      event.stage() == "llvm"
          ? absl::StrCat(trace->command(), " --stages=llvm '--pass-filter=", event.pass_name(),
                         "' --dump-dir=llvm-ir   # llvm-ir/",
                         absl::StrFormat("%04d", event.index()), "-llvm-", file_name, ".after.ll")
          : KilnOptCommand(trace->kiln_opt_prefix(), event.stage(), event.pass_name(), occurrence);
  exchange.SendJson(200, body.dump());
}

// GET /api/diff?a=T1:N1&b=T2:N2: the unified diff from the IR after pass N1 of trace T1 to the IR
// after pass N2 of trace T2 (two traces of one model side by side: O2 against O3, ...).
void HandleCrossDiff(State& state, HttpExchange& exchange) {
  struct Side {
    v1::PassEvent event;
    std::string label;
    std::string command;  // what prints this side's IR
  };
  auto side = [&](const char* name, Side* out) -> absl::Status {
    std::string spec = exchange.Query(name).value_or("");
    std::vector<std::string> parts = absl::StrSplit(spec, ':');
    int64_t index = -1;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &index)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": expected TRACE:PASS_INDEX, got '",
                                                     spec.substr(0, 64), "'"));
    }
    std::shared_ptr<Trace> trace = state.traces.Get(parts[0]);
    std::string ignored_ir, ignored_label;
    if (trace == nullptr || !trace->EventWithPrevious(index, &out->event, &ignored_ir,
                                                      &ignored_label)) {
      return absl::NotFoundError(absl::StrCat(name, ": no pass ", index, " in trace '",
                                              parts[0].substr(0, 32), "'"));
    }
    out->label = absl::StrCat(trace->id(), " after #", index, " ", out->event.pass_name());
    out->command = out->event.stage() == "llvm"
                       ? absl::StrCat(trace->command(), " --stages=llvm '--pass-filter=",
                                      out->event.pass_name(), "'")
                       : KilnOptCommand(trace->kiln_opt_prefix(), out->event.stage(),
                                        out->event.pass_name(), trace->Occurrence(index));
    return absl::OkStatus();
  };
  Side a, b;
  if (absl::Status status = side("a", &a); !status.ok()) return exchange.SendError(status);
  if (absl::Status status = side("b", &b); !status.ok()) return exchange.SendError(status);
  nlohmann::json body = {{"a_label", a.label},
                         {"b_label", b.label},
                         {"a_command", a.command},
                         {"b_command", b.command},
                         {"diff", cli::UnifiedDiff(a.event.ir_after(), b.event.ir_after(),
                                                   a.label, b.label)}};
  exchange.SendJson(200, body.dump());
}

// GET /api/schedule?model=ID&selector=S&...: the kernel's schedule record, every step verified,
// with the loop-IR diff of each step from the one before.
void HandleSchedule(State& state, HttpExchange& exchange) {
  absl::Status error;
  std::shared_ptr<const StoredModel> model = ModelOf(state, exchange, &error);
  if (model == nullptr) return exchange.SendError(error);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromQuery(exchange);
  if (!options.ok()) return exchange.SendError(options.status());
  std::string selector = exchange.Query("selector").value_or("");
  if (selector.empty() || selector.size() > 256) {
    return exchange.SendError(absl::InvalidArgumentError(
        "selector: a kernel name, a call index or an ONNX layer name is required"));
  }
  v1::ScheduleRecordRequest request;
  *request.mutable_compile() = MakeCompileRequest(*model, *options);
  request.set_selector(selector);
  request.set_verify(true);
  v1::ScheduleRecord record;
  auto context = CallContext(state);
  grpc::Status status = state.stub->GetScheduleRecord(context.get(), request, &record);
  if (!status.ok()) return exchange.SendError(FromGrpc(status, state.options.kilnd.server));
  nlohmann::json steps = nlohmann::json::array();
  for (int i = 0; i < record.steps_size(); ++i) {
    const v1::ScheduleStep& step = record.steps(i);
    nlohmann::json arguments = std::vector<std::string>(step.arguments().begin(), step.arguments().end());
    nlohmann::json item = {{"step", step.step()},
                           {"primitive", step.primitive()},
                           {"arguments", std::move(arguments)},
                           {"loop_ir", step.loop_ir()},
                           {"diff", i == 0 ? std::string()
                                           : cli::UnifiedDiff(record.steps(i - 1).loop_ir(),
                                                              step.loop_ir(),
                                                              absl::StrCat("step ", i - 1),
                                                              absl::StrCat("step ", i))}};
    if (step.has_verified()) item["verified"] = step.verified();
    steps.push_back(std::move(item));
  }
  nlohmann::json spans = std::vector<std::string>(record.spans().begin(), record.spans().end());
  nlohmann::json body = {{"kernel", record.kernel()},
                         {"command", KilnScheduleCommand(*model, *options, selector)},
                         {"spans", std::move(spans)},
                         {"compile_id", record.compile_id()},
                         {"steps", std::move(steps)}};
  exchange.SendJson(200, body.dump());
}

// GET /api/artifact?model=ID&kind=assembly&...: one artifact of the compile, as a download.
void HandleArtifact(State& state, HttpExchange& exchange) {
  absl::Status error;
  std::shared_ptr<const StoredModel> model = ModelOf(state, exchange, &error);
  if (model == nullptr) return exchange.SendError(error);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromQuery(exchange);
  if (!options.ok()) return exchange.SendError(options.status());
  std::string kind_name = exchange.Query("kind").value_or("");
  v1::ArtifactKind kind;
  std::string upper = kind_name;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  if (!v1::ArtifactKind_Parse(upper, &kind) || kind == v1::ARTIFACT_KIND_UNSPECIFIED) {
    return exchange.SendError(absl::InvalidArgumentError(absl::StrCat(
        "kind: unknown artifact '", kind_name.substr(0, 32),
        "' (graph_ir_text, graph_ir_json, loop_ir, metadata_json, object, assembly, llvm_ir, "
        "header, provenance_json, shared_library)")));
  }
  v1::CompileRequest request = MakeCompileRequest(*model, *options);
  request.add_artifacts(kind);
  v1::CompileResponse response;
  auto context = CallContext(state);
  grpc::Status status = state.stub->Compile(context.get(), request, &response);
  if (!status.ok()) return exchange.SendError(FromGrpc(status, state.options.kilnd.server));
  if (response.artifacts_size() == 0) {
    return exchange.SendError(absl::InternalError("kilnd returned no artifact"));
  }
  const v1::Artifact& artifact = response.artifacts(0);
  const bool binary = kind == v1::OBJECT || kind == v1::SHARED_LIBRARY;
  exchange.SendBytes(200, binary ? "application/octet-stream" : "text/plain; charset=utf-8",
                     artifact.content(), artifact.name());
}

int Dispatch(mg_connection* connection, void* data) {
  State& state = *static_cast<State*>(data);
  HttpExchange exchange(connection);
  const std::string& path = exchange.path();
  const bool get = exchange.method() == "GET";
  if (get && path == "/api/health") {
    HandleHealth(state, exchange);
  } else if (get && path == "/api/passes") {
    HandlePasses(state, exchange);
  } else if (get && path == "/api/examples") {
    HandleExamples(state, exchange);
  } else if (exchange.method() == "POST" && path == "/api/models") {
    HandleUpload(state, exchange);
  } else if (get && path == "/api/trace") {
    HandleTrace(state, exchange);
  } else if (get && absl::StartsWith(path, "/api/traces/")) {
    HandleTraceData(state, exchange);
  } else if (get && path == "/api/diff") {
    HandleCrossDiff(state, exchange);
  } else if (get && path == "/api/schedule") {
    HandleSchedule(state, exchange);
  } else if (get && path == "/api/artifact") {
    HandleArtifact(state, exchange);
  } else {
    exchange.SendError(absl::NotFoundError(
        absl::StrCat("no API ", exchange.method(), " ", path.substr(0, 128))));
  }
  return 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ExplorerServer>> ExplorerServer::Start(ExplorerOptions options) {
  if (options.web_root.empty() || !std::filesystem::is_directory(options.web_root)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--web-root '", options.web_root, "' is not a directory"));
  }
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  std::unique_ptr<ExplorerServer> server(new ExplorerServer());
  server->state_ = std::make_unique<State>(options);
  const std::string threads = absl::StrCat(std::max(2, options.threads));
  const char* mg_options[] = {"listening_ports", options.listen.c_str(),
                              "document_root", options.web_root.c_str(),
                              "num_threads", threads.c_str(),
                              "enable_directory_listing", "no",
                              "request_timeout_ms", "30000",
                              nullptr};
  mg_callbacks callbacks{};
  server->context_ = mg_start(&callbacks, nullptr, mg_options);
  if (server->context_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  mg_set_request_handler(server->context_, "/api/", Dispatch, server->state_.get());
  mg_server_port ports[4];
  int count = mg_get_server_ports(server->context_, 4, ports);
  if (count < 1) return absl::InternalError("civetweb reports no listening port");
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  server->address_ = absl::StrCat(host, ":", ports[0].port);
  return server;
}

ExplorerServer::~ExplorerServer() {
  if (context_ != nullptr) mg_stop(context_);
}

}  // namespace kiln::explorer
