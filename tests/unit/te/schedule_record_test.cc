// The schedule record: one snapshot per primitive, starting with the vanilla
// schedule; the seed's gemm example; copies and keep_record = false.
#include "engine/te/schedule_record.h"

#include "engine/te/verify_schedule.h"
#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::LoopStructure;
using testing::MatMul;

std::vector<std::string> Primitives(const Schedule& schedule) {
  std::vector<std::string> names;
  for (const ScheduleStep& step : schedule.record()) names.push_back(step.primitive);
  return names;
}

// The seed's schedule_record_with_gemm, as written there.
TEST(ScheduleRecordTest, SeedGemmRecordsEveryPrimitive) {
  const int64_t M = 1024, K = 1024, N = 1024;
  Tensor A = Placeholder("A", DataType::kFloat32, {M, K});
  Tensor B = Placeholder("B", DataType::kFloat32, {K, N});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  // Currently there are no other applied primitives: only the vanilla schedule.
  ASSERT_EQ(s.record().size(), 1u);

  const int64_t block_size = 32, factor = 8;
  IterVar m = s.Axes(C)[0], n = s.Axes(C)[1], k = s.ReduceAxes(C)[0];
  auto [mo, no, mi, ni] = s.Tile(C, m, n, block_size, block_size);
  auto [ko, ki] = s.Split(C, k, factor);
  s.Reorder(C, {mo, ko, no, mi, ki, ni});
  s.Vectorize(C, ni);
  s.Parallel(C, mo);

  ASSERT_TRUE(s.status().ok()) << s.status();
  EXPECT_EQ(s.record().size(), 8u);
  EXPECT_EQ(Primitives(s), (std::vector<std::string>{"vanilla", "split", "split", "reorder",
                                                     "split", "reorder", "vectorize", "parallel"}));
}

TEST(ScheduleRecordTest, StepsNameTheirArguments) {
  Tensor A = Placeholder("A", DataType::kFloat32, {64, 64});
  Tensor B = Placeholder("B", DataType::kFloat32, {64, 64});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  IterVar m = s.Axes(C)[0], n = s.Axes(C)[1];
  auto [mo, no, mi, ni] = s.Tile(C, m, n, 32, 16);
  s.SplitNParts(C, s.ReduceAxes(C)[0], 4);
  s.Vectorize(C, ni);
  const auto& record = s.record();
  ASSERT_EQ(record.size(), 6u);
  EXPECT_EQ(record[0].arguments, (std::vector<std::string>{"C"}));
  EXPECT_EQ(record[1].arguments, (std::vector<std::string>{"C", "ax0", "factor=32"}));
  EXPECT_EQ(record[2].arguments, (std::vector<std::string>{"C", "ax1", "factor=16"}));
  EXPECT_EQ(record[3].arguments,
            (std::vector<std::string>{"C", "ax0.outer", "ax1.outer", "ax0.inner", "ax1.inner"}));
  EXPECT_EQ(record[4].arguments, (std::vector<std::string>{"C", "k", "nparts=4"}));
  EXPECT_EQ(record[5].arguments, (std::vector<std::string>{"C", "ax1.inner"}));
}

// A step's loop IR is its snapshot lowered: each snapshot shows the schedule
// as it was right after that primitive.
TEST(ScheduleRecordTest, SnapshotsLowerToTheLoopsAfterEachStep) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 6});
  Tensor B = Placeholder("B", DataType::kFloat32, {8, 6});
  Tensor C = testing::Add(A, B);
  Schedule s = Schedule::Create({C});
  auto [xo, xi] = s.Split(C, s.Axes(C)[0], 4);
  s.Reorder(C, {xi, xo});
  s.Parallel(C, xi);
  std::vector<std::string> structures;
  for (const ScheduleStep& step : s.record()) {
    auto func = LowerSchedule(step.snapshot, {A, B, C}, "add");
    ASSERT_TRUE(func.ok()) << func.status();
    structures.push_back(LoopStructure((*func)->body));
  }
  EXPECT_EQ(structures, (std::vector<std::string>{
                            "for ax0[8] {for ax1[6] {C=}}",
                            "for ax0.outer[2] {for ax0.inner[4] {for ax1[6] {C=}}}",
                            "for ax0.inner[4] {for ax0.outer[2] {for ax1[6] {C=}}}",
                            "for ax0.inner[4]:parallel {for ax0.outer[2] {for ax1[6] {C=}}}",
                        }));
  // Snapshots share the stages: the earlier steps are untouched by later ones.
  EXPECT_EQ(s.record()[0].snapshot.LeafIterVars(C).size(), 2u);
  EXPECT_TRUE(s.record()[0].snapshot.record().empty());
}

