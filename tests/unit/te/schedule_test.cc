// Schedule creation, leaf iteration variables after each primitive, and the
// errors a caller can cause.
#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::Add;
using testing::MatMul;

std::vector<std::string> LeafNames(const Schedule& s, const Tensor& t) {
  std::vector<std::string> names;
  for (const IterVar& leaf : s.LeafIterVars(t)) names.push_back(leaf->var->name);
  return names;
}

TEST(ScheduleTest, CreateOrdersStagesInputsFirst) {
  Tensor A = Placeholder("A", DataType::kFloat32, {4});
  Tensor B =
      Compute("B", {4}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) * A(i[0]); });
  Tensor D =
      Compute("D", {4}, {A, B}, [&](const auto& i) -> ComputeBody { return A(i[0]) + B(i[0]); });
  Schedule s = Schedule::Create({D});
  std::vector<std::string> names;
  for (const StagePtr& stage : s.stages()) names.push_back(stage->name());
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "D"}));
  EXPECT_TRUE(s.stages()[2]->is_output);
  EXPECT_FALSE(s.stages()[1]->is_output);
  EXPECT_EQ(s.FindStage(B), s.stages()[1].get());
  EXPECT_EQ(s.outputs().size(), 1u);
}

TEST(ScheduleTest, LeavesFollowTheLoopPrimitives) {
  Tensor A = Placeholder("A", DataType::kFloat32, {16, 12});
  Tensor B = Placeholder("B", DataType::kFloat32, {12, 20});
  Tensor C = MatMul(A, B);
  Schedule s = Schedule::Create({C});
  EXPECT_EQ(LeafNames(s, C), (std::vector<std::string>{"ax0", "ax1", "k"}));
  auto [xo, xi] = s.Split(C, s.Axes(C)[0], 5);
  EXPECT_EQ(xo->extent, 4);  // ceil(16 / 5)
  EXPECT_EQ(xi->extent, 5);
  auto [ko, ki] = s.SplitNParts(C, s.ReduceAxes(C)[0], 5);
  EXPECT_EQ(ko->extent, 5);
  EXPECT_EQ(ki->extent, 3);  // ceil(12 / 5)
  EXPECT_TRUE(ko->is_reduce);
  EXPECT_EQ(LeafNames(s, C),
            (std::vector<std::string>{"ax0.outer", "ax0.inner", "ax1", "k.outer", "k.inner"}));
  IterVar fused = s.Fuse(C, xi, s.Axes(C)[1]);
  EXPECT_EQ(fused->extent, 100);
  EXPECT_EQ(LeafNames(s, C),
            (std::vector<std::string>{"ax0.outer", "ax0.inner.ax1.fused", "k.outer", "k.inner"}));
  s.Reorder(C, {ki, fused, xo});
  EXPECT_EQ(LeafNames(s, C),
            (std::vector<std::string>{"k.inner", "ax0.inner.ax1.fused", "k.outer", "ax0.outer"}));
  ASSERT_TRUE(s.status().ok()) << s.status();
  // The original axes stay the op's axes.
  EXPECT_EQ(s.Axes(C).size(), 2u);
  EXPECT_EQ(s.ReduceAxes(C).size(), 1u);
}

struct ErrorCase {
  std::string name;
  std::function<void(Schedule&, const Tensor& A, const Tensor& C, const Tensor& D)> apply;
  std::string message;
};

