// kiln-explorer: the Kiln Explorer's gateway. Serves the web app and its HTTP/JSON API on
// --listen, as a gRPC client of the kilnd at --server (docs/explorer.md). Prints
// "kiln-explorer: http=http://HOST:PORT/ kilnd=ADDR" once listening; SIGTERM or SIGINT stops it.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "clients/cli/channel.h"
#include "clients/web/gateway/explorer_server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:8080", "HTTP address (port 0 picks a free port)");
ABSL_FLAG(std::string, server, "",
          "kilnd's address, a DNS name or IP:PORT,IP:PORT (default: $KILN_SERVER, else "
          "127.0.0.1:50051)");
ABSL_FLAG(std::string, token, "", "bearer token for kilnd (default: $KILN_TOKEN)");
ABSL_FLAG(std::string, tls_ca, "", "PEM file of the CA that signed kilnd's certificate (TLS)");
ABSL_FLAG(std::string, web_root, KILN_WEB_APP_DIR, "directory of the web app's files");
ABSL_FLAG(std::string, examples_dir, "", "directory whose *.onnx files the page offers");
ABSL_FLAG(int64_t, deadline_seconds, 600, "deadline of each call to kilnd (a whole trace)");
ABSL_FLAG(int64_t, max_upload_bytes, int64_t{64} << 20, "largest model upload taken");
ABSL_FLAG(int64_t, max_model_bytes, int64_t{256} << 20, "bytes of uploaded models held at once");
ABSL_FLAG(int64_t, max_trace_bytes, int64_t{512} << 20, "bytes of trace events held at once");
ABSL_FLAG(int, threads, 8, "HTTP worker threads (a live trace holds one)");

namespace {

std::string FlagOrEnv(const std::string& flag, const char* env, const char* fallback) {
  if (!flag.empty()) return flag;
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0') return value;
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("kiln-explorer --listen=HOST:PORT --server=KILND [flags]");
  // Flags may be written with dashes (--web-root), as kilnd's and kiln's; absl wants underscores.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> normalized;
  for (std::string& arg : args) {
    if (&arg != &args.front() && arg.starts_with("--")) {
      std::replace(arg.begin(), arg.begin() + std::min(arg.find('='), arg.size()), '-', '_');
      arg.replace(0, 2, "--");
    }
    normalized.push_back(arg.data());
  }
  absl::ParseCommandLine(static_cast<int>(normalized.size()), normalized.data());
  kiln::explorer::ExplorerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.kilnd.server =
      FlagOrEnv(absl::GetFlag(FLAGS_server), "KILN_SERVER", kiln::cli::kDefaultServer);
  if (absl::Status target = kiln::cli::ChannelTarget(options.kilnd.server).status(); !target.ok()) {
    std::cerr << "kiln-explorer: --server: " << target.message() << "\n";
    return 2;
  }
  options.kilnd.token = FlagOrEnv(absl::GetFlag(FLAGS_token), "KILN_TOKEN", "");
  if (const std::string ca = absl::GetFlag(FLAGS_tls_ca); !ca.empty()) {
    std::ifstream file(ca, std::ios::binary);
    std::ostringstream pem;
    pem << file.rdbuf();
    if (!file || pem.str().empty()) {
      std::cerr << "kiln-explorer: cannot read --tls-ca file '" << ca << "'\n";
      return 2;
    }
    options.kilnd.tls_ca_pem = pem.str();
  }
  options.web_root = absl::GetFlag(FLAGS_web_root);
  options.examples_dir = absl::GetFlag(FLAGS_examples_dir);
  options.call_deadline = std::chrono::seconds(absl::GetFlag(FLAGS_deadline_seconds));
  options.max_upload_bytes = absl::GetFlag(FLAGS_max_upload_bytes);
  options.max_model_bytes = absl::GetFlag(FLAGS_max_model_bytes);
  options.max_trace_bytes = absl::GetFlag(FLAGS_max_trace_bytes);
  options.threads = absl::GetFlag(FLAGS_threads);

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  absl::StatusOr<std::unique_ptr<kiln::explorer::ExplorerServer>> server =
      kiln::explorer::ExplorerServer::Start(options);
  if (!server.ok()) {
    std::cerr << "kiln-explorer: " << server.status().message() << "\n";
    return 1;
  }
  std::cout << "kiln-explorer: http=http://" << (*server)->address()
            << "/ kilnd=" << options.kilnd.server << std::endl;
  int signal = 0;
  sigwait(&stop, &signal);
  server->reset();
  return 0;
}
