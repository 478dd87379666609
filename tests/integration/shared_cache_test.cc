// The shared result cache end to end: kilnd replicas started with --cache-redis on one real
// redis-server (Debian's), called through the generated stubs. A model compiled on one replica
// is answered by another without compiling; a corrupt entry is a miss that is replaced; Redis
// killed or never there costs no request.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "kiln/v1/compiler.grpc.pb.h"
#include "tests/integration/kilnd_process.h"
#include "tests/integration/redis_process.h"
#include "tests/integration/test_models.h"

namespace kiln::testing {
namespace {

v1::CompileRequest Request(float scale) {
  v1::CompileRequest request;
  request.set_onnx(SmallModel(scale));
  request.set_name("small");
  return request;
}

grpc::Status Compile(const KilndProcess& kilnd, const v1::CompileRequest& request,
                     v1::CompileResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  return v1::Compiler::NewStub(kilnd.Channel())->Compile(&context, request, response);
}

double Metric(const KilndProcess& kilnd, const std::string& series) {
  return MetricValue(HttpGet(kilnd.metrics_address(), "/metrics"), series);
}

double Shared(const KilndProcess& kilnd, const std::string& result) {
  return Metric(kilnd, "kiln_shared_cache_requests_total{result=\"" + result + "\"}");
}

// The same artifacts, byte for byte.
void ExpectSameArtifacts(const v1::CompileResponse& a, const v1::CompileResponse& b) {
  ASSERT_EQ(a.artifacts_size(), b.artifacts_size());
  for (int i = 0; i < a.artifacts_size(); ++i) {
    EXPECT_EQ(a.artifacts(i).name(), b.artifacts(i).name());
    EXPECT_EQ(a.artifacts(i).content(), b.artifacts(i).content()) << a.artifacts(i).name();
  }
}

// kilnd's flags for `redis`: a command deadline no loaded machine reaches, so only a dead server
// (refused at once) is ever unavailable here.
std::vector<std::string> CacheFlags(const RedisProcess& redis) {
  return {"--cache-redis=" + redis.address(), "--cache-redis-timeout=60s"};
}

// The keys kilnd stored, one per line.
std::string Keys(const RedisProcess& redis) { return redis.Cli("--scan --pattern 'kiln:v1:*'"); }

TEST(SharedCacheTest, AModelCompiledOnOneReplicaIsAnsweredByAnotherWithoutCompiling) {
  auto redis = RedisProcess::Start();
  ASSERT_NE(redis, nullptr);
  auto a = KilndProcess::Start(CacheFlags(*redis));
  auto b = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);

  v1::CompileResponse on_a, on_b;
  ASSERT_TRUE(Compile(*a, Request(1.5f), &on_a).ok());
  ASSERT_TRUE(Compile(*b, Request(1.5f), &on_b).ok());
  EXPECT_EQ(Shared(*a, "miss"), 1);
  EXPECT_EQ(Metric(*a, "kiln_cache_misses_total"), 1);  // a compiled
  EXPECT_EQ(Shared(*b, "hit"), 1);
  EXPECT_EQ(Metric(*b, "kiln_cache_misses_total"), 0);  // b did not
  EXPECT_EQ(Metric(*b, "kiln_shared_cache_up"), 1);

  EXPECT_EQ(on_b.compile_id(), on_a.compile_id());
  ExpectSameArtifacts(on_a, on_b);
  // One entry, under a content address.
  std::string keys = Keys(*redis);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), '\n'), 1) << keys;
  EXPECT_EQ(keys.rfind("kiln:v1:response:", 0), 0u) << keys;
  // Its time to live is the default day.
  int ttl = std::stoi(redis->Cli("TTL '" + keys.substr(0, keys.size() - 1) + "'"));
  EXPECT_GT(ttl, 23 * 3600);
  EXPECT_LE(ttl, 24 * 3600);
  EXPECT_EQ(a->Stop(), 0);
  EXPECT_EQ(b->Stop(), 0);
}

