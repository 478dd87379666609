// The Explorer gateway's HTTP API against a real kilnd: uploads, the trace as server-sent
// events (checked against kilnd's own TracePass stream), each pass's IR and diff, the NDJSON
// download, schedule records, artifacts, and every bad input a page or a script can send
// (a non-model, an oversized upload, unknown ids, malformed options, kilnd down). HTTP goes
// through civetweb's client, with a timeout on every response.
#include <civetweb.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/web/gateway/explorer_server.h"
#include "clients/web/gateway/model_store.h"
#include "clients/web/gateway/trace_store.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/kilnd_process.h"
#include "tests/integration/test_models.h"

namespace kiln::testing {
namespace {

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string disposition;
};

// One request to the gateway at `address`; every wait bounded (60 s: a deadline, not a figure).
HttpResponse Http(const std::string& address, const std::string& method, const std::string& path,
                  const std::string& body = "", bool send_length = true) {
  size_t colon = address.rfind(':');
  char error[256] = "";
  mg_connection* connection =
      mg_connect_client(address.substr(0, colon).c_str(), std::stoi(address.substr(colon + 1)),
                        0, error, sizeof(error));
  EXPECT_NE(connection, nullptr) << error;
  if (connection == nullptr) return {};
  std::string head = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: ", address,
                                  "\r\nConnection: close\r\n");
  if (send_length) absl::StrAppend(&head, "Content-Length: ", body.size(), "\r\n");
  absl::StrAppend(&head, "\r\n");
  mg_write(connection, head.data(), head.size());
  if (!body.empty()) mg_write(connection, body.data(), body.size());
  HttpResponse response;
  if (mg_get_response(connection, error, sizeof(error), 60000) < 0) {
    ADD_FAILURE() << "no response to " << method << " " << path << ": " << error;
    mg_close_connection(connection);
    return response;
  }
  const mg_response_info* info = mg_get_response_info(connection);
  response.status = info->status_code;
  for (int i = 0; i < info->num_headers; ++i) {
    if (std::string(info->http_headers[i].name) == "Content-Disposition") {
      response.disposition = info->http_headers[i].value;
    }
  }
  char buffer[65536];
  int n;
  while ((n = mg_read(connection, buffer, sizeof(buffer))) > 0) response.body.append(buffer, n);
  mg_close_connection(connection);
  return response;
}

struct SseEvent {
  std::string name;
  nlohmann::json data;
};

std::vector<SseEvent> ParseEvents(const std::string& stream) {
  std::vector<SseEvent> events;
  for (absl::string_view block : absl::StrSplit(stream, "\n\n", absl::SkipEmpty())) {
    SseEvent event;
    for (absl::string_view line : absl::StrSplit(block, '\n')) {
      if (absl::StartsWith(line, "event: ")) event.name = std::string(line.substr(7));
      if (absl::StartsWith(line, "data: ")) event.data = nlohmann::json::parse(line.substr(6));
    }
    events.push_back(std::move(event));
  }
  return events;
}

class ExplorerGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override { kilnd_ = KilndProcess::Start(); }

  std::unique_ptr<explorer::ExplorerServer> StartGateway(const std::string& kilnd_address,
                                                         int64_t max_upload = 1 << 20) {
    explorer::ExplorerOptions options;
    options.listen = "127.0.0.1:0";
    options.kilnd.server = kilnd_address;
    options.web_root = KILN_WEB_APP_DIR;
    options.max_upload_bytes = max_upload;
    absl::StatusOr<std::unique_ptr<explorer::ExplorerServer>> server =
        explorer::ExplorerServer::Start(options);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  std::string Upload(const std::string& address, const std::string& model) {
    HttpResponse response = Http(address, "POST", "/api/models?name=small.onnx", model);
    EXPECT_EQ(response.status, 200) << response.body;
    return nlohmann::json::parse(response.body)["model"];
  }

  std::unique_ptr<KilndProcess> kilnd_;
};

