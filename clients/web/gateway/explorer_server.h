// The Kiln Explorer's gateway: an HTTP server (civetweb) that serves the web app
// (clients/web/app) and an HTTP/JSON API over kilnd's gRPC service, the pass trace as
// server-sent events. It is a gRPC client of kilnd like the CLI (it never links the engine);
// docs/explorer.md lists the API.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "clients/cli/channel.h"

struct mg_context;

namespace kiln::explorer {

struct ExplorerOptions {
  // host:port to listen on (port 0 picks a free one; read it back with address()).
  std::string listen = "127.0.0.1:8080";
  // kilnd: address(es), TLS CA and token as the CLI takes them (its deadline is unused).
  cli::Connection kilnd;
  // Each call to kilnd (a whole trace included) ends by then.
  std::chrono::seconds call_deadline{600};
  std::string web_root;      // the web app's files
  std::string examples_dir;  // *.onnx offered as examples (empty: none)
  int64_t max_upload_bytes = int64_t{64} << 20;
  int64_t max_model_bytes = int64_t{256} << 20;  // all uploads held at once
  int64_t max_trace_bytes = int64_t{512} << 20;  // all traces' events held at once
  int threads = 8;
};

class ExplorerServer {
 public:
  static absl::StatusOr<std::unique_ptr<ExplorerServer>> Start(ExplorerOptions options);
  ~ExplorerServer();
  ExplorerServer(const ExplorerServer&) = delete;
  ExplorerServer& operator=(const ExplorerServer&) = delete;

  // host:port actually listened on.
  const std::string& address() const { return address_; }

  struct State;  // the handlers' shared state (explorer_server.cc)

 private:
  ExplorerServer() = default;
  std::unique_ptr<State> state_;
  mg_context* context_ = nullptr;
  std::string address_;
};

}  // namespace kiln::explorer
