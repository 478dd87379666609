// Three kilnd replicas on loopback sharing one real redis-server, called as a build farm calls
// them: one channel over the three addresses with the clients' service config (round-robin,
// UNAVAILABLE retried on another replica). 60 compiles of 10 models: every replica serves its
// share, a model compiled on one replica is answered from the shared cache on another, one
// replica is killed with SIGKILL while calls run and none is lost, and compiles go on after
// Redis is killed too.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "tests/integration/kilnd_process.h"
#include "tests/integration/redis_process.h"
#include "tests/integration/test_models.h"

namespace kiln::testing {
namespace {

std::string ServiceConfig() {
  std::ifstream file(KILN_SERVICE_CONFIG_PATH);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The balanced channel a client of several replicas uses (the kiln CLI builds the same).
std::shared_ptr<grpc::Channel> BalancedChannel(const std::vector<const KilndProcess*>& replicas) {
  std::string target = "ipv4:";
  for (size_t i = 0; i < replicas.size(); ++i) {
    target += (i > 0 ? "," : "") + replicas[i]->address();
  }
  grpc::ChannelArguments arguments;
  arguments.SetServiceConfigJSON(ServiceConfig());
  arguments.SetMaxReceiveMessageSize(512 << 20);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments);
}

double Metric(const KilndProcess& kilnd, const std::string& series) {
  return MetricValue(HttpGet(kilnd.metrics_address(), "/metrics"), series);
}

double CompilesServed(const KilndProcess& kilnd) {
  return Metric(kilnd, "kiln_requests_total{code=\"OK\",rpc=\"Compile\"}");
}

grpc::Status Compile(v1::Compiler::Stub& stub, int model) {
  v1::CompileRequest request;
  request.set_onnx(SmallModel(1.0f + static_cast<float>(model)));
  request.set_name("small");
  v1::CompileResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  grpc::Status status = stub.Compile(&context, request, &response);
  if (status.ok() && response.artifacts_size() == 0) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "a response without artifacts");
  }
  return status;
}

TEST(ReplicasTest, SixtyCompilesSpreadOverThreeReplicasLoseNothingWhenOneOrRedisDies) {
  auto redis = RedisProcess::Start();
  ASSERT_NE(redis, nullptr);
  std::vector<std::unique_ptr<KilndProcess>> replicas;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(
        KilndProcess::Start({"--cache-redis=" + redis->address(), "--cache-redis-timeout=60s"}));
    ASSERT_NE(replicas.back(), nullptr);
  }
  auto channel = BalancedChannel({replicas[0].get(), replicas[1].get(), replicas[2].get()});
  auto stub = v1::Compiler::NewStub(channel);
  // Round-robin spreads calls over the replicas it is connected to: wait (bounded) until calls
  // have reached all three, so the spread below is the policy's, not the connection order's.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto all_reached = [&] {
    for (const auto& replica : replicas) {
      if (Metric(*replica, "kiln_requests_total{code=\"OK\",rpc=\"ListPasses\"}") < 1) return false;
    }
    return true;
  };
  while (!all_reached() && std::chrono::steady_clock::now() < deadline) {
    v1::ListPassesResponse passes;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    stub->ListPasses(&context, v1::ListPassesRequest(), &passes);
  }
  ASSERT_TRUE(all_reached());

  // 30 compiles one after another: 10 per replica.
  int next = 0;
  for (; next < 30; ++next) ASSERT_TRUE(Compile(*stub, next % 10).ok()) << next;
  for (const auto& replica : replicas) EXPECT_GE(CompilesServed(*replica), 10);
  std::cout << "first 30 compiles served by the replicas: " << CompilesServed(*replicas[0]) << ", "
            << CompilesServed(*replicas[1]) << ", " << CompilesServed(*replicas[2]) << "\n";
  // Each model was compiled once and answered from Redis on the replicas that met it later.
  double hits = 0;
  for (const auto& replica : replicas) {
    hits += Metric(*replica, "kiln_shared_cache_requests_total{result=\"hit\"}");
  }
  EXPECT_GE(hits, 10) << "each of the 10 models met at least one other replica";

  // 20 more from three threads; replica 1 is killed after the first few complete.
  std::atomic<int> done{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&, t] {
      auto own = v1::Compiler::NewStub(channel);
      for (int k = t; k < 20; k += 3) {
        grpc::Status status = Compile(*own, 10 + k);
        if (!status.ok()) {
          ++failed;
          ADD_FAILURE() << "compile " << 10 + k << ": " << status.error_message();
        }
        ++done;
      }
    });
  }
  while (done < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(kill(replicas[1]->pid(), SIGKILL), 0);
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failed, 0);
  EXPECT_FALSE(replicas[1]->Running());

  // Redis killed: the 10 last compiles (models already shared, and new ones) still succeed.
  redis->Kill();
  for (int k = 0; k < 10; ++k) EXPECT_TRUE(Compile(*stub, 25 + k).ok()) << k;
  std::cout << "all 60 compiles: replica 0 served " << CompilesServed(*replicas[0])
            << ", replica 2 served " << CompilesServed(*replicas[2])
            << ", replica 1 (killed) the rest; failed calls: " << failed << "\n";
  for (int i : {0, 2}) {
    EXPECT_GE(Metric(*replicas[i], "kiln_shared_cache_requests_total{result=\"unavailable\"}"), 1);
    EXPECT_EQ(replicas[i]->Stop(), 0);
  }
}

}  // namespace
}  // namespace kiln::testing
