// The default schedule, as its record shows it: producers inlined, the
// reduction's vector loop split off and vectorized inside the reduce loop,
// outer loops fused until there is enough parallel work, and elementwise
// outputs fused, split and vectorized. The vectorized kernels still compute
// the right values (checked against a plain triple loop).
#include "engine/lower/default_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "engine/loop/functor.h"
#include "tests/unit/lower/lower_test_util.h"

namespace kiln {
namespace {

std::vector<std::string> Primitives(const te::Schedule& schedule) {
  std::vector<std::string> names;
  for (const te::ScheduleStep& step : schedule.record()) names.push_back(step.primitive);
  return names;
}

std::vector<loop::ForKind> LoopKinds(const loop::PrimFuncNode& func) {
  std::vector<loop::ForKind> kinds;
  loop::PreOrderVisit(func.body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kFor) kinds.push_back(static_cast<const loop::ForNode*>(node)->for_kind);
  });
  return kinds;
}

// The tests of loop structure lower their small kernels as large ones are: in parallel.
const lower::LowerOptions kEveryKernelParallel = [] {
  lower::LowerOptions options;
  options.min_parallel_work = 0;
  return options;
}();

constexpr char kDense4x16[] = R"(
def @main(%x: Tensor[(4, 16), float32] /* si=input */, %w: Tensor[(16, 16), float32] /* si=fc.weight */, %b: Tensor[(16), float32] /* si=fc.bias */) {
  %0 = nn.dense(%x, %w) /* si=fc */;
  %1 = add(%0, %b) /* si=fc/bias */;
  nn.relu(%1) /* si=relu */
}
)";

TEST(DefaultScheduleTest, DenseIsVectorizedInsideTheReductionAndRunsInParallel) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(kDense4x16, 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  const te::Schedule& schedule = lowered->kernels[0].schedule;
  ASSERT_TRUE(schedule.status().ok()) << schedule.status();
  // The add is inlined into the relu; the dense (4 x 16, k = 16) splits its
  // 16 columns into 2 x 8 lanes, moves k outside the lanes, vectorizes them
  // and fuses rows with column blocks (4 * 2 = 8 parallel iterations, all
  // there are); the relu output fuses its 64 elements into 8 x 8.
  EXPECT_EQ(Primitives(schedule),
            (std::vector<std::string>{"vanilla", "compute_inline", "split", "reorder",
                                      "vectorize", "fuse", "parallel", "fuse", "split",
                                      "vectorize", "parallel"}));
  const auto* kernel = lowered->module->Lookup(lowered->kernels[0].name).as<loop::PrimFuncNode>();
  ASSERT_NE(kernel, nullptr);
  std::vector<loop::ForKind> kinds = LoopKinds(*kernel);
  // Vector loops: the dense's initialization and its update, and the relu.
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), loop::ForKind::kVectorized), 3);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), loop::ForKind::kParallel), 2);

  std::vector<double> x(64), w(256), b(16);
  for (int i = 0; i < 64; ++i) x[i] = (i % 7) - 3;
  for (int i = 0; i < 256; ++i) w[i] = (i % 5) - 2;
  for (int i = 0; i < 16; ++i) b[i] = i % 3;
  auto outputs = testing::RunFloat(*lowered, {testing::F32({4, 16}, x),
                                              testing::F32({16, 16}, w), testing::F32({16}, b)});
  ASSERT_EQ(outputs.size(), 1u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 16; ++j) {
      double sum = b[j];
      for (int k = 0; k < 16; ++k) sum += x[i * 16 + k] * w[j * 16 + k];
      EXPECT_EQ(outputs[0][i * 16 + j], std::max(sum, 0.0)) << i << ", " << j;
    }
  }
}

// The loop variables of the one kernel of `lowered`, outermost first (none if there are
// several kernels: the test then fails on its expectations).
std::vector<std::string> OnlyKernelLoopNames(const lower::LoweredModule& lowered) {
  std::vector<std::string> loops;
  EXPECT_EQ(lowered.kernels.size(), 1u);
  if (lowered.kernels.size() != 1) return loops;
  const auto* kernel = lowered.module->Lookup(lowered.kernels[0].name).as<loop::PrimFuncNode>();
  if (kernel == nullptr) return loops;
  loop::PreOrderVisit(kernel->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kFor) {
      loops.push_back(static_cast<const loop::ForNode*>(node)->loop_var->name);
    }
  });
  return loops;
}

// A matmul (8 x 128 times 128 x 1024) iterates its column tiles outside its row tiles: each
// column tile's strip of the right operand (128 x 32 floats, 16 KiB) then serves every row tile
// from L1, where rows outside would stream the whole right operand (512 KiB here, a
// transformer's 1 MiB) once per row tile. The outer loops, in order: the 32 column tiles
// (parallel, enough iterations alone), the 2 row tiles, then the tile's reduction.
TEST(DefaultScheduleTest, AMatmulIteratesColumnTilesOutsideRowTiles) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(8, 128), float32] /* si=input */, %w: Tensor[(128, 1024), float32] /* si=fc.weight */) {
  nn.matmul(%x, %w) /* si=fc */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  ASSERT_GE(loops.size(), 3u);
  EXPECT_EQ(loops[0], "ax1.outer.outer");  // axis 1: the columns, split by vector and tile
  EXPECT_EQ(loops[1], "ax0.outer");        // axis 0: the rows, split by the row tile
  // Then the tile's accumulators are zeroed and the reduction runs.
  EXPECT_NE(std::find(loops.begin() + 2, loops.end(), "k"), loops.end());

  std::vector<double> x(8 * 128), w(128 * 1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i % 5) - 2;
  auto outputs = testing::RunFloat(*lowered, {testing::F32({8, 128}, x), testing::F32({128, 1024}, w)});
  ASSERT_EQ(outputs.size(), 1u);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 1024; ++j) {
      double sum = 0;
      for (int k = 0; k < 128; ++k) sum += x[i * 128 + k] * w[k * 1024 + j];
      ASSERT_EQ(outputs[0][i * 1024 + j], sum) << i << ", " << j;
    }
  }
}

