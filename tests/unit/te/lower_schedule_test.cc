// Lowering: loop structure per primitive, results against hand-computed
// values and the vanilla schedule, reductions, guards, params, spans and
// determinism.
#include "engine/te/verify_schedule.h"
#include "te_test_util.h"

namespace kiln::te {
namespace {

using testing::Add;
using testing::AllStatements;
using testing::ExpectComputes;
using testing::LoopStructure;
using testing::MatMul;

// A 2x3 add with hand-computed values.
struct AddCase {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 3});
  Tensor B = Placeholder("B", DataType::kFloat32, {2, 3});
  Tensor C = Add(A, B);
  std::vector<std::vector<double>> inputs = {{1, 2, 3, 4, 5, 6}, {10, 20, 30, 40, 50, 60}};
  std::vector<double> expected = {11, 22, 33, 44, 55, 66};
  std::vector<Tensor> params() const { return {A, B, C}; }
};

// A 3x3 matmul: [[1,2,3],[4,5,6],[7,8,9]] x [[1,0,1],[0,1,1],[1,1,0]].
struct MatMulCase {
  Tensor A = Placeholder("A", DataType::kFloat32, {3, 3});
  Tensor B = Placeholder("B", DataType::kFloat32, {3, 3});
  Tensor C = MatMul(A, B);
  std::vector<std::vector<double>> inputs = {{1, 2, 3, 4, 5, 6, 7, 8, 9},
                                             {1, 0, 1, 0, 1, 1, 1, 1, 0}};
  std::vector<double> expected = {4, 5, 3, 10, 11, 9, 16, 17, 15};
  std::vector<Tensor> params() const { return {A, B, C}; }
};

std::string Lowered(const Schedule& s, const std::vector<Tensor>& params) {
  auto func = LowerSchedule(s, params, "f");
  EXPECT_TRUE(func.ok()) << func.status();
  return func.ok() ? LoopStructure((*func)->body) : "";
}

TEST(LowerScheduleTest, VanillaAdd) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1[3] {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, VanillaMatMulInitializesThenAccumulates) {
  MatMulCase c;
  Schedule s = Schedule::Create({c.C});
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[3] {for ax1[3] {C=; for k[3] {C=}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, SplitWithRemainderIsGuarded) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Split(c.C, s.Axes(c.C)[1], 2);  // 3 = 2 + 1: the second outer iteration is partial
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1.outer[2] {for ax1.inner[2] {if {C=}}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, DivisibleSplitHasNoGuard) {
  Tensor A = Placeholder("A", DataType::kInt32, {6});
  Tensor C =
      Compute("C", {6}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) * A(i[0]); });
  Schedule s = Schedule::Create({C});
  s.Split(C, s.Axes(C)[0], 3);
  EXPECT_EQ(Lowered(s, {A, C}), "for ax0.outer[2] {for ax0.inner[3] {C=}}");
  ExpectComputes(s, {A, C}, {{1, -2, 3, -4, 5, 6}}, {1, 4, 9, 16, 25, 36});
}

