// kilnd: the Kiln compilation server. Parses flags, serves kiln.v1.Compiler
// with health and reflection, exports /metrics, and shuts down gracefully on
// SIGTERM or SIGINT (health flips to NOT_SERVING, new calls are refused, work
// in flight drains for the grace period and is then cancelled).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "engine/driver/driver.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/exposer.h"
#include "service/bearer_token_processor.h"
#include "service/compile_request.h"
#include "service/compiler_service.h"
#include "service/metrics.h"
#include "service/worker_process.h"
#include "tools/common/flags_usage.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "gRPC address (port 0 picks a free port)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "address of the Prometheus /metrics endpoint (empty: none; port 0 picks one)");
ABSL_FLAG(int, workers, 0, "compile worker threads (0: one per core)");
ABSL_FLAG(int, queue_depth, 8, "compiles that may wait for a worker before RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_request_bytes, int64_t{512} << 20,
          "largest request accepted (models are large: gRPC's 4 MiB default is far too small)");
ABSL_FLAG(int64_t, max_event_bytes, int64_t{64} << 20,
          "bytes of TracePass events buffered ahead of a slow reader");
ABSL_FLAG(int64_t, cache_bytes, int64_t{1} << 30, "bound of the in-process result cache");
ABSL_FLAG(std::string, cache_redis, "",
          "HOST:PORT (or unix:PATH) of a Redis server holding Compile results shared by every replica (empty: "
          "none); Redis down or slow never fails a request");
ABSL_FLAG(absl::Duration, cache_redis_ttl, absl::Hours(24), "how long shared results live");
ABSL_FLAG(int64_t, cache_redis_max_value_bytes, int64_t{64} << 20,
          "larger Compile results are not shared (nor read back)");
ABSL_FLAG(absl::Duration, cache_redis_timeout, absl::Milliseconds(250),
          "deadline of connecting to Redis and of each command");
ABSL_FLAG(absl::Duration, default_deadline, absl::Minutes(5),
          "deadline of requests that carry none");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(10),
          "how long in-flight calls may finish after SIGTERM before they are cancelled");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (with --tls_key: serve TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA that client certificates must chain to (mTLS)");
ABSL_FLAG(std::string, auth_token_file, "",
          "file of accepted bearer tokens, one per line (health and reflection stay open)");
ABSL_FLAG(absl::Duration, keepalive_time, absl::Minutes(1),
          "interval of keepalive pings on idle connections");
ABSL_FLAG(absl::Duration, max_connection_age, absl::Minutes(30),
          "close connections after this age, so clients rebalance (0: never); calls in flight "
          "get --default-deadline to finish");
ABSL_FLAG(int, max_concurrent_streams, 16,
          "calls one connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS)");
ABSL_FLAG(int64_t, max_compile_bytes, int64_t{4} << 30,
          "bytes of tensor data one compile may hold (weights, folded constants, interpreter "
          "buffers): over it, RESOURCE_EXHAUSTED naming the node");
ABSL_FLAG(std::string, isolate, "thread",
          "where compiles run: `thread` (kilnd's worker threads) or `process` (one worker "
          "process per worker thread, with its own rlimits: a crash costs one request)");
ABSL_FLAG(int64_t, isolate_address_space, 0,
          "with --isolate=process: each worker process's address-space limit in bytes "
          "(0: --max-compile-bytes plus 2 GiB)");
ABSL_FLAG(int, internal_worker_fd, -1, "internal: serve compile jobs on this fd (a worker process)");
ABSL_FLAG(int64_t, max_fold_steps, int64_t{4'000'000'000},
          "interpreter steps constant folding may take in one compile (a few ns each)");

namespace {

constexpr char kServiceName[] = "kiln.v1.Compiler";

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int signal) {
  unsigned char byte = static_cast<unsigned char>(signal);
  (void)!write(g_signal_pipe[1], &byte, 1);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "kilnd: %s\n", message.c_str());
  return 2;
}

// Flags may be written with dashes (--metrics-listen); absl wants underscores.
std::vector<char*> NormalizeFlags(int argc, char** argv, std::vector<std::string>* storage) {
  storage->reserve(argc);
  std::vector<char*> out;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i > 0 && arg.rfind("--", 0) == 0) {
      size_t end = arg.find('=');
      for (size_t k = 2; k < arg.size() && k < end; ++k) {
        if (arg[k] == '-') arg[k] = '_';
      }
    }
    storage->push_back(std::move(arg));
    out.push_back(storage->back().data());
  }
  return out;
}