// Checks that the one kernel of `lowered` starts with a parallel loop over `rows` rows and makes
// all its `allocations` inside it (every intermediate is a row's).
void ExpectEverythingInsideOneRowLoop(const lower::LoweredModule& lowered, int64_t rows,
                                      int allocations) {
  ASSERT_EQ(lowered.kernels.size(), 1u);
  ASSERT_TRUE(lowered.kernels[0].schedule.status().ok());
  const auto* kernel = lowered.module->Lookup(lowered.kernels[0].name).as<loop::PrimFuncNode>();
  ASSERT_NE(kernel, nullptr);
  const loop::ForNode* first = nullptr;
  int inside = 0, total = 0;
  loop::PreOrderVisit(kernel->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kFor && first == nullptr) {
      first = static_cast<const loop::ForNode*>(node);
      loop::PreOrderVisit(first->body, [&](const Object* inner) {
        inside += inner->kind() == ObjectKind::kAllocate;
      });
    }
    total += node->kind() == ObjectKind::kAllocate;
  });
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->for_kind, loop::ForKind::kParallel);
  int64_t extent = 0;
  ASSERT_TRUE(loop::AsConstInt(first->extent, &extent));
  EXPECT_EQ(extent, rows);
  EXPECT_EQ(inside, allocations);
  EXPECT_EQ(total, allocations);
}

// A softmax over a last axis of 16: one parallel loop over the 3 rows, inside which the row's
// maximum (8 partial maxima, then their maximum), its exponentials, their sum and the output
// are computed, every intermediate a buffer of at most a row: the tensor is read once from
// memory. The values are softmax's, computed here in double precision.
TEST(DefaultScheduleTest, SoftmaxComputesEachRowInsideItsRowLoop) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(3, 16), float32]) {
  nn.softmax(%x) /* si=softmax */
}
)", 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // Partial maxima, maximum, exponentials, partial sums, sum.
  ExpectEverythingInsideOneRowLoop(*lowered, 3, 5);

  std::vector<double> x(48);
  for (int i = 0; i < 48; ++i) x[i] = ((i * 7) % 11) * 0.5 - 2;
  auto outputs = testing::RunFloat(*lowered, {testing::F32({3, 16}, x)});
  ASSERT_EQ(outputs.size(), 1u);
  for (int r = 0; r < 3; ++r) {
    double max = *std::max_element(x.begin() + r * 16, x.begin() + r * 16 + 16);
    double sum = 0;
    for (int j = 0; j < 16; ++j) sum += std::exp(x[r * 16 + j] - max);
    for (int j = 0; j < 16; ++j) {
      double expected = std::exp(x[r * 16 + j] - max) / sum;
      EXPECT_NEAR(outputs[0][r * 16 + j], expected, 1e-6 * expected) << r << ", " << j;
    }
  }
}

// One row of 40,000 logits: a row loop of one iteration could not run in parallel, so the
// softmax keeps its stage-by-stage schedule, whose output loop runs in parallel.
TEST(DefaultScheduleTest, ASoftmaxOverOneLongRowKeepsParallelStages) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(1, 40000), float32]) {
  nn.softmax(%x) /* si=softmax */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  const auto* kernel = lowered->module->Lookup(lowered->kernels[0].name).as<loop::PrimFuncNode>();
  ASSERT_NE(kernel, nullptr);
  int parallel_loops = 0;  // of more than one iteration
  loop::PreOrderVisit(kernel->body, [&](const Object* node) {
    if (node->kind() != ObjectKind::kFor) return;
    const auto* loop = static_cast<const loop::ForNode*>(node);
    int64_t extent = 0;
    if (loop->for_kind == loop::ForKind::kParallel && loop::AsConstInt(loop->extent, &extent) &&
        extent > 1) {
      ++parallel_loops;
    }
  });
  EXPECT_GE(parallel_loops, 1);
}

// A layer normalization stays one op (SimplifyInference leaves it) and becomes one kernel: per
// row, the sum and the sum of squared deviations (each 8 partial sums, then combined) and the
// normalized, scaled and shifted row, inside one parallel row loop. Values against a double
// precision computation.
TEST(DefaultScheduleTest, LayerNormComputesEachRowInsideItsRowLoop) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(4, 32), float32], %g: Tensor[(32), float32], %b: Tensor[(32), float32]) {
  nn.layer_norm(%x, %g, %b) /* si=ln */
}
)", 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ExpectEverythingInsideOneRowLoop(*lowered, 4, 4);  // partial sums and sum, twice

  std::vector<double> x(128), g(32), b(32);
  for (int i = 0; i < 128; ++i) x[i] = ((i * 5) % 13) * 0.25 - 1 + (i / 32);
  for (int j = 0; j < 32; ++j) g[j] = 0.5 + (j % 3) * 0.25;
  for (int j = 0; j < 32; ++j) b[j] = (j % 4) - 1.5;
  auto outputs = testing::RunFloat(
      *lowered, {testing::F32({4, 32}, x), testing::F32({32}, g), testing::F32({32}, b)});
  ASSERT_EQ(outputs.size(), 1u);
  for (int r = 0; r < 4; ++r) {
    double mean = 0, variance = 0;
    for (int j = 0; j < 32; ++j) mean += x[r * 32 + j] / 32;
    for (int j = 0; j < 32; ++j) variance += (x[r * 32 + j] - mean) * (x[r * 32 + j] - mean) / 32;
    for (int j = 0; j < 32; ++j) {
      double expected = (x[r * 32 + j] - mean) / std::sqrt(variance + 1e-5) * g[j] + b[j];
      EXPECT_NEAR(outputs[0][r * 32 + j], expected, 1e-5) << r << ", " << j;
    }
  }
}

