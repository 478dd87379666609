// compute_at: producers computed inside a consumer's loop over just the
// region it reads there, in a buffer of that region's size.
#include "engine/te/verify_schedule.h"
#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::ExpectComputes;
using testing::LoopStructure;
using testing::StoreText;

PrimExpr F(double value) { return loop::FloatImm(value); }

// B[i] = 2 A[i] (6), C[i] = B[i] + B[i + 1] (5).
struct StencilCase {
  Tensor A = Placeholder("A", DataType::kFloat32, {6});
  Tensor B =
      Compute("B", {6}, {A}, [this](const auto& i) -> ComputeBody { return A(i[0]) * F(2); });
  Tensor C = Compute("C", {5}, {B},
                     [this](const auto& i) -> ComputeBody { return B(i[0]) + B(i[0] + 1); });
  std::vector<std::vector<double>> inputs = {{1, 2, 3, 4, 5, 6}};
  // B = [2, 4, 6, 8, 10, 12].
  std::vector<double> expected = {6, 10, 14, 18, 22};
  std::vector<Tensor> params() const { return {A, C}; }
};

TEST(ComputeAtTest, StencilAtOuterLoopComputesOverlappingRegion) {
  StencilCase c;
  Schedule s = Schedule::Create({c.C});
  auto [o, i] = s.Split(c.C, s.Axes(c.C)[0], 2);
  s.ComputeAt(c.B, c.C, o);
  auto func = LowerSchedule(s, c.params(), "f");
  ASSERT_TRUE(func.ok()) << func.status();
  // Per outer iteration C reads B[2o .. 2o + 2]: three elements. The last
  // outer iteration reaches B[6], past B's end, so B's nest is guarded too.
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[3] {alloc B[3] {for ax0[3] {if {B=}}; for ax0.inner[2] {if {C=}}}}");
  EXPECT_EQ(StoreText((*func)->body),
            "if ((ax0.outer*2) + ax0) < 6: B[ax0] = A[(ax0.outer*2) + ax0]*2\n"
            "if ((ax0.outer*2) + ax0.inner) < 5: C[(ax0.outer*2) + ax0.inner] = "
            "B[ax0.inner] + B[ax0.inner + 1]");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(ComputeAtTest, StencilAtInnerLoop) {
  StencilCase c;
  Schedule s = Schedule::Create({c.C});
  auto [o, i] = s.Split(c.C, s.Axes(c.C)[0], 2);
  s.ComputeAt(c.B, c.C, i);
  auto func = LowerSchedule(s, c.params(), "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[3] {for ax0.inner[2] {alloc B[2] {for ax0[2] {if {B=}}; if {C=}}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(ComputeAtTest, ComputeRootUndoesComputeAt) {
  StencilCase c;
  Schedule s = Schedule::Create({c.C});
  s.ComputeAt(c.B, c.C, s.Axes(c.C)[0]);
  s.ComputeRoot(c.B);
  auto func = LowerSchedule(s, c.params(), "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body), "alloc B[6] {for ax0[6] {B=}; for ax0[5] {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

// A2 = 2 A is computed per row of C = A2 x B: one row of A2 at a time.
TEST(ComputeAtTest, ProducerOfAReductionPerRow) {
  Tensor A = Placeholder("A", DataType::kFloat32, {3, 3});
  Tensor B = Placeholder("B", DataType::kFloat32, {3, 3});
  Tensor A2 = Compute("A2", {3, 3}, {A},
                      [&](const auto& i) -> ComputeBody { return A(i[0], i[1]) * F(2); });
  Tensor C = testing::MatMul(A2, B);
  Schedule s = Schedule::Create({C});
  s.ComputeAt(A2, C, s.Axes(C)[0]);
  auto func = LowerSchedule(s, {A, B, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0[3] {alloc A2[3] {for ax0[1] {for ax1[3] {A2=}}; "
            "for ax1[3] {C=; for k[3] {C=}}}}");
  // Twice [[1,2,3],[4,5,6],[7,8,9]] x [[1,0,1],[0,1,1],[1,1,0]].
  ExpectComputes(s, {A, B, C}, {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 0, 1, 0, 1, 1, 1, 1, 0}},
                 {8, 10, 6, 20, 22, 18, 32, 34, 30});
}

// A reduction computed inside its consumer's outer loop.
TEST(ComputeAtTest, ReductionProducer) {
  Tensor A = Placeholder("A", DataType::kInt32, {5, 2});
  Tensor R = Compute("R", {5}, {A}, [&](const auto& i) -> ComputeBody {
    IterVar k = ReduceAxis(2, "k");
    return Sum(A(i[0], k->var), {k});
  });
  Tensor C = Compute("C", {5}, {R}, [&](const auto& i) -> ComputeBody {
    return R(i[0]) * loop::IntImm(10, loop::PrimType{DataType::kInt32, 1});
  });
  Schedule s = Schedule::Create({C});
  auto [o, i] = s.Split(C, s.Axes(C)[0], 2);
  s.ComputeAt(R, C, o);
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[3] {alloc R[2] {for ax0[2] {if {R=}; for k[2] {if {R=}}}; "
            "for ax0.inner[2] {if {C=}}}}");
  // Row sums 1+2, 3+4, ... times 10.
  ExpectComputes(s, {A, C}, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {30, 70, 110, 150, 190});
}

// P -> Q -> C with Q at C's outer loop and P at Q's loop: regions compose.
TEST(ComputeAtTest, ChainOfComputeAt) {
  Tensor A = Placeholder("A", DataType::kFloat32, {8});
  Tensor P = Compute("P", {8}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) + F(1); });
  Tensor Q =
      Compute("Q", {7}, {P}, [&](const auto& i) -> ComputeBody { return P(i[0]) * P(i[0] + 1); });
  Tensor C =
      Compute("C", {6}, {Q}, [&](const auto& i) -> ComputeBody { return Q(i[0]) + Q(i[0] + 1); });
  Schedule s = Schedule::Create({C});
  auto [o, i] = s.Split(C, s.Axes(C)[0], 3);
  s.ComputeAt(Q, C, o);
  s.ComputeAt(P, Q, s.Axes(Q)[0]);
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0.outer[2] {alloc Q[4] {for ax0[4] {alloc P[2] {for ax0[2] {P=}; Q=}}; "
            "for ax0.inner[3] {C=}}}");
  // P = i + 1, Q = (i + 1)(i + 2) = [2, 6, 12, 20, 30, 42, 56].
  ExpectComputes(s, {A, C}, {{0, 1, 2, 3, 4, 5, 6, 7}}, {8, 18, 32, 50, 72, 98});
  auto verified = VerifyScheduleRecord(s, {A, C}, 7);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(*verified, (std::vector<bool>{true, true, true, true}));
}

// The consumer reads the producer through an inlined stage.
TEST(ComputeAtTest, ThroughAnInlinedStage) {
  Tensor A = Placeholder("A", DataType::kFloat32, {6});
  Tensor P = Compute("P", {6}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) * F(3); });
  Tensor Q = Compute("Q", {6}, {P}, [&](const auto& i) -> ComputeBody { return P(i[0]) - F(1); });
  Tensor C = Compute("C", {3}, {Q},
                     [&](const auto& i) -> ComputeBody { return Q(i[0] * 2) + Q(i[0] * 2 + 1); });
  Schedule s = Schedule::Create({C});
  s.ComputeInline(Q);
  s.ComputeAt(P, C, s.Axes(C)[0]);
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body), "for ax0[3] {alloc P[2] {for ax0[2] {P=}; C=}}");
  // Q = 3A - 1 = [2, 5, 8, 11, 14, 17]; C sums pairs.
  ExpectComputes(s, {A, C}, {{1, 2, 3, 4, 5, 6}}, {7, 19, 31});
}

// A normalization's shape: per row of C, the statistic M, the centred row D, its statistic S,
// all computed at C's row loop; D reads M and S reads D from their row buffers.
TEST(ComputeAtTest, SiblingsAtTheSameLoopReadEachOther) {
  Tensor A = Placeholder("A", DataType::kFloat32, {3, 2});
  auto row_sum = [](const Tensor& t, const std::string& name) {
    return Compute(name, {3}, {t}, [t](const auto& i) -> ComputeBody {
      IterVar k = ReduceAxis(2, "k");
      return Sum(t(i[0], k->var), {k});
    });
  };
  Tensor M = row_sum(A, "M");
  Tensor D = Compute("D", {3, 2}, {A, M},
                     [&](const auto& i) -> ComputeBody { return A(i[0], i[1]) - M(i[0]); });
  Tensor S = row_sum(D, "S");
  Tensor C = Compute("C", {3, 2}, {D, S},
                     [&](const auto& i) -> ComputeBody { return D(i[0], i[1]) * S(i[0]); });
  Schedule s = Schedule::Create({C});
  IterVar row = s.Axes(C)[0];
  for (const Tensor& t : {M, D, S}) s.ComputeAt(t, C, row);
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body),
            "for ax0[3] {alloc M[1] {for ax0[1] {M=; for k[2] {M=}}; "
            "alloc D[2] {for ax0[1] {for ax1[2] {D=}}; "
            "alloc S[1] {for ax0[1] {S=; for k[2] {S=}}; for ax1[2] {C=}}}}}");
  // Rows [1, 2], [3, 4], [5, 6]: M = 3, 7, 11; D = [-2, -1], [-4, -3], [-6, -5];
  // S = -3, -7, -11; C = D * S.
  ExpectComputes(s, {A, C}, {{1, 2, 3, 4, 5, 6}}, {6, 3, 28, 21, 66, 55});
}

// A stage that reads a compute_at stage from outside its loop cannot share its region buffer.
TEST(ComputeAtTest, ProducerWithAnotherReaderIsAnError) {
  StencilCase c;
  Tensor D = Compute("D", {6}, {c.B}, [&](const auto& i) -> ComputeBody { return c.B(i[0]); });
  Schedule s = Schedule::Create({c.C, D});
  s.ComputeAt(c.B, c.C, s.Axes(c.C)[0]);
  auto func = LowerSchedule(s, {c.A, c.C, D}, "f");
  EXPECT_EQ(func.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(func.status().message()).find("D also reads B"), std::string::npos)
      << func.status();
}

TEST(ComputeAtTest, AxisSplitAfterComputeAtIsAnError) {
  StencilCase c;
  Schedule s = Schedule::Create({c.C});
  IterVar x = s.Axes(c.C)[0];
  s.ComputeAt(c.B, c.C, x);
  s.Split(c.C, x, 2);
  auto func = LowerSchedule(s, c.params(), "f");
  EXPECT_NE(std::string(func.status().message()).find("ax0 is no longer a loop of C"),
            std::string::npos)
      << func.status();
}

TEST(ComputeAtTest, ParamComputedAtIsAnError) {
  StencilCase c;
  Schedule s = Schedule::Create({c.C});
  s.ComputeAt(c.B, c.C, s.Axes(c.C)[0]);
  auto func = LowerSchedule(s, {c.A, c.B, c.C}, "f");
  EXPECT_NE(std::string(func.status().message()).find("B is a parameter"), std::string::npos)
      << func.status();
}

}  // namespace
}  // namespace kiln::te
