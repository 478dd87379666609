// kilnd end to end: a real server process on a loopback port, called through
// the generated stubs, as a build farm or a dashboard would call it. Expected
// values come from the test's own models (layer names, shapes) and from
// independent tools (coreutils sha256sum, openssl).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <signal.h>
#include <sstream>
#include <thread>

#include "grpcpp/generic/generic_stub.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/kilnd_process.h"
#include "tests/integration/test_models.h"

namespace kiln::testing {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<grpc::ClientContext> Context(int deadline_ms = 60000) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + milliseconds(deadline_ms));
  return context;
}

v1::CompileRequest SmallRequest(float scale = 1.0f) {
  v1::CompileRequest request;
  request.set_onnx(SmallModel(scale));
  request.set_name("small");
  return request;
}

// grpc.health.v1.Health/Check by hand (Debian ships no C++ stubs for it):
// request field 1 = service name; response field 1 = status (1 SERVING).
int HealthStatus(const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  grpc::GenericStub stub(channel);
  std::string request = std::string(1, '\x0a') + static_cast<char>(service.size()) + service;
  grpc::Slice slice(request);
  grpc::ByteBuffer send(&slice, 1), receive;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + milliseconds(5000));
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &send, &receive,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mutex);
                   status = s;
                   done = true;
                   done_cv.notify_all();
                 });
  std::unique_lock<std::mutex> lock(mutex);
  done_cv.wait(lock, [&] { return done; });
  if (!status.ok()) return -1;
  std::vector<grpc::Slice> slices;
  receive.Dump(&slices);
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return bytes.size() == 2 && bytes[0] == '\x08' ? bytes[1] : 0;
}

// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo with a
// list_services request (field 7, ""), by hand like the health check; the
// raw response bytes (the service names appear in them as strings).
std::string ReflectionListServices(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + milliseconds(5000));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag;
  bool ok;
  auto step = [&](int id) { return cq.Next(&tag, &ok) && ok && tag == reinterpret_cast<void*>(id); };
  call->StartCall(reinterpret_cast<void*>(1));
  if (!step(1)) return "";
  std::string request("\x3a\x00", 2);  // field 7, length-delimited, empty
  grpc::Slice slice(request);
  grpc::ByteBuffer send(&slice, 1), receive;
  call->Write(send, reinterpret_cast<void*>(2));
  if (!step(2)) return "";
  call->Read(&receive, reinterpret_cast<void*>(3));
  if (!step(3)) return "";
  call->WritesDone(reinterpret_cast<void*>(4));
  step(4);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  std::vector<grpc::Slice> slices;
  receive.Dump(&slices);
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return bytes;
}

std::string Metrics(const KilndProcess& kilnd) { return HttpGet(kilnd.metrics_address(), "/metrics"); }

