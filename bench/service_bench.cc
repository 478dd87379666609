// Figures for the service (issue 6), through a real gRPC server on loopback
// in this process (the same CompilerService kilnd serves):
// - TracePass with the IR after every pass in JSON, against Compile of the
//   same model (target: at most 10% slower);
// - throughput of a batch of small models with 2 workers against 1 worker
//   (target: at least 1.8x);
// - time from sending a TracePass to its first PassEvent, against the whole
//   compile.
// Every request differs (the target cpu string is part of the compile id),
// so nothing is answered from the cache. Times are medians of repeated runs.
// KILN_BENCH_NO_CACHE=1 gives the servers no result cache (results are then
// freed instead of kept); KILN_BENCH_ONLY=throughput runs only part 2.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/resnet_model.h"
#include "grpcpp/grpcpp.h"
#include "engine/driver/driver.h"
#include "service/compiler_service.h"
#include "service/metrics.h"

namespace {

using kiln::service::CompilerService;
using kiln::service::Metrics;
using kiln::service::ServiceOptions;

double Seconds(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A server with `workers` workers on a free loopback port.
struct Server {
  explicit Server(int workers) {
    ServiceOptions options;
    options.workers = workers;
    options.queue_depth = 64;
    if (std::getenv("KILN_BENCH_NO_CACHE")) options.cache_bytes = 0;
    service = std::make_unique<CompilerService>(options, &metrics);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    builder.SetMaxReceiveMessageSize(512 << 20);
    server = builder.BuildAndStart();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(512 << 20);
    args.SetMaxSendMessageSize(512 << 20);
    stub = kiln::v1::Compiler::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args));
  }
  ~Server() {
    server->Shutdown(std::chrono::system_clock::now());
    service->Shutdown();
  }
  Metrics metrics{kiln::PassRegistry::Global()};
  std::unique_ptr<CompilerService> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<kiln::v1::Compiler::Stub> stub;
};

int variant = 0;
kiln::v1::CompileRequest Request(const std::string& model) {
  kiln::v1::CompileRequest request;
  request.set_onnx(model);
  request.add_artifacts(kiln::v1::METADATA_JSON);
  request.mutable_target()->set_cpu("bench-" + std::to_string(variant++));
  return request;
}

void Check(const grpc::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "RPC failed: %s\n", status.error_message().c_str());
    std::abort();
  }
}

}  // namespace

int main() {
  kiln::driver::RegisteredPasses();
  const std::string resnet = kiln::bench::ResNetBuilder(true).Build();
  // A small model: the graph of the ResNet with weights as inputs is too
  // large; a ResNet without weights still lowers 53 convolutions.
  const std::string small = kiln::bench::ResNetBuilder(false).Build();

  // KILN_BENCH_ONLY=throughput skips the first part (for profiling).
  const char* only = std::getenv("KILN_BENCH_ONLY");
  // 1. TracePass (IR after every pass, JSON) against Compile.
  if (only == nullptr || std::string(only) != "throughput") {
    Server server(1);
    std::vector<double> compile, trace, first_event;
    for (int round = 0; round < 5; ++round) {
      kiln::v1::CompileResponse response;
      compile.push_back(Seconds([&] {
        grpc::ClientContext context;
        Check(server.stub->Compile(&context, Request(resnet), &response));
      }));
      kiln::v1::TraceRequest request;
      *request.mutable_compile() = Request(resnet);
      request.set_ir_after(true);
      request.set_format(kiln::v1::JSON);
      int64_t bytes = 0;
      auto start = std::chrono::steady_clock::now();
      trace.push_back(Seconds([&] {
        grpc::ClientContext context;
        auto reader = server.stub->TracePass(&context, request);
        kiln::v1::PassEvent event;
        bool first = true;
        while (reader->Read(&event)) {
          if (first) {
            first_event.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            first = false;
          }
          bytes += static_cast<int64_t>(event.ByteSizeLong());
        }
        Check(reader->Finish());
      }));
      if (round == 0) std::printf("  trace events carry %.1f MB of IR JSON\n", bytes / 1e6);
    }
    double c = Median(compile), t = Median(trace), f = Median(first_event);
    std::printf("ResNet-50-sized model (%.0f MB), 1 worker, median of 5:\n", resnet.size() / 1e6);
    std::printf("  Compile:                              %8.1f ms\n", c * 1e3);
    std::printf("  TracePass, IR after every pass, JSON: %8.1f ms  %+6.1f%% vs Compile (target <= +10%%)\n",
                t * 1e3, (t / c - 1) * 100);
    std::printf("  request -> first PassEvent:           %8.1f ms  (%.0f%% of the trace; import comes first)\n",
                f * 1e3, f / t * 100);
  }

  // 2. Throughput: a batch of small models, 1 worker against 2. Each server
  // is warmed up first (connection, handler threads), so the batch measures
  // compiles.
  const int kBatch = 16;
  auto batch_seconds = [&](Server& server) {
    std::vector<kiln::v1::CompileRequest> requests;
    for (int i = 0; i < kBatch; ++i) requests.push_back(Request(small));
    return Seconds([&] {
      std::vector<std::thread> clients;
      for (int i = 0; i < kBatch; ++i) {
        clients.emplace_back([&, i] {
          grpc::ClientContext context;
          kiln::v1::CompileResponse response;
          Check(server.stub->Compile(&context, requests[i], &response));
        });
      }
      for (std::thread& client : clients) client.join();
    });
  };
  Server one_worker(1), two_workers(2);
  batch_seconds(one_worker);
  batch_seconds(two_workers);
  // The baseline: the same batch through the driver directly, on 1 and on 2
  // threads (what the engine itself allows; gRPC adds the rest).
  auto driver_seconds = [&](int threads) {
    return Seconds([&] {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          for (int i = t; i < kBatch; i += threads) {
            kiln::driver::CompileOptions options;
            if (!kiln::driver::CompileOnnx(small, options).ok()) std::abort();
          }
        });
      }
      for (std::thread& thread : pool) thread.join();
    });
  };
  std::vector<double> one, two, direct_one, direct_two;
  for (int round = 0; round < 5; ++round) {
    one.push_back(batch_seconds(one_worker));
    two.push_back(batch_seconds(two_workers));
    direct_one.push_back(driver_seconds(1));
    direct_two.push_back(driver_seconds(2));
  }
  double o = Median(one), w = Median(two);
  std::printf("batch of 16 through the driver, no gRPC: 1 thread %.1f ms, 2 threads %.1f ms (%.2fx)\n",
              Median(direct_one) * 1e3, Median(direct_two) * 1e3,
              Median(direct_one) / Median(direct_two));
  std::printf("batch of 16 small models (ResNet graph, weights as inputs), median of 5:\n");
  std::printf("  1 worker:  %8.1f ms\n  2 workers: %8.1f ms  throughput %.2fx (target >= 1.8x on 2 cores)\n",
              o * 1e3, w * 1e3, o / w);
  return 0;
}
