// Step verification: every step of a record computes what the vanilla
// schedule computes, and a step that does not is reported.
#include "engine/te/verify_schedule.h"

#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::MatMul;

// The seed's gemm schedule on a small gemm whose extents the factors do not
// divide (16 = 3*5 + 1, 20 = 3*6 + 2, 12 = 8 + 4).
TEST(VerifyScheduleTest, SeedScheduleOnASmallGemmVerifiesAtEveryStep) {
  const int64_t M = 16, K = 12, N = 20;
  Tensor A = Placeholder("A", DataType::kFloat32, {M, K});
  Tensor B = Placeholder("B", DataType::kFloat32, {K, N});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  IterVar m = s.Axes(C)[0], n = s.Axes(C)[1], k = s.ReduceAxes(C)[0];
  auto [mo, no, mi, ni] = s.Tile(C, m, n, 5, 6);
  auto [ko, ki] = s.Split(C, k, 8);
  s.Reorder(C, {mo, ko, no, mi, ki, ni});
  s.Vectorize(C, ni);
  s.Parallel(C, mo);
  ASSERT_EQ(s.record().size(), 8u);

  auto verified = VerifyScheduleRecord(s, {A, B, C}, 2024);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(*verified, std::vector<bool>(8, true));

  // And the final schedule against an independent reference.
  std::vector<double> a = testing::Iota(M * K, -50), b = testing::Iota(K * N, -100);
  auto result = testing::LowerAndRun(s, {A, B, C}, {a, b});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0], testing::ReferenceMatMul(a, b, M, K, N));
}

TEST(VerifyScheduleTest, IntegerReductionsCompareExactly) {
  Tensor A = Placeholder("A", DataType::kInt32, {7, 9});
  Tensor R = Compute("R", {7}, {A}, [&](const auto& i) -> ComputeBody {
    IterVar k = ReduceAxis(9, "k");
    return Max(A(i[0], k->var), {k});
  });
  Schedule t = Schedule::Create({R});
  auto [ko, ki] = t.Split(R, t.ReduceAxes(R)[0], 4);
  auto [xo, xi] = t.Split(R, t.Axes(R)[0], 3);
  t.Unroll(R, xi);
  t.Reorder(R, {ki, xo, ko, xi});
  auto verified = VerifyScheduleRecord(t, {A, R}, 5);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(*verified, std::vector<bool>(5, true));
}

// A step whose lowering fails (here: a compute_at whose producer has a
// second reader) does not compute what the vanilla step does.
TEST(VerifyScheduleTest, StepThatFailsToLowerIsFalse) {
  Tensor A = Placeholder("A", DataType::kFloat32, {4});
  Tensor B =
      Compute("B", {4}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) + A(i[0]); });
  Tensor C =
      Compute("C", {4}, {B}, [&](const auto& i) -> ComputeBody { return B(i[0]) * B(i[0]); });
  Tensor D =
      Compute("D", {4}, {B, A}, [&](const auto& i) -> ComputeBody { return B(i[0]) - A(i[0]); });
  Schedule s = Schedule::Create({C, D});
  s.Split(C, s.Axes(C)[0], 2);
  s.ComputeAt(B, C, s.LeafIterVars(C)[0]);
  s.ComputeRoot(B);
  ASSERT_TRUE(s.status().ok()) << s.status();
  auto verified = VerifyScheduleRecord(s, {A, C, D}, 3);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(*verified, (std::vector<bool>{true, true, false, true}));
}

TEST(VerifyScheduleTest, VanillaThatCannotLowerIsAnError) {
  Tensor A = Placeholder("A", DataType::kFloat32, {4});
  Tensor C = Compute("C", {4}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]); });
  Schedule s = Schedule::Create({C});
  auto verified = VerifyScheduleRecord(s, {C}, 3);  // A is not a param
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(verified.status().message()).find("the vanilla schedule"),
            std::string::npos);
}

}  // namespace
TEST(VerifyScheduleTest, ACancelledRunEndsVerificationWithItsStatus) {
  Tensor A = Placeholder("A", DataType::kFloat32, {64, 64});
  Tensor B = Placeholder("B", DataType::kFloat32, {64, 64});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  s.Split(C, s.Axes(C)[0], 8);
  // Count the polls of a whole verification (two runs of similar size),
  // then cancel three quarters in: inside the split step, after the vanilla
  // run passed. The step's cancellation ends verification; it is not
  // reported as a step that computes something else.
  int64_t polls = 0, cancel_after = -1;
  loop::InterpreterOptions interpreter;
  interpreter.cancellation_check_interval = 1000;
  interpreter.is_cancelled = [&] { return ++polls > cancel_after && cancel_after >= 0; };
  ASSERT_TRUE(VerifyScheduleRecord(s, {A, B, C}, 1, interpreter).ok());
  cancel_after = polls * 3 / 4;
  polls = 0;
  auto verified = VerifyScheduleRecord(s, {A, B, C}, 1, interpreter);
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kCancelled) << verified.status();
  EXPECT_EQ(std::string(verified.status().message()).find("vanilla"), std::string::npos)
      << verified.status();
}

}  // namespace kiln::te