TEST(LowerScheduleTest, SplitNParts) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.SplitNParts(c.C, s.Axes(c.C)[1], 2);  // 2 parts of ceil(3 / 2) = 2
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1.outer[2] {for ax1.inner[2] {if {C=}}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, SplitFactorLargerThanExtent) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Split(c.C, s.Axes(c.C)[1], 8);
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1.outer[1] {for ax1.inner[3] {C=}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, TileMatMulWithRemainders) {
  MatMulCase c;
  Schedule s = Schedule::Create({c.C});
  s.Tile(c.C, s.Axes(c.C)[0], s.Axes(c.C)[1], 2, 2);
  EXPECT_EQ(Lowered(s, c.params()),
            "for ax0.outer[2] {for ax1.outer[2] {for ax0.inner[2] {for ax1.inner[2] "
            "{if {C=}; for k[3] {if {C=}}}}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, Fuse) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  IterVar fused = s.Fuse(c.C, s.Axes(c.C)[0], s.Axes(c.C)[1]);
  EXPECT_EQ(fused->extent, 6);
  EXPECT_EQ(Lowered(s, c.params()), "for ax0.ax1.fused[6] {C=}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, FuseThenSplitWithRemainder) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  IterVar fused = s.Fuse(c.C, s.Axes(c.C)[0], s.Axes(c.C)[1]);
  s.Split(c.C, fused, 4);
  EXPECT_EQ(Lowered(s, c.params()),
            "for ax0.ax1.fused.outer[2] {for ax0.ax1.fused.inner[4] {if {C=}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, ReorderMovesReduceLoopOutward) {
  MatMulCase c;
  Schedule s = Schedule::Create({c.C});
  IterVar m = s.Axes(c.C)[0], n = s.Axes(c.C)[1], k = s.ReduceAxes(c.C)[0];
  s.Reorder(c.C, {k, m, n});
  // The initialization gets a loop nest of its own before the reduce loop.
  EXPECT_EQ(Lowered(s, c.params()),
            "for ax0.init[3] {for ax1.init[3] {C=}}; for k[3] {for ax0[3] {for ax1[3] {C=}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, ReorderDataParallel) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Reorder(c.C, {s.Axes(c.C)[1], s.Axes(c.C)[0]});
  EXPECT_EQ(Lowered(s, c.params()), "for ax1[3] {for ax0[2] {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, LoopKinds) {
  MatMulCase c;
  Schedule s = Schedule::Create({c.C});
  IterVar m = s.Axes(c.C)[0], n = s.Axes(c.C)[1], k = s.ReduceAxes(c.C)[0];
  s.Reorder(c.C, {m, k, n});
  s.Parallel(c.C, m);
  s.Vectorize(c.C, n);
  s.Unroll(c.C, k);
  EXPECT_EQ(Lowered(s, c.params()),
            "for ax0[3]:parallel {for ax1.init[3]:vectorized {C=}; "
            "for k[3]:unroll {for ax1[3]:vectorized {C=}}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, VectorizeAdd) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Vectorize(c.C, s.Axes(c.C)[1]);
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1[3]:vectorized {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, ParallelAdd) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Parallel(c.C, s.Axes(c.C)[0]);
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2]:parallel {for ax1[3] {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

TEST(LowerScheduleTest, UnrollAdd) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  s.Unroll(c.C, s.Axes(c.C)[1]);
  EXPECT_EQ(Lowered(s, c.params()), "for ax0[2] {for ax1[3]:unroll {C=}}");
  ExpectComputes(s, c.params(), c.inputs, c.expected);
}

// Row reductions of [[1, 5, 3], [-2, -7, -1]], with k split 2 + 1.
TEST(LowerScheduleTest, ReduceKindsStartFromTheirIdentity) {
  struct Case {
    ComputeBody (*reduce)(PrimExpr, std::vector<IterVar>, PrimExpr);
    std::vector<double> expected;
  };
  std::vector<Case> cases = {
      {&Sum, {9, -10}}, {&Max, {5, -1}}, {&Min, {1, -7}}, {&Prod, {15, -14}}};
  for (const Case& rc : cases) {
    Tensor A = Placeholder("A", DataType::kFloat32, {2, 3});
    Tensor R = Compute("R", {2}, {A}, [&](const auto& i) -> ComputeBody {
      IterVar k = ReduceAxis(3, "k");
      return rc.reduce(A(i[0], k->var), {k}, nullptr);
    });
    Schedule s = Schedule::Create({R});
    s.Split(R, s.ReduceAxes(R)[0], 2);
    EXPECT_EQ(Lowered(s, {A, R}), "for ax0[2] {R=; for k.outer[2] {for k.inner[2] {if {R=}}}}");
    ExpectComputes(s, {A, R}, {{1, 5, 3, -2, -7, -1}}, rc.expected);
  }
}

// sum over k != 1 of A[i, k]: the condition excludes points from the reduction.
TEST(LowerScheduleTest, ConditionalReductionSkipsExcludedPoints) {
  Tensor A = Placeholder("A", DataType::kInt32, {2, 3});
  Tensor R = Compute("R", {2}, {A}, [&](const auto& i) -> ComputeBody {
    IterVar k = ReduceAxis(3, "k");
    return Sum(A(i[0], k->var), {k}, loop::NotEqual(k->var, loop::IntImm(1)));
  });
  Schedule s = Schedule::Create({R});
  EXPECT_EQ(Lowered(s, {A, R}), "for ax0[2] {R=; for k[3] {if {R=}}}");
  ExpectComputes(s, {A, R}, {{1, 2, 3, 4, 5, 6}}, {4, 10});
}

// A scalar (0-d) reduction: no data-parallel loops at all.
TEST(LowerScheduleTest, ScalarReduction) {
  Tensor A = Placeholder("A", DataType::kInt64, {4});
  Tensor S = Compute("S", {}, {A}, [&](const auto&) -> ComputeBody {
    IterVar k = ReduceAxis(4, "k");
    return Sum(A(k->var), {k});
  });
  Schedule s = Schedule::Create({S});
  EXPECT_EQ(Lowered(s, {A, S}), "S=; for k[4] {S=}");
  ExpectComputes(s, {A, S}, {{3, 1, 4, 1}}, {9});
}

TEST(LowerScheduleTest, IntermediateStagesAreAllocated) {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 3});
  Tensor B = Compute("B", {2, 3}, {A}, [&](const auto& i) -> ComputeBody {
    return A(i[0], i[1]) * loop::FloatImm(2.0);
  });
  Tensor C = Compute("C", {3, 2}, {B}, [&](const auto& i) -> ComputeBody {
    return B(i[1], i[0]) + loop::FloatImm(1.0);
  });
  Schedule s = Schedule::Create({C});
  EXPECT_EQ(Lowered(s, {A, C}),
            "alloc B[6] {for ax0[2] {for ax1[3] {B=}}; for ax0[3] {for ax1[2] {C=}}}");
  // C is B transposed plus one: [[3, 9], [5, 11], [7, 13]].
  ExpectComputes(s, {A, C}, {{1, 2, 3, 4, 5, 6}}, {3, 9, 5, 11, 7, 13});
}

TEST(LowerScheduleTest, ComputeInlineSubstitutesTheBody) {
  Tensor A = Placeholder("A", DataType::kFloat32, {2, 3});
  Tensor B = Compute("B", {2, 3}, {A}, [&](const auto& i) -> ComputeBody {
    return A(i[0], i[1]) * loop::FloatImm(2.0);
  });
  Tensor D = Compute("D", {2, 3}, {B}, [&](const auto& i) -> ComputeBody {
    return B(i[0], i[1]) - loop::FloatImm(1.0);
  });
  Tensor C = Compute("C", {3, 2}, {D, B},
                     [&](const auto& i) -> ComputeBody { return D(i[1], i[0]) + B(i[1], i[0]); });
  Schedule s = Schedule::Create({C});
  s.ComputeInline(B);
  EXPECT_EQ(Lowered(s, {A, C}),
            "alloc D[6] {for ax0[2] {for ax1[3] {D=}}; for ax0[3] {for ax1[2] {C=}}}");
  s.ComputeInline(D);
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_EQ(LoopStructure((*func)->body), "for ax0[3] {for ax1[2] {C=}}");
  // Only A and C remain as buffers.
  for (const loop::StmtNode* stmt : AllStatements((*func)->body)) {
    if (stmt->kind() != ObjectKind::kBufferStore) continue;
    const auto* store = static_cast<const loop::BufferStoreNode*>(stmt);
    EXPECT_EQ(store->buffer->name, "C");
    loop::PreOrderVisit(loop::MakeEvaluate(store->value), [&](const Object* node) {
      if (node->kind() == ObjectKind::kBufferLoad) {
        EXPECT_EQ(static_cast<const loop::BufferLoadNode*>(node)->buffer->name, "A");
      }
    });
  }
  // C[j, i] = (2 A[i, j] - 1) + 2 A[i, j] = 4 A[i, j] - 1.
  ExpectComputes(s, {A, C}, {{1, 2, 3, 4, 5, 6}}, {3, 15, 7, 19, 11, 23});
}

TEST(LowerScheduleTest, ComputeRootUndoesInline) {
  Tensor A = Placeholder("A", DataType::kFloat32, {3});
  Tensor B =
      Compute("B", {3}, {A}, [&](const auto& i) -> ComputeBody { return A(i[0]) + A(i[0]); });
  Tensor C =
      Compute("C", {3}, {B}, [&](const auto& i) -> ComputeBody { return B(i[0]) * B(i[0]); });
  Schedule s = Schedule::Create({C});
  s.ComputeInline(B);
  EXPECT_EQ(Lowered(s, {A, C}), "for ax0[3] {C=}");
  s.ComputeRoot(B);
  EXPECT_EQ(Lowered(s, {A, C}), "alloc B[3] {for ax0[3] {B=}; for ax0[3] {C=}}");
  ExpectComputes(s, {A, C}, {{1, 2, 3}}, {4, 16, 36});
}

TEST(LowerScheduleTest, ParamErrors) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  auto missing_input = LowerSchedule(s, {c.A, c.C}, "f");
  EXPECT_EQ(missing_input.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(missing_input.status().message())
                .find("placeholder B is read but is not a parameter"),
            std::string::npos);
  auto missing_output = LowerSchedule(s, {c.A, c.B}, "f");
  EXPECT_NE(std::string(missing_output.status().message()).find("output C is not a parameter"),
            std::string::npos);
  auto twice = LowerSchedule(s, {c.A, c.B, c.C, c.A}, "f");
  EXPECT_NE(std::string(twice.status().message()).find("listed twice"), std::string::npos);
  // An input nothing reads stays a parameter (eye_like reads only its
  // input's shape); a computed tensor from another schedule is an error.
  Tensor X = Placeholder("X", DataType::kFloat32, {1});
  auto unread = LowerSchedule(s, {c.A, c.B, c.C, X}, "f");
  ASSERT_TRUE(unread.ok()) << unread.status();
  EXPECT_EQ((*unread)->params.size(), 4u);
  Tensor Y = Compute("Y", {1}, {X}, [&](const std::vector<loop::Var>& i) { return X(i[0]); });
  auto foreign = LowerSchedule(s, {c.A, c.B, c.C, Y}, "f");
  EXPECT_NE(std::string(foreign.status().message()).find("Y is not part of the schedule"),
            std::string::npos);
}

TEST(LowerScheduleTest, ParamsKeepTheirOrderAndTheFunctionItsName) {
  AddCase c;
  Schedule s = Schedule::Create({c.C});
  auto func = LowerSchedule(s, {c.B, c.A, c.C}, "fused_add");
  ASSERT_TRUE(func.ok()) << func.status();
  ASSERT_EQ((*func)->params.size(), 3u);
  EXPECT_TRUE((*func)->param_buffer(0).same_as(c.B.op()->buffer));
  EXPECT_TRUE((*func)->param_buffer(1).same_as(c.A.op()->buffer));
  EXPECT_TRUE((*func)->param_buffer(2).same_as(c.C.op()->buffer));
  const AttrValue* symbol = (*func)->attrs->Find(loop::kAttrGlobalSymbol);
  ASSERT_NE(symbol, nullptr);
  EXPECT_EQ(symbol->get<std::string>(), "fused_add");
}

// Each operation's span reaches every statement lowered from it.
TEST(LowerScheduleTest, SpansReachEveryStatement) {
  Tensor A = Placeholder("A", DataType::kFloat32, {6, 4});
  Tensor B, C;
  {
    SpanScope scope(MakeSpan("layer_scale"));
    B = Compute("B", {6, 4}, {A},
                [&](const auto& i) -> ComputeBody { return A(i[0], i[1]) * loop::FloatImm(3.0); });
  }
  {
    SpanScope scope(MakeSpan("layer_sum"));
    C = Compute("C", {6}, {B}, [&](const auto& i) -> ComputeBody {
      IterVar k = ReduceAxis(4, "k");
      return Sum(B(i[0], k->var), {k});
    });
  }
  Schedule s = Schedule::Create({C});
  auto [o, i] = s.Split(C, s.Axes(C)[0], 4);
  s.ComputeAt(B, C, o);
  s.Reorder(C, {s.ReduceAxes(C)[0], i});
  auto func = LowerSchedule(s, {A, C}, "f");
  ASSERT_TRUE(func.ok()) << func.status();
  std::vector<const loop::StmtNode*> stmts = AllStatements((*func)->body);
  ASSERT_GT(stmts.size(), 5u);
  int from_b = 0, from_c = 0;
  for (const loop::StmtNode* stmt : stmts) {
    ASSERT_TRUE(stmt->span.defined()) << ObjectKindName(stmt->kind());
    std::vector<std::string> names = SpanSourceNames(stmt->span);
    ASSERT_EQ(names.size(), 1u);
    if (names[0] == "layer_scale") ++from_b;
    if (names[0] == "layer_sum") ++from_c;
    if (stmt->kind() == ObjectKind::kBufferStore) {
      const auto* store = static_cast<const loop::BufferStoreNode*>(stmt);
      EXPECT_EQ(names[0], store->buffer->name == "B" ? "layer_scale" : "layer_sum");
    }
  }
  EXPECT_EQ(from_b + from_c, static_cast<int>(stmts.size()));
  EXPECT_GT(from_b, 0);
  EXPECT_GT(from_c, 0);
  EXPECT_EQ(SpanSourceNames((*func)->span), (std::vector<std::string>{"layer_scale", "layer_sum"}));
}

// Lowering the same schedule twice gives the same loops, index expressions
// and names (nothing depends on pointers or hash order).
TEST(LowerScheduleTest, Deterministic) {
  MatMulCase c;
  Schedule s = Schedule::Create({c.C});
  auto [mo, no, mi, ni] = s.Tile(c.C, s.Axes(c.C)[0], s.Axes(c.C)[1], 2, 2);
  s.Fuse(c.C, mo, no);
  auto first = LowerSchedule(s, c.params(), "f");
  auto second = LowerSchedule(s, c.params(), "f");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(LoopStructure((*first)->body), LoopStructure((*second)->body));
  EXPECT_EQ(testing::StoreText((*first)->body), testing::StoreText((*second)->body));
}

}  // namespace
}  // namespace kiln::te