TEST_F(ExplorerGatewayTest, ServesTheWebApp) {
  auto gateway = StartGateway(kilnd_->address());
  HttpResponse page = Http(gateway->address(), "GET", "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("Kiln Explorer"), std::string::npos);
  HttpResponse health = Http(gateway->address(), "GET", "/api/health");
  EXPECT_TRUE(nlohmann::json::parse(health.body)["serving"].get<bool>());
}

// The gateway's stream carries every pass kilnd's own TracePass stream has, in order; each
// pass's IR on demand is kilnd's, its diff is against the last IR of its stage, and the NDJSON
// download holds every event.
TEST_F(ExplorerGatewayTest, TraceMatchesKilndsStream) {
  auto gateway = StartGateway(kilnd_->address());
  const std::string model = SmallModel();
  const std::string id = Upload(gateway->address(), model);
  HttpResponse stream = Http(gateway->address(), "GET", absl::StrCat("/api/trace?model=", id));
  ASSERT_EQ(stream.status, 200);
  std::vector<SseEvent> events = ParseEvents(stream.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().name, "start");
  EXPECT_EQ(events.back().name, "done") << events.back().data.dump();
  const std::string trace = events.front().data["trace"];

  v1::TraceRequest request;
  request.mutable_compile()->set_onnx(model);
  request.set_ir_after(true);
  auto stub = v1::Compiler::NewStub(kilnd_->Channel());
  grpc::ClientContext context;
  auto reader = stub->TracePass(&context, request);
  std::vector<v1::PassEvent> direct;
  v1::PassEvent event;
  while (reader->Read(&event)) {
    if (!event.pass_name().empty()) direct.push_back(event);
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(events.size(), direct.size() + 2);
  int64_t changed_index = -1;
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(events[i + 1].name, "pass");
    EXPECT_EQ(events[i + 1].data["pass_name"], direct[i].pass_name());
    EXPECT_EQ(events[i + 1].data["index"], direct[i].index());
    if (direct[i].changed() && direct[i].pass_name() == "SimplifyInference") {
      changed_index = direct[i].index();
    }
  }
  // The model has no BatchNormalization: take the first graph pass that changed it instead.
  for (size_t i = 0; changed_index < 0 && i < direct.size(); ++i) {
    if (direct[i].changed() && direct[i].stage() == "graph" && i > 0) changed_index = direct[i].index();
  }
  ASSERT_GE(changed_index, 0);
  HttpResponse pass = Http(gateway->address(), "GET",
                           absl::StrCat("/api/traces/", trace, "/passes/", changed_index));
  ASSERT_EQ(pass.status, 200) << pass.body;
  nlohmann::json body = nlohmann::json::parse(pass.body);
  auto it = std::find_if(direct.begin(), direct.end(),
                         [&](const v1::PassEvent& e) { return e.index() == changed_index; });
  EXPECT_EQ(body["ir_after"], it->ir_after());
  EXPECT_TRUE(absl::StartsWith(body["diff"].get<std::string>(), "--- after #"))
      << body["diff"].get<std::string>();
  EXPECT_NE(body["command"].get<std::string>().find(
                absl::StrCat("--print-after=", it->pass_name())),
            std::string::npos);

  // The command shown for an LLVM pass reproduces its IR exactly: run it (kiln, the model
  // under the name the page gave it, this kilnd) and compare the file it dumps.
  auto llvm = std::find_if(direct.begin(), direct.end(), [](const v1::PassEvent& e) {
    return e.stage() == "llvm" && e.changed() && !e.ir_after().empty();
  });
  ASSERT_NE(llvm, direct.end());
  nlohmann::json llvm_pass = nlohmann::json::parse(
      Http(gateway->address(), "GET",
           absl::StrCat("/api/traces/", trace, "/passes/", llvm->index())).body);
  std::string command = llvm_pass["command"];
  ASSERT_TRUE(absl::StartsWith(command, "kiln trace 'small.onnx'")) << command;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("kiln-explorer-command-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "small.onnx", std::ios::binary) << model;
  const std::string dumped = command.substr(command.find("# ") + 2);
  command = absl::StrCat("cd '", dir.string(), "' && '", KILN_CLI_PATH, "'",
                         command.substr(4, command.find("   #") - 4), " --server=",
                         kilnd_->address(), " > /dev/null");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream file(dir / dumped, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), llvm_pass["ir_after"].get<std::string>()) << dumped;
  std::filesystem::remove_all(dir);

  HttpResponse ndjson =
      Http(gateway->address(), "GET", absl::StrCat("/api/traces/", trace, "/events.ndjson"));
  EXPECT_EQ(ndjson.status, 200);
  EXPECT_NE(ndjson.disposition.find(".ndjson"), std::string::npos);
  std::vector<std::string> lines = absl::StrSplit(ndjson.body, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), direct.size());
}

