// cache_read and cache_write: stages staging data through buffers of another
// scope, alone and combined with compute_at.
#include "engine/te/verify_schedule.h"
#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::ExpectComputes;
using testing::LoopStructure;
using testing::MatMul;

const std::vector<std::vector<double>> kInputs = {{1, 2, 3, 4}, {5, 6, 7, 8}};
// [[1, 2], [3, 4]] x [[5, 6], [7, 8]].
const std::vector<double> kProduct = {19, 22, 43, 50};

std::string Lowered(const Schedule& s, const std::vector<Tensor>& params) {
  auto func = LowerSchedule(s, params, "f");
  EXPECT_TRUE(func.ok()) << func.status();
  return func.ok() ? LoopStructure((*func)->body) : "";
}

TEST(CacheTest, CacheReadCopiesIntoALocalBuffer) {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 2});
  Tensor B = Placeholder("B", DataType::kFloat32, {2, 2});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  Tensor AL = s.CacheRead(A, "local", {C});
  ASSERT_TRUE(s.status().ok()) << s.status();
  EXPECT_EQ(AL.name(), "A.local");
  EXPECT_EQ(AL.op()->buffer->scope, "local");
  std::vector<std::string> names;
  for (const StagePtr& stage : s.stages()) names.push_back(stage->name());
  EXPECT_EQ(names, (std::vector<std::string>{"A", "A.local", "B", "C"}));
  EXPECT_EQ(s.record().back().primitive, "cache_read");
  EXPECT_EQ(s.record().back().arguments, (std::vector<std::string>{"A", "local", "C"}));
  EXPECT_EQ(Lowered(s, {A, B, C}),
            "alloc A.local[4]:local {for ax0[2] {for ax1[2] {A.local=}}; "
            "for ax0[2] {for ax1[2] {C=; for k[2] {C=}}}}");
  ExpectComputes(s, {A, B, C}, kInputs, kProduct);
}

TEST(CacheTest, CacheReadAtTheConsumersRow) {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 2});
  Tensor B = Placeholder("B", DataType::kFloat32, {2, 2});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  Tensor AL = s.CacheRead(A, "local", {C});
  s.ComputeAt(AL, C, s.Axes(C)[0]);
  // The tensors held before cache_read still name their stages.
  EXPECT_EQ(s.LeafIterVars(C).size(), 3u);
  EXPECT_EQ(Lowered(s, {A, B, C}),
            "for ax0[2] {alloc A.local[2]:local {for ax0[1] {for ax1[2] {A.local=}}; "
            "for ax1[2] {C=; for k[2] {C=}}}}");
  ExpectComputes(s, {A, B, C}, kInputs, kProduct);
}

TEST(CacheTest, CacheWriteAccumulatesLocallyThenCopies) {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 2});
  Tensor B = Placeholder("B", DataType::kFloat32, {2, 2});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  IterVar k = s.ReduceAxes(C)[0];
  Tensor CL = s.CacheWrite(C, "local");
  ASSERT_TRUE(s.status().ok()) << s.status();
  EXPECT_EQ(CL.name(), "C.local");
  // The reduction moved to the cache stage, with the same reduce axis.
  EXPECT_TRUE(s.ReduceAxes(C).empty());
  ASSERT_EQ(s.ReduceAxes(CL).size(), 1u);
  EXPECT_EQ(s.ReduceAxes(CL)[0], k);
  EXPECT_EQ(Lowered(s, {A, B, C}),
            "alloc C.local[4]:local {for ax0[2] {for ax1[2] {C.local=; for k[2] {C.local=}}}; "
            "for ax0[2] {for ax1[2] {C=}}}");
  ExpectComputes(s, {A, B, C}, kInputs, kProduct);
}

// The usual pattern: the local accumulator computed per tile of the output.
TEST(CacheTest, CacheWriteComputedAtTheOutputTile) {
  Tensor A = Placeholder("A", DataType::kFloat32, {5, 3});
  Tensor B = Placeholder("B", DataType::kFloat32, {3, 4});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  Tensor CL = s.CacheWrite(C, "local");
  auto [mo, no, mi, ni] = s.Tile(C, s.Axes(C)[0], s.Axes(C)[1], 2, 2);
  s.ComputeAt(CL, C, no);
  s.Split(CL, s.ReduceAxes(CL)[0], 2);
  s.Vectorize(CL, s.Axes(CL)[1]);
  auto func = LowerSchedule(s, {A, B, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[3] {for ax1.outer[2] {alloc C.local[4]:local {"
            "for ax0[2] {for ax1[2]:vectorized {if {C.local=}; "
            "for k.outer[2] {for k.inner[2] {if {C.local=}}}}}; "
            "for ax0.inner[2] {for ax1.inner[2] {if {C=}}}}}}");
  std::vector<double> a = testing::Iota(15, 1), b = testing::Iota(12, -3);
  auto result = testing::LowerAndRun(s, {A, B, C}, {a, b});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0], testing::ReferenceMatMul(a, b, 5, 3, 4));
  auto verified = VerifyScheduleRecord(s, {A, B, C}, 42);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->size(), s.record().size());
  for (size_t i = 0; i < verified->size(); ++i) EXPECT_TRUE((*verified)[i]) << "step " << i;
}

}  // namespace
}  // namespace kiln::te
