// Weight prefetch (engine/codegen/llvm/weight_prefetch.h) through the driver: a classifier of
// three 512x512 layers at batch 1, whose 1 MiB weights are each read once (a matrix-vector
// product, the case the prefetch is for). Prefetching is a hint: the outputs must be the same
// bits with and without it, and the interpreter's within 1e-5; the plan must fetch every line
// of a weight exactly once, spread over its hosts' iterations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "engine/codegen/llvm/weight_prefetch.h"
#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kWidth = 512;

std::string ThreeLayerClassifier() {
  testing::OnnxModelBuilder b;
  b.Input("x", {1, kWidth});
  b.Output("y");
  std::string input = "x";
  for (int layer = 0; layer < 3; ++layer) {
    std::vector<float> weight;
    for (int64_t i = 0; i < kWidth * kWidth; ++i) {
      weight.push_back(static_cast<float>(((i * 37 + layer) % 23) - 11) / 256.0f);
    }
    std::string w = "w" + std::to_string(layer), product = "p" + std::to_string(layer);
    b.FloatInitializer(w, {kWidth, kWidth}, weight);
    b.IntAttr(b.Node("Gemm", {input, w}, {product}, "dense" + std::to_string(layer)), "transB", 1);
    input = layer == 2 ? product : "r" + std::to_string(layer);
    if (layer < 2) b.Node("Relu", {product}, {input}, "relu" + std::to_string(layer));
  }
  b.Node("Identity", {input}, {"y"}, "out");
  return b.Bytes();
}

// The three layers' matrix-vector products are the same computation: with kernel sharing (the
// default) one kernel serves the three calls, and a kernel main calls more than once hosts no
// fetches. One kernel per call here, the planner's subject.
CompileResult Compile(int64_t footprint_bytes) {
  CompileOptions options;
  options.config = {"lower.share_kernels=false"};
  options.codegen = HostCodegenOptions();
  options.codegen->emit_assembly = true;
  options.codegen->weight_prefetch_footprint_bytes = footprint_bytes;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(ThreeLayerClassifier(), options);
  KILN_CHECK(compiled.ok()) << compiled.status();
  return *std::move(compiled);
}

std::vector<double> Outputs(const CompileResult& compiled, bool native) {
  ModelTensors tensors = MakeModelTensors(compiled);
  std::vector<double> x;
  for (int64_t i = 0; i < kWidth; ++i) x.push_back(static_cast<double>((i * 11) % 17) / 8 - 1);
  tensors.inputs[0] = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, kWidth}, x);
  absl::Status status = native ? RunNative(compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]})
                               : RunModel(compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]});
  EXPECT_TRUE(status.ok()) << status;
  return tensors.outputs[0].ToDoubles();
}

TEST(WeightPrefetchTest, LaterLayersWeightsAreFetchedAheadWithoutChangingAnOutputBit) {
  CompileResult fetched = Compile(0);  // every model counts as too large for the cache
  CompileResult plain = Compile(-1);
  CompileResult by_default = Compile(codegen::CodegenOptions().weight_prefetch_footprint_bytes);
  CompileResult sixteen_mib = Compile(int64_t{16} << 20);
  EXPECT_THAT(fetched.native->assembly, HasSubstr("prefetchnta"));
  EXPECT_THAT(plain.native->assembly, Not(HasSubstr("prefetchnta")));
  // Never by default; at 16 MiB this model's 3 MiB of weights count as staying in cache.
  EXPECT_THAT(by_default.native->assembly, Not(HasSubstr("prefetchnta")));
  EXPECT_THAT(sixteen_mib.native->assembly, Not(HasSubstr("prefetchnta")));

  std::vector<double> with = Outputs(fetched, true), without = Outputs(plain, true);
  std::vector<double> reference = Outputs(plain, false);
  ASSERT_EQ(with.size(), static_cast<size_t>(kWidth));
  EXPECT_EQ(with, without);
  int nonzero = 0;
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_NEAR(with[i], reference[i], 1e-5 * (1 + std::abs(reference[i]))) << i;
    nonzero += with[i] != 0;
  }
  EXPECT_GT(nonzero, kWidth / 4);  // the relus did not zero the comparison away
}

TEST(WeightPrefetchTest, EveryLineOfAFetchedWeightIsFetchedOnceSpreadOverItsHosts) {
  CompileResult compiled = Compile(0);
  std::map<std::string, codegen::PrefetchPlan> plans =
      codegen::PlanWeightPrefetches(*compiled.lowered, 0, 0);
  EXPECT_TRUE(codegen::PlanWeightPrefetches(*compiled.lowered, 0, int64_t{1} << 30).empty());
  EXPECT_TRUE(codegen::PlanWeightPrefetches(*compiled.lowered, 0, -1).empty());

  // Weight -> the line ranges fetched of it, and by how many kernels.
  std::map<size_t, std::vector<std::pair<int64_t, int64_t>>> ranges;
  for (const auto& [kernel, plan] : plans) {
    ASSERT_FALSE(plan.nest.empty()) << kernel;
    ASSERT_EQ(plan.host, plan.nest.back()) << kernel;
    int64_t iterations = 1;
    for (const loop::ForNode* loop : plan.nest) {
      const auto* extent = loop->extent.as<loop::IntImmNode>();
      ASSERT_NE(extent, nullptr) << kernel;
      iterations *= extent->value;
    }
    for (const codegen::PrefetchPlan::Target& target : plan.targets) {
      // The host's iterations cover the share, with no more lines per iteration than that needs.
      EXPECT_GE(target.lines_per_iteration * iterations, target.lines) << kernel;
      EXPECT_LT((target.lines_per_iteration - 1) * iterations, target.lines) << kernel;
      EXPECT_LE(target.lines_per_iteration, 32) << kernel;  // no burst, no unrolled flood
      ranges[target.weight].emplace_back(target.first_line, target.first_line + target.lines);
    }
  }
  // The first layer's weight has no kernel before it; the second's is fetched by the first
  // layer's kernel, the third's shared by the first two layers' kernels (equal FLOPs).
  ASSERT_EQ(ranges.size(), 2u);
  std::vector<size_t> sharers;
  for (auto& [weight, fetched] : ranges) {
    int64_t bytes = static_cast<int64_t>(compiled.lowered->constants[weight].second->bytes.size());
    EXPECT_GE(bytes, kWidth * kWidth * 4);
    std::sort(fetched.begin(), fetched.end());
    int64_t next = 0;
    for (const auto& [begin, end] : fetched) {
      EXPECT_EQ(begin, next) << "weight " << weight;
      EXPECT_LT(begin, end) << "weight " << weight;
      next = end;
    }
    EXPECT_EQ(next, (bytes + 63) / 64) << "weight " << weight;
    sharers.push_back(fetched.size());
  }
  std::sort(sharers.begin(), sharers.end());
  EXPECT_EQ(sharers, (std::vector<size_t>{1, 2}));
}

}  // namespace
}  // namespace kiln::driver