// A batched matmul (attention's heads: 4 x (8 x 64 times 64 x 32)) reads a different left and
// right operand per batch, so its register tile is 4 rows x 2 column vectors, which share the
// rows' broadcasts, and not batches x rows, which share nothing. Values against a plain loop.
TEST(DefaultScheduleTest, ABatchedMatmulTilesColumnsNotBatches) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%q: Tensor[(4, 8, 64), float32], %k: Tensor[(4, 64, 32), float32]) {
  nn.matmul(%q, %k) /* si=scores */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  auto has = [&](const char* name) { return std::find(loops.begin(), loops.end(), name) != loops.end(); };
  EXPECT_FALSE(has("ax0.inner")) << absl::StrJoin(loops, " ");  // the batch is not tiled
  EXPECT_TRUE(has("ax1.inner")) << absl::StrJoin(loops, " ");        // the tile's 4 rows
  EXPECT_TRUE(has("ax2.outer.inner")) << absl::StrJoin(loops, " ");  // its column vectors

  std::vector<double> q(4 * 8 * 64), k(4 * 64 * 32);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<double>(i % 5) - 2;
  auto outputs =
      testing::RunFloat(*lowered, {testing::F32({4, 8, 64}, q), testing::F32({4, 64, 32}, k)});
  ASSERT_EQ(outputs.size(), 1u);
  for (int b = 0; b < 4; ++b) {
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 32; ++j) {
        double sum = 0;
        for (int r = 0; r < 64; ++r) sum += q[(b * 8 + i) * 64 + r] * k[(b * 64 + r) * 32 + j];
        ASSERT_EQ(outputs[0][(b * 8 + i) * 32 + j], sum) << b << ", " << i << ", " << j;
      }
    }
  }
}

// A 1x1 blocked convolution (8 lanes) of `in_blocks` input blocks over a `size` x `size` map
// of `batch` images to `out_blocks` output blocks, plus a bias, lowered at -O3.
absl::StatusOr<lower::LoweredModule> LowerPointwiseConv(
    int in_blocks, int size, int out_blocks, int batch = 1,
    const lower::LowerOptions& options = kEveryKernelParallel, int lanes = 8) {
  return testing::OptimizeAndLower(
      absl::StrCat("def @main(%x: Tensor[(", batch, ", ", in_blocks, ", ", size, ", ", size,
                   ", ", lanes, "), float32], %w: Tensor[(", out_blocks, ", ", in_blocks,
                   ", 1, 1, ", lanes, ", ", lanes, "), float32], %b: Tensor[(1, ", out_blocks,
                   ", 1, 1, ", lanes, "), float32]) {\n"
                   "  %0 = nn.conv2d_nchwc(%x, %w, block=", lanes, ") /* si=conv */;\n"
                   "  add(%0, %b) /* si=bias */\n}\n"),
      3, options);
}

// n small integers i % period + offset: exact in float32 sums, so outputs compare exactly.
std::vector<double> Pattern(int n, int period, int offset) {
  std::vector<double> values(n);
  for (int i = 0; i < n; ++i) values[i] = static_cast<double>(i % period + offset);
  return values;
}

// Runs `lowered` (LowerPointwiseConv's) through the loop pipeline and checks its values
// against a plain loop.
void ExpectPointwiseConvValues(const lower::LoweredModule& lowered, int in_blocks, int size,
                               int out_blocks, int batch = 1, int lanes = 8) {
  absl::StatusOr<lower::LoweredModule> optimized = testing::RunLoopPipeline(lowered);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  const int pixels = size * size;
  std::vector<double> x = Pattern(batch * in_blocks * pixels * lanes, 7, -3),
                      w = Pattern(out_blocks * in_blocks * lanes * lanes, 5, -2),
                      b = Pattern(out_blocks * lanes, 3, 0);
  auto outputs = testing::RunFloat(
      *optimized, {testing::F32({batch, in_blocks, size, size, lanes}, x),
                   testing::F32({out_blocks, in_blocks, 1, 1, lanes, lanes}, w),
                   testing::F32({1, out_blocks, 1, 1, lanes}, b)});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), static_cast<size_t>(batch * out_blocks * pixels * lanes));
  for (int n = 0; n < batch; ++n) {
    for (int ob = 0; ob < out_blocks; ++ob) {
      for (int p = 0; p < pixels; ++p) {
        for (int l = 0; l < lanes; ++l) {
          double sum = b[ob * lanes + l];
          for (int cb = 0; cb < in_blocks; ++cb) {
            for (int c = 0; c < lanes; ++c) {
              sum += x[((n * in_blocks + cb) * pixels + p) * lanes + c] *
                     w[((ob * in_blocks + cb) * lanes + c) * lanes + l];
            }
          }
          ASSERT_EQ(outputs[0][((n * out_blocks + ob) * pixels + p) * lanes + l], sum)
              << n << ", " << ob << ", " << p << ", " << l;
        }
      }
    }
  }
}

// The kind and extent of the first loop named `name` in the kernels of `lowered` (before the
// loop pipeline); false when there is none.
bool FindLoop(const lower::LoweredModule& lowered, const std::string& name, loop::ForKind* kind,
              int64_t* extent) {
  const loop::ForNode* found = nullptr;
  for (const lower::LoweredKernel& lowered_kernel : lowered.kernels) {
    const auto* kernel = lowered.module->Lookup(lowered_kernel.name).as<loop::PrimFuncNode>();
    if (kernel == nullptr) continue;
    loop::PreOrderVisit(kernel->body, [&](const Object* node) {
      const auto* loop =
          node->kind() == ObjectKind::kFor ? static_cast<const loop::ForNode*>(node) : nullptr;
      if (found == nullptr && loop != nullptr && loop->loop_var->name == name) found = loop;
    });
  }
  if (found == nullptr || !loop::AsConstInt(found->extent, extent)) return false;
  *kind = found->for_kind;
  return true;
}

// Where loop `name` is among `loops` (loops.size() when it is not).
long LoopPosition(const std::vector<std::string>& loops, const char* name) {
  return std::find(loops.begin(), loops.end(), name) - loops.begin();
}