TEST(SharedCacheTest, ACorruptEntryIsAMissThatIsCompiledAndReplaced) {
  auto redis = RedisProcess::Start();
  ASSERT_NE(redis, nullptr);
  auto a = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(a, nullptr);
  v1::CompileResponse first;
  ASSERT_TRUE(Compile(*a, Request(2.5f), &first).ok());
  std::string keys = Keys(*redis);
  ASSERT_EQ(std::count(keys.begin(), keys.end(), '\n'), 1) << keys;
  std::string key = keys.substr(0, keys.size() - 1);
  // One byte more after the stored response: its digest no longer holds.
  ASSERT_GT(std::stoll(redis->Cli("APPEND '" + key + "' Z")), 0);

  auto b = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(b, nullptr);
  v1::CompileResponse second;
  ASSERT_TRUE(Compile(*b, Request(2.5f), &second).ok());
  EXPECT_EQ(Shared(*b, "corrupt"), 1);
  EXPECT_EQ(Metric(*b, "kiln_cache_misses_total"), 1);  // compiled instead
  ExpectSameArtifacts(first, second);
  // The entry was stored again, whole: a third replica is answered from it.
  auto c = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(c, nullptr);
  v1::CompileResponse third;
  ASSERT_TRUE(Compile(*c, Request(2.5f), &third).ok());
  EXPECT_EQ(Shared(*c, "hit"), 1);
  EXPECT_EQ(Metric(*c, "kiln_cache_misses_total"), 0);
  for (auto* kilnd : {a.get(), b.get(), c.get()}) EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(SharedCacheTest, AResponseOverTheSizeBoundIsNeitherStoredNorRead) {
  auto redis = RedisProcess::Start();
  ASSERT_NE(redis, nullptr);
  std::vector<std::string> small = CacheFlags(*redis);
  small.push_back("--cache-redis-max-value-bytes=1000");  // the small model's response is larger
  auto a = KilndProcess::Start(small);
  ASSERT_NE(a, nullptr);
  v1::CompileResponse response;
  ASSERT_TRUE(Compile(*a, Request(8.5f), &response).ok());
  EXPECT_GT(response.ByteSizeLong(), 1000u);
  EXPECT_EQ(Keys(*redis), "");
  // A value stored by a replica with a larger bound is not fetched by this one.
  auto b = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(Compile(*b, Request(9.5f), &response).ok());
  ASSERT_NE(Keys(*redis), "");
  auto c = KilndProcess::Start(small);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(Compile(*c, Request(9.5f), &response).ok());
  EXPECT_EQ(Shared(*c, "miss"), 1);
  EXPECT_EQ(Metric(*c, "kiln_cache_misses_total"), 1);  // compiled
  for (auto* kilnd : {a.get(), b.get(), c.get()}) EXPECT_EQ(kilnd->Stop(), 0);
}

TEST(SharedCacheTest, RedisKilledOrNeverThereFailsNoCompile) {
  auto redis = RedisProcess::Start();
  ASSERT_NE(redis, nullptr);
  auto a = KilndProcess::Start(CacheFlags(*redis));
  ASSERT_NE(a, nullptr);
  v1::CompileResponse response;
  ASSERT_TRUE(Compile(*a, Request(3.5f), &response).ok());
  redis->Kill();
  for (float scale : {4.5f, 5.5f, 6.5f}) {
    EXPECT_TRUE(Compile(*a, Request(scale), &response).ok()) << scale;
  }
  EXPECT_GE(Shared(*a, "unavailable"), 1);
  EXPECT_EQ(Metric(*a, "kiln_shared_cache_up"), 0);
  // One line says so, however many requests find it down.
  std::string log = a->Log();
  size_t first = log.find("shared cache: Redis at");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("shared cache: Redis at", first + 1), std::string::npos) << log;
  EXPECT_NE(log.find("is unavailable"), std::string::npos) << log;
  EXPECT_EQ(a->Stop(), 0);

  // A server that was never there: kilnd starts and compiles.
  auto b = KilndProcess::Start({"--cache-redis=unix:/nonexistent/kiln-redis.sock"});
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(Compile(*b, Request(7.5f), &response).ok());
  EXPECT_EQ(Shared(*b, "unavailable"), 1);
  EXPECT_EQ(b->Stop(), 0);
}

}  // namespace
}  // namespace kiln::testing