// D = C + 1 where C = A x A (a reduction).
TEST(ScheduleTest, CallerErrorsAreReportedNotCrashes) {
  std::vector<ErrorCase> cases = {
      {"split factor 0", [](Schedule& s, auto&, auto& C, auto&) { s.Split(C, s.Axes(C)[0], 0); },
       "factor must be positive"},
      {"nparts -1", [](Schedule& s, auto&, auto& C, auto&) { s.SplitNParts(C, s.Axes(C)[0], -1); },
       "nparts must be positive"},
      {"axis of another stage",
       [](Schedule& s, auto&, auto& C, auto& D) { s.Split(C, s.Axes(D)[0], 2); },
       "ax0 is not one of its current loops"},
      {"axis already split",
       [](Schedule& s, auto&, auto& C, auto&) {
         IterVar x = s.Axes(C)[0];
         s.Split(C, x, 2);
         s.Split(C, x, 2);
       },
       "is not one of its current loops"},
      {"null axis", [](Schedule& s, auto&, auto& C, auto&) { s.Vectorize(C, nullptr); },
       "null iteration variable"},
      {"vectorize reduce",
       [](Schedule& s, auto&, auto& C, auto&) { s.Vectorize(C, s.ReduceAxes(C)[0]); },
       "k is a reduce loop"},
      {"parallel reduce",
       [](Schedule& s, auto&, auto& C, auto&) {
         auto [ko, ki] = s.Split(C, s.ReduceAxes(C)[0], 2);
         s.Parallel(C, ko);
       },
       "k.outer is a reduce loop"},
      {"split placeholder",
       [](Schedule& s, auto& A, auto&, auto&) {
         s.Split(A, s.Axes(A).empty() ? nullptr : s.Axes(A)[0], 2);
       },
       "placeholder"},
      {"foreign tensor",
       [](Schedule& s, auto&, auto&, auto&) {
         Tensor X = Placeholder("X", DataType::kFloat32, {3});
         Tensor Y = Compute("Y", {3}, {X}, [&](const auto& i) -> ComputeBody { return X(i[0]); });
         s.Split(Y, Y.op()->axis[0], 2);
       },
       "Y is not part of this schedule"},
      {"fuse not adjacent",
       [](Schedule& s, auto&, auto& C, auto&) { s.Fuse(C, s.Axes(C)[0], s.ReduceAxes(C)[0]); },
       "must immediately follow"},
      {"fuse reduce with data-parallel",
       [](Schedule& s, auto&, auto& C, auto&) { s.Fuse(C, s.Axes(C)[1], s.ReduceAxes(C)[0]); },
       "cannot fuse data-parallel and reduce loops"},
      {"reorder twice",
       [](Schedule& s, auto&, auto& C, auto&) {
         s.Reorder(C, {s.Axes(C)[1], s.Axes(C)[1]});
       },
       "listed twice"},
      {"inline a reduction", [](Schedule& s, auto&, auto& C, auto&) { s.ComputeInline(C); },
       "C is a reduction (sum)"},
      {"inline an output", [](Schedule& s, auto&, auto&, auto& D) { s.ComputeInline(D); },
       "D is an output"},
      {"compute_at an output",
       [](Schedule& s, auto&, auto& C, auto& D) { s.ComputeAt(D, C, s.Axes(C)[0]); },
       "D is an output"},
      {"compute_at a non-reader",
       [](Schedule& s, auto&, auto& C, auto& D) {
         s.ComputeAt(C, C, s.Axes(C)[0]);
         (void)D;
       },
       "C does not read C"},
      {"compute_at axis of the producer",
       [](Schedule& s, auto&, auto& C, auto& D) { s.ComputeAt(C, D, s.Axes(C)[0]); },
       "is not one of its current loops"},
      {"cache_write after split",
       [](Schedule& s, auto&, auto& C, auto&) {
         s.Split(C, s.Axes(C)[0], 2);
         s.CacheWrite(C, "local");
       },
       "must come before other loop primitives"},
      {"cache_read by a non-reader",
       [](Schedule& s, auto& A, auto&, auto& D) { s.CacheRead(A, "local", {D}); },
       "D does not read it"},
      {"cache_read without scope",
       [](Schedule& s, auto& A, auto& C, auto&) { s.CacheRead(A, "", {C}); }, "needs a scope"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor A = Placeholder("A", DataType::kFloat32, {4, 4});
    Tensor C = MatMul(A, A);
    Tensor D = Compute("D", {4, 4}, {C}, [&](const auto& i) -> ComputeBody {
      return C(i[0], i[1]) + loop::FloatImm(1.0);
    });
    Schedule s = Schedule::Create({D});
    c.apply(s, A, C, D);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.status().message()).find(c.message), std::string::npos) << s.status();
    auto lowered = LowerSchedule(s, {A, D}, "f");
    EXPECT_EQ(lowered.status(), s.status());
  }
}

TEST(ScheduleTest, LaterPrimitivesAfterAnErrorAreNoOps) {
  Tensor A = Placeholder("A", DataType::kFloat32, {4, 6});
  Tensor B = Placeholder("B", DataType::kFloat32, {4, 6});
  Tensor C = Add(A, B);
  Schedule s = Schedule::Create({C});
  s.Split(C, s.Axes(C)[0], -2);
  absl::Status first = s.status();
  auto [o, i] = s.Split(C, s.Axes(C)[1], 3);  // valid, but after an error
  EXPECT_EQ(o, nullptr);
  EXPECT_EQ(s.status(), first);
  EXPECT_EQ(s.LeafIterVars(C).size(), 2u);
  EXPECT_EQ(s.Tile(C, s.Axes(C)[0], s.Axes(C)[1], 2, 2)[0], nullptr);
}

}  // namespace
}  // namespace kiln::te