// A pointwise blocked convolution over a 7x7 map with a bias: 4 output blocks at a time over
// the whole map (the parallel loop), the reduction over its 8 input blocks in 2 chunks of 4
// outside the rows and column tiles, so a chunk's weights serve the whole map from L1, and the
// 7 columns in tiles of 3 (3 + 3 + 1: the last one narrower). Values (after the loop pipeline,
// which splits off the narrower tile) against a plain loop.
TEST(DefaultScheduleTest, APointwiseConvOverASmallMapAccumulatesTheMapInChunks) {
  absl::StatusOr<lower::LoweredModule> lowered = LowerPointwiseConv(8, 7, 8);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  std::string names = absl::StrJoin(loops, " ");
  ASSERT_LT(LoopPosition(loops, "rcb.outer"), static_cast<long>(loops.size())) << names;
  // Chunks outside the rows, rows outside the column tiles, then a chunk's reduce steps.
  EXPECT_LT(LoopPosition(loops, "rcb.outer"), LoopPosition(loops, "ax2")) << names;
  EXPECT_LT(LoopPosition(loops, "ax2"), LoopPosition(loops, "ax3.outer")) << names;
  EXPECT_LT(LoopPosition(loops, "ax3.outer"), LoopPosition(loops, "rcb.inner")) << names;
  ExpectPointwiseConvValues(*lowered, 8, 7, 8);
}

// A pointwise blocked convolution over a 14x14 map with many input channels (256 -> 128: a tile
// of 4 output blocks reads 32 KB of weights, more than fit L1 beside its input): in strips of 2 rows
// (28 pixels), the reduction over its 32 input blocks in chunks outside the strip's rows. Values
// (after the loop pipeline) against a plain loop.
TEST(DefaultScheduleTest, APointwiseConvWithManyInputChannelsGoesInStripsOfRows) {
  absl::StatusOr<lower::LoweredModule> lowered = LowerPointwiseConv(32, 14, 16);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  std::string names = absl::StrJoin(loops, " ");
  ASSERT_FALSE(loops.empty());
  EXPECT_NE(loops[0].find("ax2.outer"), std::string::npos) << names;  // strips, parallel
  ASSERT_LT(LoopPosition(loops, "rcb.outer"), static_cast<long>(loops.size())) << names;
  EXPECT_LT(LoopPosition(loops, "rcb.outer"), LoopPosition(loops, "ax2")) << names;
  ExpectPointwiseConvValues(*lowered, 32, 14, 16);
}

// The same over a batch of 2 on a target with AVX2's 16 registers (12 accumulators), serially:
// still chunked, and the values right.
TEST(DefaultScheduleTest, APointwiseConvOfABatchRunsSeriallyInChunks) {
  lower::LowerOptions options;
  options.vector_registers = 16;
  options.min_parallel_work = int64_t{1} << 40;  // every kernel serial
  absl::StatusOr<lower::LoweredModule> lowered = LowerPointwiseConv(8, 7, 12, 2, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  EXPECT_LT(LoopPosition(loops, "rcb.outer"), static_cast<long>(loops.size()))
      << absl::StrJoin(loops, " ");
  const auto* kernel = lowered->module->Lookup(lowered->kernels[0].name).as<loop::PrimFuncNode>();
  ASSERT_NE(kernel, nullptr);
  for (loop::ForKind kind : LoopKinds(*kernel)) EXPECT_NE(kind, loop::ForKind::kParallel);
  ExpectPointwiseConvValues(*lowered, 8, 7, 12, 2);
}

// With 4 output blocks, tiles of 4 would leave the parallel loop one iteration: the tiles take
// one block each, so two threads share the kernel's 4.
TEST(DefaultScheduleTest, APointwiseConvKeepsFourParallelTiles) {
  absl::StatusOr<lower::LoweredModule> lowered = LowerPointwiseConv(8, 7, 4);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const auto* kernel = lowered->module->Lookup(lowered->kernels[0].name).as<loop::PrimFuncNode>();
  ASSERT_NE(kernel, nullptr);
  const loop::ForNode* first = nullptr;
  loop::PreOrderVisit(kernel->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kFor && first == nullptr) {
      first = static_cast<const loop::ForNode*>(node);
    }
  });
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->for_kind, loop::ForKind::kParallel);
  int64_t extent = 0;
  ASSERT_TRUE(loop::AsConstInt(first->extent, &extent));
  EXPECT_EQ(extent, 4);
  ExpectPointwiseConvValues(*lowered, 8, 7, 4);
}

// The sizes of the Allocates in the kernels of `lowered` (before the loop pipeline).
std::vector<int64_t> AllocationSizes(const lower::LoweredModule& lowered) {
  std::vector<int64_t> sizes;
  for (const lower::LoweredKernel& lowered_kernel : lowered.kernels) {
    const auto* kernel = lowered.module->Lookup(lowered_kernel.name).as<loop::PrimFuncNode>();
    if (kernel == nullptr) continue;
    loop::PreOrderVisit(kernel->body, [&](const Object* node) {
      if (node->kind() == ObjectKind::kAllocate) {
        sizes.push_back(static_cast<const loop::AllocateNode*>(node)->extent);
      }
    });
  }
  return sizes;
}