TEST_F(ExplorerGatewayTest, ScheduleRecordAndArtifacts) {
  auto gateway = StartGateway(kilnd_->address());
  const std::string id = Upload(gateway->address(), SmallModel());
  HttpResponse record = Http(gateway->address(), "GET",
                             absl::StrCat("/api/schedule?model=", id, "&selector=conv"));
  ASSERT_EQ(record.status, 200) << record.body;
  nlohmann::json body = nlohmann::json::parse(record.body);
  ASSERT_GE(body["steps"].size(), 2u);
  int diffs = 0;
  for (size_t i = 0; i < body["steps"].size(); ++i) {
    EXPECT_TRUE(body["steps"][i]["verified"].get<bool>()) << i;
    // Each step's diff from the one before (empty when a primitive left the text as it was).
    const std::string diff = body["steps"][i]["diff"];
    if (i > 0 && !diff.empty()) {
      ++diffs;
      EXPECT_TRUE(absl::StartsWith(diff, absl::StrCat("--- step ", i - 1, "\n+++ step ", i)));
    }
  }
  EXPECT_GT(diffs, 0);
  HttpResponse assembly =
      Http(gateway->address(), "GET", absl::StrCat("/api/artifact?model=", id, "&kind=assembly"));
  EXPECT_EQ(assembly.status, 200);
  EXPECT_NE(assembly.disposition.find("kiln_model.s"), std::string::npos);
  EXPECT_NE(assembly.body.find("model.loop.py:"), std::string::npos);
}