// kilnd as a worker process of --isolate=process: its own limits, its own
// result cache (a share of --cache-bytes), jobs from `fd` until kilnd closes
// it. It dies with kilnd and leaves signals to kilnd.
int ServeWorker(int fd, const kiln::service::ServiceOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  int64_t address_space = absl::GetFlag(FLAGS_isolate_address_space);
  const int64_t cache_share = options.cache_bytes / std::max(1, options.workers);
  if (address_space <= 0) {
    address_space = options.compile_limits.max_bytes + cache_share + (int64_t{2} << 30);
  }
  rlimit limit{static_cast<rlim_t>(address_space), static_cast<rlim_t>(address_space)};
  setrlimit(RLIMIT_AS, &limit);
  kiln::service::Metrics metrics(kiln::driver::RegisteredPasses());  // not exported
  kiln::service::ResultCache cache(cache_share);
  return kiln::service::ServeWorkerProcess(
      fd, kiln::service::JobEnvironment{&metrics, &cache, options.compile_limits,
                                        options.max_event_bytes});
}

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  *contents = buffer.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tools::SetToolUsage("kilnd [--listen=HOST:PORT] [--metrics-listen=HOST:PORT] [...]",
                            {__FILE__});
  std::vector<std::string> storage;
  std::vector<char*> args = NormalizeFlags(argc, argv, &storage);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());

  // SIGTERM and SIGINT write their number to a pipe that one thread reads:
  // any thread may receive a signal (libraries start threads of their own),
  // and a handler may do little more than write().
  if (pipe(g_signal_pipe) != 0) return Fail("pipe() failed");
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  kiln::service::ServiceOptions options;
  options.workers = absl::GetFlag(FLAGS_workers);
  if (options.workers <= 0) options.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.queue_depth = absl::GetFlag(FLAGS_queue_depth);
  if (options.queue_depth < 0) return Fail("--queue-depth must be >= 0");
  options.max_event_bytes = absl::GetFlag(FLAGS_max_event_bytes);
  options.cache_bytes = absl::GetFlag(FLAGS_cache_bytes);
  options.default_deadline = absl::GetFlag(FLAGS_default_deadline);
  if (options.default_deadline <= absl::ZeroDuration()) {
    return Fail("--default-deadline must be positive");
  }
  options.compile_limits.max_bytes = absl::GetFlag(FLAGS_max_compile_bytes);
  options.compile_limits.max_interpreter_steps = absl::GetFlag(FLAGS_max_fold_steps);
  if (options.compile_limits.max_bytes <= 0 || options.compile_limits.max_interpreter_steps <= 0) {
    return Fail("--max-compile-bytes and --max-fold-steps must be positive");
  }
  // A worker process (--isolate=process) serves jobs and nothing else.
  if (int fd = absl::GetFlag(FLAGS_internal_worker_fd); fd >= 0) {
    return ServeWorker(fd, options);
  }
  const std::string isolate = absl::GetFlag(FLAGS_isolate);
  if (isolate != "thread" && isolate != "process") {
    return Fail("--isolate must be `thread` or `process`");
  }
  const int max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  if (max_concurrent_streams <= 0) return Fail("--max-concurrent-streams must be positive");
  const int64_t max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  if (max_request_bytes <= 0 || max_request_bytes > (int64_t{2} << 30) - 1) {
    return Fail("--max-request-bytes must be in [1, 2 GiB)");
  }
  if (std::string path = absl::GetFlag(FLAGS_auth_token_file); !path.empty()) {
    std::string contents;
    if (!ReadFile(path, &contents)) return Fail(absl::StrCat("cannot read --auth-token-file ", path));
    for (absl::string_view line : absl::StrSplit(contents, '\n', absl::SkipWhitespace())) {
      options.auth_tokens.Add(std::string(absl::StripAsciiWhitespace(line)));
    }
    if (options.auth_tokens.empty()) return Fail(absl::StrCat(path, " holds no token"));
  }

  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  const bool tls = !absl::GetFlag(FLAGS_tls_cert).empty() || !absl::GetFlag(FLAGS_tls_key).empty();
  // A client CA without a server certificate would serve plaintext while
  // its operator believes clients are verified: refuse to start.
  if (!absl::GetFlag(FLAGS_tls_client_ca).empty() &&
      (absl::GetFlag(FLAGS_tls_cert).empty() || absl::GetFlag(FLAGS_tls_key).empty())) {
    return Fail("--tls-client-ca needs --tls-cert and --tls-key (mTLS is TLS with client "
                "certificates)");
  }
  if (tls && (absl::GetFlag(FLAGS_tls_cert).empty() || absl::GetFlag(FLAGS_tls_key).empty())) {
    return Fail("--tls-cert and --tls-key go together");
  }
  if (tls) {
    grpc::SslServerCredentialsOptions tls_options;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!ReadFile(absl::GetFlag(FLAGS_tls_key), &pair.private_key) ||
        !ReadFile(absl::GetFlag(FLAGS_tls_cert), &pair.cert_chain)) {
      return Fail("cannot read --tls-cert or --tls-key");
    }
    tls_options.pem_key_cert_pairs.push_back(pair);
    if (std::string ca_path = absl::GetFlag(FLAGS_tls_client_ca); !ca_path.empty()) {
      if (!ReadFile(ca_path, &tls_options.pem_root_certs)) {
        return Fail("cannot read --tls-client-ca");
      }
      tls_options.client_certificate_request =
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    credentials = grpc::SslServerCredentials(tls_options);
  }

  kiln::service::Metrics metrics(kiln::driver::RegisteredPasses());
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string metrics_address = "none";
  if (std::string listen = absl::GetFlag(FLAGS_metrics_listen); !listen.empty()) {
    try {
      exposer = std::make_unique<prometheus::Exposer>(listen);
    } catch (const std::exception& e) {
      return Fail(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
    }
    exposer->RegisterCollectable(metrics.registry());
    std::vector<int> ports = exposer->GetListeningPorts();
    metrics_address = absl::StrCat(listen.substr(0, listen.rfind(':')), ":",
                                   ports.empty() ? 0 : ports.front());
  }

  // Under TLS, tokens are checked as the headers arrive, before the body.
  if (tls && !options.auth_tokens.empty()) {
    credentials->SetAuthMetadataProcessor(
        std::make_shared<kiln::service::BearerTokenProcessor>(&options.auth_tokens));
  }
  if (isolate == "process") {
    auto runner = std::make_shared<kiln::service::ProcessIsolatedJobRunner>(
        std::vector<std::string>(argv, argv + argc), options.workers, &metrics);
    if (absl::Status started = runner->Start(); !started.ok()) {
      return Fail(std::string(started.message()));
    }
    options.runner = std::move(runner);
  }
  if (std::string redis = absl::GetFlag(FLAGS_cache_redis); !redis.empty()) {
    kiln::service::RedisStoreOptions redis_options;
    redis_options.address = redis;
    redis_options.timeout = absl::GetFlag(FLAGS_cache_redis_timeout);
    redis_options.max_value_bytes = absl::GetFlag(FLAGS_cache_redis_max_value_bytes);
    if (redis_options.timeout <= absl::ZeroDuration() || redis_options.max_value_bytes <= 0 ||
        absl::GetFlag(FLAGS_cache_redis_ttl) < absl::Seconds(1)) {
      return Fail("--cache-redis-timeout, --cache-redis-max-value-bytes and --cache-redis-ttl "
                  "(at least 1s) must be positive");
    }
    options.shared_cache = std::make_shared<kiln::service::RedisStore>(redis_options);
    options.shared_ttl = absl::GetFlag(FLAGS_cache_redis_ttl);
  }
  kiln::service::CompilerService service(options, &metrics);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  int port = 0;
  builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_request_bytes));
  // Bounds what requests can hold before a handler sees them (a full worker
  // queue is refused only after the request arrived): gRPC's buffers for
  // four maximal requests, and a bounded number of RPC threads.
  grpc::ResourceQuota quota("kilnd");
  quota.Resize(static_cast<size_t>(4 * max_request_bytes));
  quota.SetMaxThreads(std::max(16, 4 * options.workers + 8));
  builder.SetResourceQuota(quota);
  // Pollers wake this often to notice shutdown (the default, 5 s, would hold
  // SIGTERM for that long when a client keeps an idle connection open).
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::CQ_TIMEOUT_MSEC, 100);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(absl::GetFlag(FLAGS_keepalive_time))));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Keepalive enforcement: a client may ping at most every 10 s (and
  // without calls); two pings too early and its connection is closed.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, max_concurrent_streams);
  if (absl::Duration age = absl::GetFlag(FLAGS_max_connection_age); age > absl::ZeroDuration()) {
    auto millis = [](absl::Duration d) {
      return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(d), INT32_MAX));
    };
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, millis(age));
    // Calls still running when a connection reaches its age may finish.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               millis(options.default_deadline + absl::Seconds(30)));
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail(absl::StrCat("cannot listen on ", listen));
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(kServiceName, true);
  health->SetServingStatus(true);

  std::printf("kilnd: grpc=%s:%d metrics=%s\n", listen.substr(0, listen.rfind(':')).c_str(), port,
              metrics_address.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "kilnd: %d workers, queue depth %d, version %s\n", options.workers,
               options.queue_depth, kiln::service::KilnVersion());

  std::thread signal_waiter([&] {
    unsigned char signal = 0;
    while (read(g_signal_pipe[0], &signal, 1) != 1) {
    }
    std::fprintf(stderr, "kilnd: %s: draining\n", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    health->SetServingStatus(kServiceName, false);
    health->SetServingStatus(false);
    service.StartDraining();  // new calls: UNAVAILABLE
    if (!service.WaitForIdle(absl::GetFlag(FLAGS_grace_period))) {
      std::fprintf(stderr, "kilnd: grace period over: cancelling the calls in flight\n");
    }
    // Our handlers are done (or past their grace). Half a second lets the
    // last responses reach their clients; a longer deadline would only wait
    // on idle client connections.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  });
  server->Wait();
  signal_waiter.join();
  service.Shutdown();
  std::fprintf(stderr, "kilnd: stopped\n");
  // Left to the exit: civetweb's orderly stop polls for up to two seconds,
  // and nothing needs it once the process ends.
  (void)exposer.release();
  return 0;
}