// Output block counts whose tile would otherwise hold one block (3 blocks: neither 4 nor 2
// divides them; 15 blocks on a 14-wide map) take tiles of 3 blocks, so each broadcast input
// feeds 3 multiply-adds, as wide as the accumulators, a broadcast per column and a weight
// vector fit the registers: with AVX2's 16 (12 accumulators) 3 x 2 on an 8- or 14-wide map,
// with 32 (16 accumulators) 3 x 4 on an 8-wide one. The convolution accumulates in a buffer of
// the tile (3 x columns vectors of 8 lanes); values against a plain loop.
TEST(DefaultScheduleTest, APointwiseConvWhoseBlocksFourAndTwoDoNotDivideTilesThreeTogether) {
  lower::LowerOptions avx2 = kEveryKernelParallel;
  avx2.vector_registers = 16;
  struct Case {
    int in_blocks, size, out_blocks;
    const lower::LowerOptions& options;
    int64_t tile_floats;
  };
  for (const Case& c : {Case{2, 8, 3, avx2, 3 * 2 * 8}, Case{2, 14, 15, avx2, 3 * 2 * 8},
                        Case{2, 8, 3, kEveryKernelParallel, 3 * 4 * 8}}) {
    SCOPED_TRACE(absl::StrCat(c.out_blocks, " blocks, ", c.size, " wide, ",
                              c.options.vector_registers, " registers"));
    absl::StatusOr<lower::LoweredModule> lowered =
        LowerPointwiseConv(c.in_blocks, c.size, c.out_blocks, 1, c.options);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(AllocationSizes(*lowered), std::vector<int64_t>{c.tile_floats});
    ExpectPointwiseConvValues(*lowered, c.in_blocks, c.size, c.out_blocks);
  }
}

// With AVX-512's 16-lane blocks a pointwise convolution over a 7x7 map keeps plain register
// tiles (in chunks it ran slower there): the largest tile of at most 16 accumulators that
// divides the map, 2 blocks x 7 columns, the reduction over all 8 input blocks inside the tile
// loops, and a block's 16 input lanes unrolled in groups of 4. Values against a plain loop.
TEST(DefaultScheduleTest, APointwiseConvOfSixteenLaneBlocksKeepsRegisterTilesWithoutChunks) {
  absl::StatusOr<lower::LoweredModule> lowered =
      LowerPointwiseConv(8, 7, 8, 1, kEveryKernelParallel, 16);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  std::string names = absl::StrJoin(loops, " ");
  EXPECT_EQ(LoopPosition(loops, "rcb.outer"), static_cast<long>(loops.size())) << names;
  EXPECT_EQ(AllocationSizes(*lowered), std::vector<int64_t>{2 * 7 * 16});
  loop::ForKind kind;
  int64_t extent = 0;
  ASSERT_TRUE(FindLoop(*lowered, "rc.inner", &kind, &extent)) << names;
  EXPECT_EQ(kind, loop::ForKind::kUnrolled);
  EXPECT_EQ(extent, 4);
  ExpectPointwiseConvValues(*lowered, 8, 7, 8, 1, 16);
}

// A blocked convolution splits its parallel loop by output rows when, per input channel, its
// input is at least its weights (a large map: each thread then reads its rows of the input and
// all the weights), else by output-channel blocks (a small map, whose weights are the traffic):
// 16-lane pointwise convolutions to 8 blocks (128 weights per input channel) over a 16x16 map
// (256 pixels) and a 7x7 one (49). The parallel loop is the first loop; by rows it fuses the
// batch and the rows (axes 0 and 2) only, by blocks it starts with the block tiles (axis 1).
// Values against a plain loop.
TEST(DefaultScheduleTest, AConvolutionOverALargeMapSplitsByRowsOverASmallOneByBlocks) {
  for (int size : {16, 7}) {
    SCOPED_TRACE(absl::StrCat(size, "x", size));
    absl::StatusOr<lower::LoweredModule> lowered =
        LowerPointwiseConv(2, size, 8, 1, kEveryKernelParallel, 16);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
    ASSERT_FALSE(loops.empty());
    loop::ForKind kind;
    int64_t extent = 0;
    ASSERT_TRUE(FindLoop(*lowered, loops[0], &kind, &extent));
    EXPECT_EQ(kind, loop::ForKind::kParallel) << loops[0];
    if (size == 16) {
      EXPECT_EQ(loops[0], "ax0.ax2.fused");
      EXPECT_EQ(extent, 16);
    } else {
      EXPECT_EQ(loops[0].rfind("ax0.ax1.outer", 0), 0u) << loops[0];
    }
    ExpectPointwiseConvValues(*lowered, 2, size, 8, 1, 16);
  }
}

// A 3x3 blocked convolution (padding 1) of the NCHWc input `x` ((1, in_blocks, size, size,
// lanes)) with OIHWio weights `w`, plus the bias `b` (empty: none), by a plain loop: the
// (1, out_blocks, out_size, out_size, lanes) output, row-major.
std::vector<double> ReferenceConv3x3(const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b, int in_blocks, int size,
                                     int out_blocks, int lanes, int stride) {
  const int out_size = (size - 1) / stride + 1;
  std::vector<double> out;
  for (int ob = 0; ob < out_blocks; ++ob) {
    for (int oh = 0; oh < out_size; ++oh) {
      for (int ow = 0; ow < out_size; ++ow) {
        for (int l = 0; l < lanes; ++l) {
          double sum = b.empty() ? 0.0 : b[ob * lanes + l];
          for (int cb = 0; cb < in_blocks; ++cb) {
            for (int kh = 0; kh < 3; ++kh) {
              for (int kw = 0; kw < 3; ++kw) {
                int h = oh * stride + kh - 1, v = ow * stride + kw - 1;
                if (h < 0 || h >= size || v < 0 || v >= size) continue;
                for (int c = 0; c < lanes; ++c) {
                  sum += x[((cb * size + h) * size + v) * lanes + c] *
                         w[((((ob * in_blocks + cb) * 3 + kh) * 3 + kw) * lanes + c) * lanes + l];
                }
              }
            }
          }
          out.push_back(sum);
        }
      }
    }
  }
  return out;
}