TEST_F(ExplorerGatewayTest, BadInputGetsAClearError) {
  auto gateway = StartGateway(kilnd_->address(), /*max_upload=*/4096);
  const std::string& at = gateway->address();
  auto error_of = [](const HttpResponse& response) {
    return nlohmann::json::parse(response.body)["error"]["message"].get<std::string>();
  };
  HttpResponse garbage = Http(at, "POST", "/api/models?name=x.onnx", "not a model at all");
  EXPECT_EQ(garbage.status, 400);
  EXPECT_NE(error_of(garbage).find("not an ONNX model"), std::string::npos);
  HttpResponse big = Http(at, "POST", "/api/models?name=big.onnx", std::string(5000, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(error_of(big).find("at most 4096"), std::string::npos);
  HttpResponse no_length = Http(at, "POST", "/api/models?name=x.onnx", "", /*send_length=*/false);
  EXPECT_EQ(no_length.status, 400);
  HttpResponse unknown_model = Http(at, "GET", "/api/trace?model=m404");
  EXPECT_EQ(unknown_model.status, 404);
  EXPECT_NE(error_of(unknown_model).find("m404"), std::string::npos);

  const std::string id = Upload(at, SmallModel());
  HttpResponse level = Http(at, "GET", absl::StrCat("/api/trace?model=", id, "&opt_level=9"));
  EXPECT_EQ(level.status, 400);
  EXPECT_NE(error_of(level).find("opt_level"), std::string::npos);
  HttpResponse config = Http(at, "GET", absl::StrCat("/api/trace?model=", id, "&config=novalue"));
  EXPECT_EQ(config.status, 400);
  EXPECT_NE(error_of(config).find("KEY=VALUE"), std::string::npos);
  HttpResponse stage = Http(at, "GET", absl::StrCat("/api/trace?model=", id, "&stages=gpu"));
  EXPECT_EQ(stage.status, 400);
  HttpResponse shape = Http(at, "GET", absl::StrCat("/api/trace?model=", id, "&input_shape=x=a"));
  EXPECT_EQ(shape.status, 400);
  HttpResponse kind = Http(at, "GET", absl::StrCat("/api/artifact?model=", id, "&kind=bogus"));
  EXPECT_EQ(kind.status, 400);
  EXPECT_EQ(Http(at, "GET", "/api/traces/t999/passes/1").status, 404);
  EXPECT_EQ(Http(at, "GET", "/api/diff?a=t1&b=t2:1").status, 400);
  EXPECT_EQ(Http(at, "GET", "/api/nothing").status, 404);
  // A pipeline kilnd refuses: its message comes back as the stream's error event.
  HttpResponse refused =
      Http(at, "GET", absl::StrCat("/api/trace?model=", id, "&pipeline=NoSuchPass"));
  std::vector<SseEvent> events = ParseEvents(refused.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().name, "error");
  EXPECT_EQ(events.back().data["code"], "INVALID_ARGUMENT");
  EXPECT_NE(events.back().data["message"].get<std::string>().find("NoSuchPass"), std::string::npos);
}

TEST_F(ExplorerGatewayTest, KilndDownIsReported) {
  const std::string address = kilnd_->address();
  ASSERT_EQ(kilnd_->Stop(), 0);
  auto gateway = StartGateway(address);
  nlohmann::json health = nlohmann::json::parse(Http(gateway->address(), "GET", "/api/health").body);
  EXPECT_FALSE(health["serving"].get<bool>());
  EXPECT_NE(health["message"].get<std::string>().find("unavailable"), std::string::npos);
  // Uploads are read by the gateway itself; the trace then fails with kilnd's status.
  const std::string id = Upload(gateway->address(), SmallModel());
  std::vector<SseEvent> events =
      ParseEvents(Http(gateway->address(), "GET", absl::StrCat("/api/trace?model=", id)).body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().name, "error");
  EXPECT_EQ(events.back().data["code"], "UNAVAILABLE");
}

// The gateway passes its bearer token to kilnd as the CLI does: the right one traces, a wrong
// one gets kilnd's UNAUTHENTICATED as the stream's error.
TEST(ExplorerGatewayAuthTest, BearerTokenReachesKilnd) {
  auto dir = std::filesystem::temp_directory_path() / ("kiln-explorer-token-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokens") << "page-secret\n";
  auto kilnd = KilndProcess::Start({"--auth-token-file=" + (dir / "tokens").string()});
  ASSERT_NE(kilnd, nullptr);
  for (const std::string token : {"page-secret", "wrong"}) {
    explorer::ExplorerOptions options;
    options.listen = "127.0.0.1:0";
    options.kilnd.server = kilnd->address();
    options.kilnd.token = token;
    options.web_root = KILN_WEB_APP_DIR;
    auto gateway = explorer::ExplorerServer::Start(options);
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    HttpResponse upload = Http((*gateway)->address(), "POST", "/api/models?name=s.onnx", SmallModel());
    const std::string id = nlohmann::json::parse(upload.body)["model"];
    std::vector<SseEvent> events = ParseEvents(
        Http((*gateway)->address(), "GET", absl::StrCat("/api/trace?model=", id)).body);
    ASSERT_FALSE(events.empty());
    if (token == "page-secret") {
      EXPECT_EQ(events.back().name, "done") << events.back().data.dump();
    } else {
      EXPECT_EQ(events.back().name, "error");
      EXPECT_EQ(events.back().data["code"], "UNAUTHENTICATED");
    }
  }
  EXPECT_EQ(kilnd->Stop(), 0);
  std::filesystem::remove_all(dir);
}

// The stores hold what their bounds allow: the oldest model goes first, and a trace event that
// does not fit keeps its header without its IR.
TEST(ExplorerStoresTest, BoundedInBytes) {
  explorer::ModelStore models(100);
  auto a = models.Put("a.onnx", std::string(40, 'a'));
  auto b = models.Put("b.onnx", std::string(40, 'b'));
  auto c = models.Put("c.onnx", std::string(40, 'c'));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(models.Get((*a)->id), nullptr);
  EXPECT_NE(models.Get((*b)->id), nullptr);
  EXPECT_FALSE(models.Put("huge.onnx", std::string(101, 'h')).ok());

  explorer::TraceStore traces(1000);
  std::shared_ptr<explorer::Trace> trace = traces.Create("m1", "kiln trace", "kiln-opt");
  v1::PassEvent small;
  small.set_index(1);
  small.set_pass_name("InferType");
  small.set_ir_after(std::string(100, 'x'));
  EXPECT_FALSE(trace->Add(small).ir_omitted());
  v1::PassEvent large = small;
  large.set_index(2);
  large.set_ir_after(std::string(5000, 'y'));
  v1::PassEvent kept = trace->Add(large);
  EXPECT_TRUE(kept.ir_omitted());
  EXPECT_TRUE(kept.ir_after().empty());
  EXPECT_EQ(trace->Events().size(), 2u);
}

}  // namespace
}  // namespace kiln::testing