TEST(KilndTest, CompileReturnsDigestedDeterministicArtifactsAndTheSignature) {
  auto kilnd = KilndProcess::Start({"--workers=2"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::CompileResponse first, second;
  ASSERT_TRUE(stub->Compile(Context().get(), SmallRequest(), &first).ok());
  ASSERT_TRUE(stub->Compile(Context().get(), SmallRequest(), &second).ok());

  EXPECT_EQ(first.compile_id().size(), 64u);
  EXPECT_EQ(first.compile_id(), second.compile_id());
  std::set<int> kinds;
  ASSERT_EQ(first.artifacts_size(), 4);
  auto dir = std::filesystem::temp_directory_path() / ("kiln-artifacts-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (int i = 0; i < first.artifacts_size(); ++i) {
    const v1::Artifact& artifact = first.artifacts(i);
    kinds.insert(artifact.kind());
    EXPECT_EQ(artifact.content(), second.artifacts(i).content()) << artifact.name();
    EXPECT_EQ(artifact.size(), static_cast<int64_t>(artifact.content().size()));
    // The digest a build farm would compute itself.
    std::ofstream(dir / artifact.name(), std::ios::binary) << artifact.content();
    std::string sha = CommandOutput("sha256sum '" + (dir / artifact.name()).string() + "'");
    EXPECT_EQ(sha.substr(0, 64), artifact.sha256()) << artifact.name();
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(kinds, (std::set<int>{v1::GRAPH_IR_TEXT, v1::GRAPH_IR_JSON, v1::LOOP_IR, v1::METADATA_JSON}));

  // The model's own signature.
  ASSERT_EQ(first.signature().inputs_size(), 1);
  EXPECT_EQ(first.signature().inputs(0).name(), "input");
  EXPECT_EQ(first.signature().inputs(0).dtype(), "float32");
  EXPECT_EQ(std::vector<int64_t>(first.signature().inputs(0).shape().begin(),
                                 first.signature().inputs(0).shape().end()),
            (std::vector<int64_t>{1, 3, 8, 8}));
  ASSERT_EQ(first.signature().outputs_size(), 1);
  EXPECT_EQ(first.signature().outputs(0).shape_size(), 4);
  EXPECT_FALSE(first.pass_timings().empty());

  // Asking for one artifact returns that one; other options give other ids.
  v1::CompileRequest loop_only = SmallRequest();
  loop_only.add_artifacts(v1::LOOP_IR);
  v1::CompileResponse loop_response;
  ASSERT_TRUE(stub->Compile(Context().get(), loop_only, &loop_response).ok());
  ASSERT_EQ(loop_response.artifacts_size(), 1);
  EXPECT_NE(loop_response.artifacts(0).content().find("T.prim_func"), std::string::npos);
  EXPECT_EQ(loop_response.compile_id(), first.compile_id());
  v1::CompileRequest o1 = SmallRequest();
  o1.mutable_pass_options()->set_opt_level(1);
  v1::CompileResponse o1_response;
  ASSERT_TRUE(stub->Compile(Context().get(), o1, &o1_response).ok());
  EXPECT_NE(o1_response.compile_id(), first.compile_id());

  std::string metrics = Metrics(*kilnd);
  EXPECT_EQ(MetricValue(metrics, "kiln_cache_hits_total"), 2) << metrics;
  EXPECT_EQ(MetricValue(metrics, "kiln_requests_total{code=\"OK\",rpc=\"Compile\"}"), 4);
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, NativeArtifactsForTheHostAndACrossTarget) {
  auto kilnd = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::CompileRequest request = SmallRequest();
  for (auto kind : {v1::OBJECT, v1::ASSEMBLY, v1::LLVM_IR, v1::HEADER}) request.add_artifacts(kind);
  v1::CompileResponse host, again;
  ASSERT_TRUE(stub->Compile(Context().get(), request, &host).ok());
  ASSERT_EQ(host.artifacts_size(), 4);
  EXPECT_EQ(host.artifacts(0).name(), "kiln_model.o");
  EXPECT_EQ(host.artifacts(0).content().substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(host.artifacts(1).content().find("kiln_model_run:"), std::string::npos);
  EXPECT_NE(host.artifacts(2).content().find("define"), std::string::npos);
  EXPECT_NE(host.artifacts(3).content().find("int32_t kiln_model_run("), std::string::npos);
  // The same request from another client: the same object, byte for byte (from the cache, and
  // a second kilnd process below compiles it afresh).
  ASSERT_TRUE(stub->Compile(Context().get(), request, &again).ok());
  EXPECT_EQ(again.artifacts(0).content(), host.artifacts(0).content());
  auto other = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(other, nullptr);
  v1::CompileResponse fresh;
  ASSERT_TRUE(v1::Compiler::NewStub(other->Channel())->Compile(Context().get(), request, &fresh).ok());
  EXPECT_EQ(fresh.compile_id(), host.compile_id());
  EXPECT_EQ(fresh.artifacts(0).content(), host.artifacts(0).content());
  // The shared library, linked from the object each process holds: an ELF shared object
  // (e_type ET_DYN), the same bytes from both.
  v1::CompileRequest so_request = request;
  so_request.clear_artifacts();
  so_request.add_artifacts(v1::SHARED_LIBRARY);
  v1::CompileResponse library, fresh_library;
  ASSERT_TRUE(stub->Compile(Context().get(), so_request, &library).ok());
  ASSERT_EQ(library.artifacts_size(), 1);
  EXPECT_EQ(library.artifacts(0).name(), "libkiln_model.so");
  const std::string& elf = library.artifacts(0).content();
  ASSERT_GT(elf.size(), 18u);
  EXPECT_EQ(elf.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(elf[16], 3);  // ET_DYN
  ASSERT_TRUE(v1::Compiler::NewStub(other->Channel())->Compile(Context().get(), so_request, &fresh_library).ok());
  EXPECT_TRUE(fresh_library.artifacts(0).content() == elf);
  EXPECT_EQ(other->Stop(), 0);

  // A cross target gets its own id and an AArch64 object.
  v1::CompileRequest arm = request;
  arm.mutable_target()->set_triple("aarch64-linux-gnu");
  v1::CompileResponse arm_response;
  ASSERT_TRUE(stub->Compile(Context().get(), arm, &arm_response).ok());
  EXPECT_NE(arm_response.compile_id(), host.compile_id());
  EXPECT_NE(arm_response.artifacts(1).content().find("fmla"), std::string::npos);
  // No shared library for it: the runtime inside one is built for this host.
  v1::CompileRequest arm_so = so_request;
  arm_so.mutable_target()->set_triple("aarch64-linux-gnu");
  v1::CompileResponse arm_so_response;
  grpc::Status arm_so_status = stub->Compile(Context().get(), arm_so, &arm_so_response);
  EXPECT_EQ(arm_so_status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(arm_so_status.error_message().find("x86_64 Linux"), std::string::npos);
  // A target LLVM does not know, or a feature that would take away the base ISA, is the
  // client's error.
  v1::CompileRequest bad = request;
  bad.mutable_target()->set_cpu("no-such-cpu");
  v1::CompileResponse bad_response;
  grpc::Status status = stub->Compile(Context().get(), bad, &bad_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("no-such-cpu"), std::string::npos);
  bad = request;
  bad.mutable_target()->set_features("-sse2");
  status = stub->Compile(Context().get(), bad, &bad_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, TracePassStreamsEveryPassWithSpansThenTheSummary) {
  auto kilnd = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::TraceRequest request;
  *request.mutable_compile() = SmallRequest();
  request.set_ir_after(true);
  request.set_format(v1::JSON);
  auto context = Context();
  auto reader = stub->TracePass(context.get(), request);
  std::vector<v1::PassEvent> events;
  v1::PassEvent event;
  while (reader->Read(&event)) events.push_back(event);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_GE(events.size(), 10u);
  const std::set<std::string> onnx_names = {"input", "w", "b", "conv", "relu", "residual"};
  std::set<std::string> stages, llvm_passes;
  bool llvm_ir_seen = false;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const v1::PassEvent& e = events[i];
    if (i > 0) {
      EXPECT_GT(e.index(), events[i - 1].index());
    }
    EXPECT_FALSE(e.pass_name().empty());
    stages.insert(e.stage());
    EXPECT_FALSE(e.has_summary());
    if (e.stage() == "llvm") {
      // LLVM's passes during code generation: their IR is LLVM's text (module passes only).
      llvm_passes.insert(e.pass_name());
      llvm_ir_seen |= e.ir_after().find("define ") != std::string::npos;
      continue;
    }
    EXPECT_TRUE(nlohmann::json::accept(e.ir_after())) << e.pass_name();
    // Provenance: every call carries a span, every span names a layer of the model.
    EXPECT_EQ(e.calls_with_span(), e.calls()) << e.pass_name();
    for (const v1::SpanEntry& entry : e.span_table()) {
      for (const std::string& source : entry.sources()) {
        EXPECT_EQ(onnx_names.count(source), 1u) << source << " after " << e.pass_name();
      }
    }
  }
  EXPECT_EQ(stages, (std::set<std::string>{"graph", "loop", "llvm"}));
  EXPECT_EQ(llvm_passes.count("InstCombinePass"), 1u);
  EXPECT_EQ(llvm_passes.count("MachineCode"), 1u);  // the object, last
  EXPECT_EQ(events[events.size() - 2].pass_name(), "MachineCode");
  EXPECT_TRUE(llvm_ir_seen);
  EXPECT_FALSE(events.front().span_table().empty());
  ASSERT_TRUE(events.back().has_summary());
  v1::CompileResponse compiled;
  ASSERT_TRUE(stub->Compile(Context().get(), SmallRequest(), &compiled).ok());
  EXPECT_EQ(events.back().summary().compile_id(), compiled.compile_id());
  // TracePass left its result in the cache; LLVM's passes have pass histograms too.
  std::string metrics = Metrics(*kilnd);
  EXPECT_EQ(MetricValue(metrics, "kiln_cache_hits_total"), 1);
  EXPECT_EQ(MetricValue(metrics, "kiln_pass_duration_seconds_count{pass=\"MachineCode\",stage=\"llvm\"}"), 1)
      << metrics;

  // Filters: only passes that changed the module, only passes named *Fold*.
  request.set_only_changed(true);
  request.add_pass_filter("Fold");
  request.set_ir_after(false);
  auto filtered_context = Context();
  auto filtered = stub->TracePass(filtered_context.get(), request);
  int count = 0;
  while (filtered->Read(&event)) {
    if (event.has_summary()) continue;
    ++count;
    EXPECT_TRUE(event.changed());
    EXPECT_NE(event.pass_name().find("Fold"), std::string::npos) << event.pass_name();
    EXPECT_TRUE(event.ir_after().empty());
  }
  EXPECT_TRUE(filtered->Finish().ok());
  EXPECT_GE(count, 1);
  EXPECT_EQ(kilnd->Stop(), 0);
}

// kilnd compiles through the driver as kiln-opt does: the request's config
// turns on the same checking instruments (bisection, verification).
TEST(KilndTest, TheConfigsBisectionAndVerifierRunInTheService) {
  auto kilnd = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  auto graph_passes = [&](const std::map<std::string, std::string>& config) {
    v1::TraceRequest request;
    *request.mutable_compile() = SmallRequest();
    for (const auto& [key, value] : config) {
      (*request.mutable_compile()->mutable_pass_options()->mutable_config())[key] = value;
    }
    auto context = Context();
    auto reader = stub->TracePass(context.get(), request);
    std::set<std::string> passes;
    v1::PassEvent event;
    while (reader->Read(&event)) {
      if (!event.has_summary() && event.stage() == "graph") passes.insert(event.pass_name());
    }
    EXPECT_TRUE(reader->Finish().ok());
    return passes;
  };
  std::set<std::string> all = graph_passes({});
  EXPECT_TRUE(all.count("FuseOps"));
  // pass.max_pass_index=0: only the passes others require (InferType) run.
  std::set<std::string> bisected = graph_passes({{"pass.max_pass_index", "0"}});
  EXPECT_FALSE(bisected.count("FuseOps"));
  EXPECT_TRUE(bisected.count("InferType"));
  // Verification after every pass, types included, finds nothing wrong.
  EXPECT_EQ(graph_passes({{"pass.verify_each", "true"}, {"pass.verify_types", "true"}}), all);
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, ScheduleRecordByLayerNameAndUnknownSelectors) {
  auto kilnd = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::ScheduleRecordRequest request;
  *request.mutable_compile() = SmallRequest();
  request.set_selector("conv");
  request.set_verify(true);
  v1::ScheduleRecord record;
  grpc::Status status = stub->GetScheduleRecord(Context().get(), request, &record);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::set<std::string> spans(record.spans().begin(), record.spans().end());
  EXPECT_EQ(spans.count("conv"), 1u);
  ASSERT_GE(record.steps_size(), 2);
  EXPECT_EQ(record.steps(0).primitive(), "vanilla");
  for (const v1::ScheduleStep& step : record.steps()) {
    EXPECT_NE(step.loop_ir().find("def "), std::string::npos);
    EXPECT_TRUE(step.has_verified());
    EXPECT_TRUE(step.verified()) << step.primitive();
  }

  request.set_selector("no_such_layer");
  v1::ScheduleRecord missing;
  status = stub->GetScheduleRecord(Context().get(), request, &missing);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find(record.kernel()), std::string::npos)
      << status.error_message();
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, ListPassesDescribesTheRegistry) {
  auto kilnd = KilndProcess::Start();
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::ListPassesResponse response;
  ASSERT_TRUE(stub->ListPasses(Context().get(), v1::ListPassesRequest(), &response).ok());
  std::map<std::string, v1::PassDescription> passes;
  for (const v1::PassDescription& pass : response.passes()) passes[pass.name()] = pass;
  ASSERT_EQ(passes.count("FoldConstant"), 1u);
  EXPECT_EQ(passes["FoldConstant"].stage(), "graph");
  EXPECT_EQ(passes["FoldConstant"].opt_level(), 2);
  ASSERT_EQ(passes.count("FuseOps"), 1u);
  EXPECT_FALSE(passes["FuseOps"].options().empty());  // fuse_opt_level
  ASSERT_EQ(passes.count("VectorizeLoop"), 1u);
  EXPECT_EQ(passes["VectorizeLoop"].stage(), "loop");
  bool si_builder = false;
  for (const v1::ConfigOption& option : response.config_options()) {
    si_builder |= option.name() == "ir.enable_si_builder" && option.type() == "bool";
  }
  EXPECT_TRUE(si_builder);
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, ReflectionAndHealthNeedNoToken) {
  auto dir = std::filesystem::temp_directory_path() / ("kiln-reflect-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokens") << "secret\n";
  auto kilnd = KilndProcess::Start({"--auth-token-file=" + (dir / "tokens").string()});
  ASSERT_NE(kilnd, nullptr);
  std::string services = ReflectionListServices(kilnd->Channel());
  EXPECT_NE(services.find("kiln.v1.Compiler"), std::string::npos) << services;
  EXPECT_NE(services.find("grpc.health.v1.Health"), std::string::npos) << services;
  EXPECT_EQ(HealthStatus(kilnd->Channel(), ""), 1);
  EXPECT_EQ(kilnd->Stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(KilndTest, EveryKindOfBadRequestGetsItsStatusAndHealthStaysServing) {
  auto kilnd = KilndProcess::Start({"--workers=1", "--max-request-bytes=200000"});
  ASSERT_NE(kilnd, nullptr);
  auto channel = kilnd->Channel();
  auto stub = v1::Compiler::NewStub(channel);
  struct Case {
    const char* what;
    v1::CompileRequest request;
    grpc::StatusCode code;
    std::string message_part;
  };
  std::vector<Case> cases;
  {
    v1::CompileRequest r;
    r.set_onnx("not a model at all");
    cases.push_back({"garbage bytes", r, grpc::StatusCode::INVALID_ARGUMENT, "ModelProto"});
  }
  {
    v1::CompileRequest r;
    r.set_onnx(UnsupportedOpModel());
    cases.push_back({"unsupported op", r, grpc::StatusCode::UNIMPLEMENTED, "Multinomial"});
  }
  {
    v1::CompileRequest r;
    r.set_onnx(ShapeMismatchModel());
    cases.push_back({"shape mismatch", r, grpc::StatusCode::INVALID_ARGUMENT, "conv"});
  }
  cases.push_back({"no model", v1::CompileRequest(), grpc::StatusCode::INVALID_ARGUMENT, "no model"});
  {
    v1::CompileRequest r = SmallRequest();
    r.mutable_pass_options()->set_opt_level(7);
    cases.push_back({"opt level", r, grpc::StatusCode::INVALID_ARGUMENT, "opt_level"});
  }
  {
    v1::CompileRequest r = SmallRequest();
    (*r.mutable_pass_options()->mutable_config())["no.such.key"] = "1";
    cases.push_back({"config key", r, grpc::StatusCode::INVALID_ARGUMENT, "ir.enable_si_builder"});
  }
  {
    v1::CompileRequest r = SmallRequest();
    r.mutable_pass_options()->set_pipeline("FoldConstant,NoSuchPass");
    cases.push_back({"pipeline", r, grpc::StatusCode::INVALID_ARGUMENT, "NoSuchPass"});
  }
  {
    v1::CompileRequest r;
    r.set_graph_ir_text("def @main(%x) { %x + }");
    cases.push_back({"graph text", r, grpc::StatusCode::INVALID_ARGUMENT, "graph_ir_text"});
  }
  {
    v1::CompileRequest r;
    r.set_onnx(std::string(300000, 'x'));  // over --max-request-bytes
    cases.push_back({"too large", r, grpc::StatusCode::RESOURCE_EXHAUSTED, ""});
  }
  for (const Case& c : cases) {
    v1::CompileResponse response;
    grpc::Status status = stub->Compile(Context().get(), c.request, &response);
    EXPECT_EQ(status.error_code(), c.code) << c.what << ": " << status.error_message();
    EXPECT_NE(status.error_message().find(c.message_part), std::string::npos)
        << c.what << ": " << status.error_message();
  }
  EXPECT_EQ(HealthStatus(channel, "kiln.v1.Compiler"), 1);
  v1::CompileResponse ok;
  EXPECT_TRUE(stub->Compile(Context().get(), SmallRequest(), &ok).ok());
  EXPECT_EQ(kilnd->Stop(), 0);
}

// One ResNet-50-sized model for the tests that need work taking a while.
const std::string& ResNet() {
  static const std::string* model = new std::string(ResNet50Model());
  return *model;
}

v1::CompileRequest ResNetRequest(int variant) {
  v1::CompileRequest request;
  request.set_onnx(ResNet());
  request.set_name("resnet");
  request.add_artifacts(v1::METADATA_JSON);
  // Distinct compile ids (the pass config is part of the id), so no cache hits; a bisection
  // limit beyond the pipeline's length changes nothing else.
  (*request.mutable_pass_options()->mutable_config())["pass.max_pass_index"] =
      std::to_string(1000 + variant);
  return request;
}

TEST(KilndTest, ConcurrentCompilesBeyondTheQueueAreRefusedWithPushback) {
  auto kilnd = KilndProcess::Start({"--workers=2", "--queue-depth=2"});
  ASSERT_NE(kilnd, nullptr);
  auto channel = kilnd->Channel();
  auto stub = v1::Compiler::NewStub(channel);
  constexpr int kCalls = 8;
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<std::string> pushback(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
      v1::CompileResponse response;
      statuses[i] = stub->Compile(&context, ResNetRequest(i), &response);
      auto trailer = context.GetServerTrailingMetadata().find("grpc-retry-pushback-ms");
      if (trailer != context.GetServerTrailingMetadata().end()) {
        pushback[i] = std::string(trailer->second.data(), trailer->second.size());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int ok = 0, refused = 0;
  for (int i = 0; i < kCalls; ++i) {
    if (statuses[i].ok()) {
      ++ok;
    } else {
      EXPECT_EQ(statuses[i].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
          << statuses[i].error_message();
      EXPECT_EQ(pushback[i], "1000");
      ++refused;
    }
  }
  // Two run and two wait at once: at least four succeed (more when calls
  // arrive after others finished), and nothing else happens to any call.
  EXPECT_GE(ok, 4);
  EXPECT_EQ(ok + refused, kCalls);
  std::string metrics = Metrics(*kilnd);
  EXPECT_EQ(MetricValue(metrics, "kiln_requests_total{code=\"OK\",rpc=\"Compile\"}"), ok);
  EXPECT_EQ(MetricValue(metrics, "kiln_requests_total{code=\"RESOURCE_EXHAUSTED\",rpc=\"Compile\"}"),
            refused);
  EXPECT_EQ(MetricValue(metrics, "kiln_workers_busy"), 0);
  EXPECT_EQ(HealthStatus(channel, "kiln.v1.Compiler"), 1);
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, CancellingATraceFreesTheWorkerAtTheNextPass) {
  auto kilnd = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::TraceRequest request;
  *request.mutable_compile() = ResNetRequest(100);
  grpc::ClientContext context;
  auto reader = stub->TracePass(&context, request);
  v1::PassEvent event;
  ASSERT_TRUE(reader->Read(&event));  // the compile is under way
  EXPECT_EQ(MetricValue(Metrics(*kilnd), "kiln_workers_busy"), 1);
  auto cancelled_at = std::chrono::steady_clock::now();
  context.TryCancel();
  double freed_ms = -1;
  while (std::chrono::steady_clock::now() - cancelled_at < std::chrono::seconds(10)) {
    if (MetricValue(Metrics(*kilnd), "kiln_workers_busy") == 0) {
      freed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                           cancelled_at).count();
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The figure is 200 ms; the bound here leaves room for a loaded CI machine.
  EXPECT_GE(freed_ms, 0);
  EXPECT_LT(freed_ms, 5000);
  std::printf("worker freed %.1f ms after the cancel\n", freed_ms);
  // The worker is free for the next call.
  v1::CompileResponse response;
  EXPECT_TRUE(stub->Compile(Context().get(), SmallRequest(), &response).ok());
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, AReaderThatStopsReadingIsCutOffAtTheDefaultDeadline) {
  // A small event buffer fills at once; the client sends no deadline of its
  // own and never reads past the first event.
  auto kilnd = KilndProcess::Start(
      {"--workers=1", "--default-deadline=2s", "--max-event-bytes=100000"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::TraceRequest request;
  *request.mutable_compile() = ResNetRequest(400);
  request.set_ir_after(true);
  request.set_ir_before(true);
  request.set_format(v1::JSON);
  grpc::ClientContext context;
  auto reader = stub->TracePass(&context, request);
  v1::PassEvent event;
  ASSERT_TRUE(reader->Read(&event));
  auto start = std::chrono::steady_clock::now();
  bool freed = false;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    if (MetricValue(Metrics(*kilnd), "kiln_workers_busy") == 0) {
      freed = true;
      break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(freed) << "the worker is still held by a reader that stopped reading";
  context.TryCancel();
  while (reader->Read(&event)) {
  }
  reader->Finish();
  // kilnd still serves.
  v1::CompileResponse response;
  EXPECT_TRUE(stub->Compile(Context().get(), SmallRequest(), &response).ok());
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, AnExpiredDeadlineStopsTheCompile) {
  // A request of a few hundred bytes (it reaches kilnd long before its
  // deadline on any machine) whose compile cannot finish in time on any
  // machine: folding a 2048x2048 MatMul is 8.6e9 multiply-adds in the
  // interpreter. The deadline must stop it inside FoldConstant.
  auto kilnd = KilndProcess::Start({"--workers=1", "--max-fold-steps=1000000000000"});
  ASSERT_NE(kilnd, nullptr);
  auto stub = v1::Compiler::NewStub(kilnd->Channel());
  v1::CompileRequest request;
  request.set_onnx(SlowFoldingModel(2048));
  request.set_name("slow");
  v1::CompileResponse response;
  grpc::Status status = stub->Compile(Context(3000).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  // The server saw it too, and gave the worker back.
  std::string metrics;
  for (int i = 0; i < 3000; ++i) {  // up to 30 s: the fold polls its deadline
    metrics = Metrics(*kilnd);
    if (MetricValue(metrics, "kiln_workers_busy") == 0 &&
        MetricValue(metrics, "kiln_compile_duration_seconds_count{status=\"DEADLINE_EXCEEDED\"}") == 1) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(MetricValue(metrics, "kiln_compile_duration_seconds_count{status=\"DEADLINE_EXCEEDED\"}"), 1)
      << metrics;
  EXPECT_EQ(MetricValue(metrics, "kiln_workers_busy"), 0);
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, SigtermDrainsTheCallInFlightAndRefusesNewOnes) {
  auto kilnd = KilndProcess::Start({"--workers=1", "--grace-period=60s"});
  ASSERT_NE(kilnd, nullptr);
  auto channel = kilnd->Channel();
  auto stub = v1::Compiler::NewStub(channel);
  grpc::Status in_flight;
  std::atomic<bool> started{false};
  std::thread call([&] {
    v1::TraceRequest request;
    *request.mutable_compile() = ResNetRequest(300);
    grpc::ClientContext context;
    auto reader = stub->TracePass(&context, request);
    v1::PassEvent event;
    while (reader->Read(&event)) started = true;
    in_flight = reader->Finish();
  });
  while (!started) std::this_thread::sleep_for(milliseconds(5));
  kill(kilnd->pid(), SIGTERM);
  // Health flips and new calls are refused while the trace finishes.
  int health = 1;
  for (int i = 0; i < 200 && health == 1; ++i) {
    health = HealthStatus(channel, "kiln.v1.Compiler");
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_NE(health, 1);
  call.join();
  EXPECT_TRUE(in_flight.ok()) << in_flight.error_message();
  EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(KilndTest, BearerTokensGuardTheCompilerButNotHealth) {
  auto dir = std::filesystem::temp_directory_path() / ("kiln-auth-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokens") << "first-token\nsecond-token\n";
  auto kilnd = KilndProcess::Start({"--auth-token-file=" + (dir / "tokens").string()});
  ASSERT_NE(kilnd, nullptr);
  auto channel = kilnd->Channel();
  auto stub = v1::Compiler::NewStub(channel);
  auto call = [&](const std::string& authorization) {
    grpc::ClientContext context;
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    v1::ListPassesResponse response;
    return stub->ListPasses(&context, v1::ListPassesRequest(), &response).error_code();
  };
  EXPECT_EQ(call(""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("Bearer wrong"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("first-token"), grpc::StatusCode::UNAUTHENTICATED);  // not a bearer header
  EXPECT_EQ(call("Bearer first-token"), grpc::StatusCode::OK);
  EXPECT_EQ(call("Bearer second-token"), grpc::StatusCode::OK);
  EXPECT_EQ(HealthStatus(channel, "kiln.v1.Compiler"), 1);
  EXPECT_EQ(kilnd->Stop(), 0);
  std::filesystem::remove_all(dir);
}

// A CA, a server certificate for 127.0.0.1 and a client certificate, made
// with the openssl command line.
struct Certificates {
  std::filesystem::path dir;
  std::string Read(const std::string& name) const {
    std::ifstream file(dir / name);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
};

Certificates MakeCertificates() {
  Certificates certs{std::filesystem::temp_directory_path() / ("kiln-tls-" + std::to_string(getpid()))};
  std::filesystem::create_directories(certs.dir);
  std::string d = certs.dir.string();
  std::string script =
      "cd '" + d + "' && "
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=kiln-test-ca "
      "  -keyout ca.key -out ca.pem && "
      "printf 'subjectAltName=IP:127.0.0.1\\n' > server.ext && "
      "openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr && "
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "  -extfile server.ext -out server.pem && "
      "openssl req -newkey rsa:2048 -nodes -subj /CN=kiln-client -keyout client.key -out client.csr && "
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "  -out client.pem";
  EXPECT_EQ(std::system(("(" + script + ") >/dev/null 2>&1").c_str()), 0);
  return certs;
}

grpc::StatusCode ListPassesOver(const std::string& address,
                                std::shared_ptr<grpc::ChannelCredentials> credentials) {
  auto stub = v1::Compiler::NewStub(grpc::CreateChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListPassesResponse response;
  return stub->ListPasses(&context, v1::ListPassesRequest(), &response).error_code();
}

TEST(KilndTest, TlsAndMutualTls) {
  Certificates certs = MakeCertificates();
  grpc::SslCredentialsOptions trusting;
  trusting.pem_root_certs = certs.Read("ca.pem");
  {
    auto kilnd = KilndProcess::Start({"--tls-cert=" + (certs.dir / "server.pem").string(),
                                      "--tls-key=" + (certs.dir / "server.key").string()});
    ASSERT_NE(kilnd, nullptr);
    EXPECT_EQ(ListPassesOver(kilnd->address(), grpc::SslCredentials(trusting)), grpc::StatusCode::OK);
    EXPECT_EQ(ListPassesOver(kilnd->address(), grpc::InsecureChannelCredentials()),
              grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(kilnd->Stop(), 0);
  }
  {
    auto kilnd = KilndProcess::Start({"--tls-cert=" + (certs.dir / "server.pem").string(),
                                      "--tls-key=" + (certs.dir / "server.key").string(),
                                      "--tls-client-ca=" + (certs.dir / "ca.pem").string()});
    ASSERT_NE(kilnd, nullptr);
    EXPECT_EQ(ListPassesOver(kilnd->address(), grpc::SslCredentials(trusting)),
              grpc::StatusCode::UNAVAILABLE);  // no client certificate
    grpc::SslCredentialsOptions with_client = trusting;
    with_client.pem_private_key = certs.Read("client.key");
    with_client.pem_cert_chain = certs.Read("client.pem");
    EXPECT_EQ(ListPassesOver(kilnd->address(), grpc::SslCredentials(with_client)),
              grpc::StatusCode::OK);
    EXPECT_EQ(kilnd->Stop(), 0);
  }
  std::filesystem::remove_all(certs.dir);
}

TEST(KilndTest, UnderTlsATokenlessCallIsRefusedBeforeItsBodyIsHandled) {
  Certificates certs = MakeCertificates();
  std::ofstream(certs.dir / "tokens") << "tls-token\n";
  auto kilnd = KilndProcess::Start({"--tls-cert=" + (certs.dir / "server.pem").string(),
                                    "--tls-key=" + (certs.dir / "server.key").string(),
                                    "--auth-token-file=" + (certs.dir / "tokens").string()});
  ASSERT_NE(kilnd, nullptr);
  grpc::SslCredentialsOptions trusting;
  trusting.pem_root_certs = certs.Read("ca.pem");
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(512 << 20);
  auto channel =
      grpc::CreateCustomChannel(kilnd->address(), grpc::SslCredentials(trusting), args);
  auto stub = v1::Compiler::NewStub(channel);
  v1::CompileRequest big = SmallRequest();
  big.set_onnx(std::string(64 << 20, 'x'));
  v1::CompileResponse response;
  grpc::Status status = stub->Compile(Context().get(), big, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  // gRPC's AuthMetadataProcessor refused it from its headers: the service
  // never saw the call (no log line, no request counted).
  EXPECT_EQ(kilnd->Log().find("\"rpc\":\"Compile\""), std::string::npos) << kilnd->Log();
  EXPECT_EQ(MetricValue(Metrics(*kilnd), "kiln_requests_total{code=\"UNAUTHENTICATED\",rpc=\"Compile\"}"),
            0);
  EXPECT_EQ(HealthStatus(channel, "kiln.v1.Compiler"), 1);  // health needs no token
  grpc::ClientContext with_token;
  with_token.AddMetadata("authorization", "Bearer tls-token");
  status = stub->Compile(&with_token, SmallRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(kilnd->Stop(), 0);
  std::filesystem::remove_all(certs.dir);
}

}  // namespace
}  // namespace kiln::testing