// A stride-1 3x3 convolution keeps a padded copy of its input; the copy's parallel loop splits
// the way the convolution's does, so each thread pads the rows its share reads: by rows with one
// 16-lane output block (144 weights per input channel, a 16x16 map's 256 pixels), by blocks with
// eight (1,152; two register tiles of 4 blocks). Every parallel loop of the kernel (the copy's, then the convolution's) starts with
// the batch and the rows (axes 0 and 2) in the first case and not in the second. Values against
// a plain loop over the zero-padded input.
TEST(DefaultScheduleTest, APaddedCopySplitsLikeTheConvolutionReadingIt) {
  constexpr int kIn = 2, kSize = 16, kLanes = 16;
  for (int out_blocks : {1, 8}) {
    SCOPED_TRACE(absl::StrCat(out_blocks, " output blocks"));
    absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(
        absl::StrCat("def @main(%x: Tensor[(1, ", kIn, ", ", kSize, ", ", kSize, ", ", kLanes,
                     "), float32], %w: Tensor[(", out_blocks, ", ", kIn, ", 3, 3, ", kLanes, ", ",
                     kLanes, "), float32]) {\n"
                     "  nn.conv2d_nchwc(%x, %w, padding=[1, 1, 1, 1], block=", kLanes,
                     ") /* si=conv */\n}\n"),
        3, kEveryKernelParallel);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    ASSERT_EQ(lowered->kernels.size(), 1u);
    const auto* kernel =
        lowered->module->Lookup(lowered->kernels[0].name).as<loop::PrimFuncNode>();
    ASSERT_NE(kernel, nullptr);
    std::vector<std::string> parallel;
    loop::PreOrderVisit(kernel->body, [&](const Object* node) {
      const auto* loop =
          node->kind() == ObjectKind::kFor ? static_cast<const loop::ForNode*>(node) : nullptr;
      if (loop != nullptr && loop->for_kind == loop::ForKind::kParallel) {
        parallel.push_back(loop->loop_var->name);
      }
    });
    ASSERT_EQ(parallel.size(), 2u) << absl::StrJoin(parallel, " ");
    for (const std::string& name : parallel) {
      EXPECT_EQ(name.rfind("ax0.ax2", 0) == 0, out_blocks == 1) << name;
    }

    absl::StatusOr<lower::LoweredModule> optimized = testing::RunLoopPipeline(*lowered);
    ASSERT_TRUE(optimized.ok()) << optimized.status();
    std::vector<double> x = Pattern(kIn * kSize * kSize * kLanes, 7, -3),
                        w = Pattern(out_blocks * kIn * 9 * kLanes * kLanes, 5, -2);
    auto outputs = testing::RunFloat(
        *optimized, {testing::F32({1, kIn, kSize, kSize, kLanes}, x),
                     testing::F32({out_blocks, kIn, 3, 3, kLanes, kLanes}, w)});
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0], ReferenceConv3x3(x, w, {}, kIn, kSize, out_blocks, kLanes, 1));
  }
}

// A 3x3 blocked convolution (8 lanes, padding 1, stride 1 or 2) of 16 input blocks over a
// 14x14 map to 8 output blocks, plus a bias: a tile of 4 output blocks reads 147 KB of weights,
// so it goes in chunks too, outside the rows and column tiles. Values (after the loop pipeline)
// against a plain loop over the zero-padded input.
TEST(DefaultScheduleTest, A3x3ConvWithManyInputChannelsAccumulatesInChunks) {
  constexpr int kIn = 16, kSize = 14, kOut = 8;
  for (int stride : {1, 2}) {
    absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(
        absl::StrCat("def @main(%x: Tensor[(1, ", kIn, ", ", kSize, ", ", kSize,
                     ", 8), float32], %w: Tensor[(", kOut, ", ", kIn,
                     ", 3, 3, 8, 8), float32], %b: Tensor[(1, ", kOut, ", 1, 1, 8), float32]) {\n"
                     "  %0 = nn.conv2d_nchwc(%x, %w, strides=[", stride, ", ", stride,
                     "], padding=[1, 1, 1, 1], block=8) /* si=conv */;\n"
                     "  add(%0, %b) /* si=bias */\n}\n"),
        3, kEveryKernelParallel);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
    std::string names = absl::StrJoin(loops, " ");
    ASSERT_LT(LoopPosition(loops, "rcb.outer"), static_cast<long>(loops.size())) << names;
    EXPECT_LT(LoopPosition(loops, "rcb.outer"), LoopPosition(loops, "ax3.outer")) << names;
    EXPECT_LT(LoopPosition(loops, "ax3.outer"), LoopPosition(loops, "rk0")) << names;
    // A block's 8 input lanes are unrolled (each reduce step's loads at constant offsets), in
    // pairs when strided (its padding read inline, the border rows and columns get copies of
    // the nest); the kernel rows stay a loop that LoopPartition can split at the border.
    loop::ForKind kind;
    int64_t extent = 0;
    ASSERT_TRUE(FindLoop(*lowered, stride == 1 ? "rc" : "rc.inner", &kind, &extent)) << names;
    EXPECT_EQ(kind, loop::ForKind::kUnrolled);
    EXPECT_EQ(extent, stride == 1 ? 8 : 2);
    ASSERT_TRUE(FindLoop(*lowered, "rk0", &kind, &extent)) << names;
    EXPECT_EQ(kind, loop::ForKind::kSerial);

    absl::StatusOr<lower::LoweredModule> optimized = testing::RunLoopPipeline(*lowered);
    ASSERT_TRUE(optimized.ok()) << optimized.status();
    std::vector<double> x = Pattern(kIn * kSize * kSize * 8, 7, -3),
                        w = Pattern(kOut * kIn * 9 * 64, 5, -2), b = Pattern(kOut * 8, 3, 0);
    auto outputs = testing::RunFloat(*optimized, {testing::F32({1, kIn, kSize, kSize, 8}, x),
                                                  testing::F32({kOut, kIn, 3, 3, 8, 8}, w),
                                                  testing::F32({1, kOut, 1, 1, 8}, b)});
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0], ReferenceConv3x3(x, w, b, kIn, kSize, kOut, 8, stride)) << stride;
  }
}