TEST(ScheduleRecordTest, StepsFormatAndLowerOnDemand) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 6});
  Tensor B = Placeholder("B", DataType::kFloat32, {8, 6});
  Tensor C = testing::Add(A, B);
  Schedule s = Schedule::Create({C});
  s.Split(C, s.Axes(C)[1], 4);
  s.Vectorize(C, s.LeafIterVars(C)[2]);
  std::vector<std::string> texts;
  for (const ScheduleStep& step : s.record()) texts.push_back(FormatScheduleStep(step));
  EXPECT_EQ(texts, (std::vector<std::string>{"vanilla(C)", "split(C, ax1, factor=4)",
                                             "vectorize(C, ax1.inner)"}));
  auto funcs = LowerScheduleRecord(s, {A, B, C}, "add");
  ASSERT_TRUE(funcs.ok()) << funcs.status();
  ASSERT_EQ(funcs->size(), 3u);
  EXPECT_EQ(LoopStructure((*funcs)[2]->body),
            "for ax0[8] {for ax1.outer[2] {for ax1.inner[4]:vectorized {if {C=}}}}");
  // A step that cannot lower is named in the error.
  auto missing = LowerScheduleRecord(s, {A, C}, "add");
  EXPECT_NE(std::string(missing.status().message()).find("step 0 vanilla(C): placeholder B"),
            std::string::npos)
      << missing.status();
}

// Snapshots are cheap: a step shares every stage its primitive did not
// change with the step before it.
TEST(ScheduleRecordTest, SnapshotsShareUnchangedStages) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 8});
  Tensor B = Compute("B", {8, 8}, {A},
                     [&](const auto& i) -> ComputeBody { return A(i[0], i[1]) + A(i[1], i[0]); });
  Tensor C = MatMul(B, B);
  Schedule s = Schedule::Create({C});
  s.Split(C, s.Axes(C)[0], 4);
  s.Vectorize(B, s.Axes(B)[1]);
  const auto& record = s.record();
  ASSERT_EQ(record.size(), 3u);
  const auto& vanilla = record[0].snapshot.stages();
  const auto& split = record[1].snapshot.stages();
  const auto& vectorize = record[2].snapshot.stages();
  ASSERT_EQ(vanilla.size(), 3u);
  EXPECT_EQ(split[0], vanilla[0]);  // A
  EXPECT_EQ(split[1], vanilla[1]);  // B
  EXPECT_NE(split[2], vanilla[2]);  // C was split
  EXPECT_EQ(vectorize[0], split[0]);
  EXPECT_NE(vectorize[1], split[1]);  // B was vectorized
  EXPECT_EQ(vectorize[2], split[2]);
  EXPECT_EQ(s.stages()[2], vectorize[2]);
}

TEST(ScheduleRecordTest, KeepRecordFalseKeepsNoSteps) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 8});
  Tensor B = Placeholder("B", DataType::kFloat32, {8, 8});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C}, ScheduleOptions{.keep_record = false});
  EXPECT_TRUE(s.record().empty());
  auto [mo, mi] = s.Split(C, s.Axes(C)[0], 4);
  s.Vectorize(C, s.Axes(C)[1]);
  EXPECT_TRUE(s.record().empty());
  // The schedule itself still changes and lowers.
  auto func = LowerSchedule(s, {A, B, C}, "mm");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[2] {for ax0.inner[4] {for ax1[8]:vectorized {C=; for k[8] {C=}}}}");
  auto verified = VerifyScheduleRecord(s, {A, B, C}, 1);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kFailedPrecondition);
}

// Schedules are values: applying a primitive to a copy leaves the original
// (and its record) as it was.
TEST(ScheduleRecordTest, CopiesAreIndependent) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 8});
  Tensor B = Placeholder("B", DataType::kFloat32, {8, 8});
  Tensor C = MatMul(A, B);
  Schedule original = Schedule::Create({C});
  original.Split(C, original.Axes(C)[0], 2);
  Schedule copy = original;
  copy.Vectorize(C, copy.Axes(C)[1]);
  copy.Unroll(C, copy.ReduceAxes(C)[0]);
  EXPECT_EQ(original.record().size(), 2u);
  EXPECT_EQ(copy.record().size(), 4u);
  EXPECT_EQ(original.stages().back()->LoopKind(original.Axes(C)[1]), loop::ForKind::kSerial);
  EXPECT_EQ(copy.stages().back()->LoopKind(copy.Axes(C)[1]), loop::ForKind::kVectorized);
  original.Parallel(C, original.LeafIterVars(C)[0]);
  EXPECT_EQ(original.record().size(), 3u);
  EXPECT_EQ(copy.record().size(), 4u);
  EXPECT_EQ(copy.record()[2].primitive, "vectorize");
  EXPECT_EQ(original.record()[2].primitive, "parallel");
}

// A failed primitive records no step; the error is kept and lowering reports it.
TEST(ScheduleRecordTest, FailedPrimitiveRecordsNothing) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8, 8});
  Tensor B = Placeholder("B", DataType::kFloat32, {8, 8});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  auto [o, i] = s.Split(C, s.Axes(C)[0], 0);
  EXPECT_EQ(o, nullptr);
  EXPECT_EQ(i, nullptr);
  s.Vectorize(C, s.Axes(C)[1]);  // a no-op after an error
  EXPECT_EQ(s.record().size(), 1u);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  auto func = LowerSchedule(s, {A, B, C}, "mm");
  EXPECT_EQ(func.status(), s.status());
  // The steps recorded before the error still lower.
  EXPECT_TRUE(LowerSchedule(s.record()[0].snapshot, {A, B, C}, "mm").ok());
}

}  // namespace
}  // namespace kiln::te