// A 1x1 convolution of an unblocked input (12 channels of one lane, as ShuffleNet's 116-channel
// ones are on 8-lane targets) has no lane loop to unroll: its input channels are unrolled in
// groups of 4 (the largest of 8, 4, 2 dividing 12). Values (after the loop pipeline) against a
// plain loop.
TEST(DefaultScheduleTest, A1x1ConvOfAnUnblockedInputUnrollsItsChannelsInGroups) {
  constexpr int kIn = 12, kSize = 7, kOut = 2;
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(
      absl::StrCat("def @main(%x: Tensor[(1, ", kIn, ", ", kSize, ", ", kSize,
                   ", 1), float32], %w: Tensor[(", kOut, ", ", kIn,
                   ", 1, 1, 1, 8), float32], %b: Tensor[(1, ", kOut, ", 1, 1, 8), float32]) {\n"
                   "  %0 = nn.conv2d_nchwc(%x, %w, block=8) /* si=conv */;\n"
                   "  add(%0, %b) /* si=bias */\n}\n"),
      3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // Over this 7x7 map the reduction also goes in chunks (rcb.outer, rcb.inner): the innermost
  // of the channel loops is the unrolled group.
  std::vector<std::string> loops = OnlyKernelLoopNames(*lowered);
  auto innermost_channel_loop = std::find_if(loops.rbegin(), loops.rend(), [](const std::string& name) {
    return name.rfind("rcb", 0) == 0;
  });
  ASSERT_NE(innermost_channel_loop, loops.rend()) << absl::StrJoin(loops, " ");
  loop::ForKind kind;
  int64_t extent = 0;
  ASSERT_TRUE(FindLoop(*lowered, *innermost_channel_loop, &kind, &extent));
  EXPECT_EQ(kind, loop::ForKind::kUnrolled) << *innermost_channel_loop;
  EXPECT_EQ(extent, 4) << *innermost_channel_loop;

  absl::StatusOr<lower::LoweredModule> optimized = testing::RunLoopPipeline(*lowered);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  const int pixels = kSize * kSize;
  std::vector<double> x = Pattern(kIn * pixels, 7, -3), w = Pattern(kOut * kIn * 8, 5, -2),
                      b = Pattern(kOut * 8, 3, 0);
  auto outputs = testing::RunFloat(*optimized, {testing::F32({1, kIn, kSize, kSize, 1}, x),
                                                testing::F32({kOut, kIn, 1, 1, 1, 8}, w),
                                                testing::F32({1, kOut, 1, 1, 8}, b)});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), static_cast<size_t>(kOut * pixels * 8));
  for (int ob = 0; ob < kOut; ++ob) {
    for (int p = 0; p < pixels; ++p) {
      for (int l = 0; l < 8; ++l) {
        double sum = b[ob * 8 + l];
        for (int c = 0; c < kIn; ++c) sum += x[c * pixels + p] * w[(ob * kIn + c) * 8 + l];
        ASSERT_EQ(outputs[0][(ob * pixels + p) * 8 + l], sum) << ob << ", " << p << ", " << l;
      }
    }
  }
}

// A depthwise 3x3 blocked convolution unrolls its kernel columns (the three taps of a row read
// overlapping input vectors, loaded once); its kernel rows stay a loop. Values (after the loop
// pipeline) against a plain loop over the zero-padded input.
TEST(DefaultScheduleTest, ADepthwiseConvUnrollsItsKernelColumns) {
  constexpr int kBlocks = 2, kSize = 6;
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(
      absl::StrCat("def @main(%x: Tensor[(1, ", kBlocks, ", ", kSize, ", ", kSize,
                   ", 8), float32], %w: Tensor[(", kBlocks, ", 1, 3, 3, 1, 8), float32]) {\n"
                   "  nn.conv2d_nchwc(%x, %w, padding=[1, 1, 1, 1], groups=", kBlocks * 8,
                   ", block=8) /* si=dw */\n}\n"),
      3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  loop::ForKind kind;
  int64_t extent = 0;
  ASSERT_TRUE(FindLoop(*lowered, "rk1", &kind, &extent));
  EXPECT_EQ(kind, loop::ForKind::kUnrolled);
  EXPECT_EQ(extent, 3);
  ASSERT_TRUE(FindLoop(*lowered, "rk0", &kind, &extent));
  EXPECT_EQ(kind, loop::ForKind::kSerial);

  absl::StatusOr<lower::LoweredModule> optimized = testing::RunLoopPipeline(*lowered);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  const int pixels = kSize * kSize;
  std::vector<double> x = Pattern(kBlocks * pixels * 8, 7, -3), w = Pattern(kBlocks * 9 * 8, 5, -2);
  auto outputs = testing::RunFloat(*optimized, {testing::F32({1, kBlocks, kSize, kSize, 8}, x),
                                                testing::F32({kBlocks, 1, 3, 3, 1, 8}, w)});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), static_cast<size_t>(kBlocks * pixels * 8));
  for (int cb = 0; cb < kBlocks; ++cb) {
    for (int oh = 0; oh < kSize; ++oh) {
      for (int ow = 0; ow < kSize; ++ow) {
        for (int l = 0; l < 8; ++l) {
          double sum = 0;
          for (int kh = 0; kh < 3; ++kh) {
            for (int kw = 0; kw < 3; ++kw) {
              int h = oh + kh - 1, v = ow + kw - 1;
              if (h < 0 || h >= kSize || v < 0 || v >= kSize) continue;
              sum += x[((cb * kSize + h) * kSize + v) * 8 + l] * w[((cb * 3 + kh) * 3 + kw) * 8 + l];
            }
          }
          ASSERT_EQ(outputs[0][((cb * kSize + oh) * kSize + ow) * 8 + l], sum)
              << cb << ", " << oh << ", " << ow << ", " << l;
        }
      }
    }
  }
}

TEST(DefaultScheduleTest, ElementwiseKernelsAreFusedSplitAndVectorized) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(4, 6), float32] /* si=input */) {
  %0 = multiply(%x, 2f) /* si=scale */;
  nn.relu(%0) /* si=relu */
}
)", 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  // 24 elements: 3 parallel blocks of 8 lanes; the scalar constant and the
  // multiply are inlined.
  EXPECT_EQ(Primitives(lowered->kernels[0].schedule),
            (std::vector<std::string>{"vanilla", "compute_inline", "compute_inline", "fuse",
                                      "split", "vectorize", "parallel"}));
  std::vector<double> x(24);
  for (int i = 0; i < 24; ++i) x[i] = i - 12;
  auto outputs = testing::RunFloat(*lowered, {testing::F32({4, 6}, x)});
  for (int i = 0; i < 24; ++i) EXPECT_EQ(outputs[0][i], std::max(0, 2 * (i - 12))) << i;
}

// A channel shuffle's transpose with 32-element rows goes row by row: the leading axes fused and
// parallel, each row split into vectors of 8 read contiguously; the result is the transposition.
TEST(DefaultScheduleTest, InjectiveStagesWithLongRowsGoRowByRow) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(1, 4, 3, 32), float32]) {
  transpose(%x, axes=[0, 2, 1, 3])
}
)", 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  EXPECT_EQ(Primitives(lowered->kernels[0].schedule),
            (std::vector<std::string>{"vanilla", "fuse", "fuse", "split", "vectorize", "parallel"}));
  std::vector<double> x(4 * 3 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  auto outputs = testing::RunFloat(*lowered, {testing::F32({1, 4, 3, 32}, x)});
  // out[0, h, c, w] = x[0, c, h, w] = (c * 3 + h) * 32 + w.
  for (int h = 0; h < 3; ++h) {
    for (int c = 0; c < 4; ++c) {
      for (int w = 0; w < 32; ++w) {
        EXPECT_EQ(outputs[0][(h * 4 + c) * 32 + w], (c * 3 + h) * 32 + w) << h << " " << c << " " << w;
      }
    }
  }
}

// A convolution's padding is its own stage: for 6x6 maps padded by 1, each 8-wide padded row is
// one vector (the channels and the batch fused and parallel, the rows a serial loop, so the row's
// bounds test is not recomputed from a fused index per vector); a 7x7 map's 9-wide rows no width
// divides: each is a scalar loop, the leading axes fused and parallel. Neither is inlined, and a
// channel x row x lane register tile covers the convolution.
TEST(DefaultScheduleTest, PaddingIsMaterializedRowByRow) {
  auto pad_steps = [](const char* text) {
    absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(text, 3, kEveryKernelParallel);
    KILN_CHECK(lowered.ok()) << lowered.status();
    std::vector<std::string> steps;
    for (const te::ScheduleStep& step : lowered->kernels[0].schedule.record()) {
      if (!step.arguments.empty() && step.arguments[0].find("pad") != std::string::npos) {
        steps.push_back(step.primitive);
      }
    }
    return steps;
  };
  EXPECT_EQ(pad_steps(R"(
def @main(%x: Tensor[(1, 2, 6, 6), float32], %w: Tensor[(8, 2, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])
}
)"),
            (std::vector<std::string>{"fuse", "vectorize", "parallel"}));
  EXPECT_EQ(pad_steps(R"(
def @main(%x: Tensor[(1, 2, 7, 7), float32], %w: Tensor[(8, 2, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1, 1, 1])
}
)"),
            (std::vector<std::string>{"fuse", "fuse", "parallel"}));
}

// 9 elements: none of 8, 7, 6, 5, 4 lanes divides them.
TEST(DefaultScheduleTest, ExtentsNoVectorWidthDividesStayScalar) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(3, 3), float32] /* si=input */) {
  nn.relu(%x) /* si=relu */
}
)", 3, kEveryKernelParallel);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(Primitives(lowered->kernels[0].schedule),
            (std::vector<std::string>{"vanilla", "fuse", "parallel"}));
}

// A kernel doing less work than lower.min_parallel_work (4 x 16 outputs of 16 steps each) runs
// serially: a parallel loop's wakeup and join would cost more than the work; the same dense
// with 256 rows of 512 outputs, each 512 steps, runs its outer loop in parallel.
TEST(DefaultScheduleTest, OnlyKernelsWithEnoughWorkRunInParallel) {
  absl::StatusOr<lower::LoweredModule> small = testing::OptimizeAndLower(kDense4x16);
  ASSERT_TRUE(small.ok()) << small.status();
  ASSERT_EQ(small->kernels.size(), 1u);
  std::vector<loop::ForKind> kinds =
      LoopKinds(*small->module->Lookup(small->kernels[0].name).as<loop::PrimFuncNode>());
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), loop::ForKind::kParallel), 0);

  absl::StatusOr<lower::LoweredModule> large = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(256, 512), float32] /* si=input */, %w: Tensor[(512, 512), float32] /* si=fc.weight */) {
  nn.dense(%x, %w) /* si=fc */
}
)");
  ASSERT_TRUE(large.ok()) << large.status();
  ASSERT_EQ(large->kernels.size(), 1u);
  kinds = LoopKinds(*large->module->Lookup(large->kernels[0].name).as<loop::PrimFuncNode>());
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), loop::ForKind::kParallel), 1);

  // At the threshold: a relu of 2^15 elements runs in parallel, one of 2^15 - 1 serially.
  for (int64_t elements : {lower::kMinParallelWork, lower::kMinParallelWork - 1}) {
    absl::StatusOr<lower::LoweredModule> relu = testing::OptimizeAndLower(absl::StrCat(
        "def @main(%x: Tensor[(", elements, "), float32] /* si=input */) {\n"
        "  nn.relu(%x) /* si=relu */\n}\n"));
    ASSERT_TRUE(relu.ok()) << relu.status();
    ASSERT_EQ(relu->kernels.size(), 1u);
    kinds = LoopKinds(*relu->module->Lookup(relu->kernels[0].name).as<loop::PrimFuncNode>());
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), loop::ForKind::kParallel),
              elements >= lower::kMinParallelWork ? 1 : 0)
        << elements << " elements";
  }
}

}  // namespace
}  // namespace kiln
