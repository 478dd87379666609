// The loop passes on small hand-built PrimFuncs: the structure each pass
// produces (hand-computed), the spans it keeps, that graph functions and
// unchanged functions pass through as the same nodes, and the registration
// of the passes and the default loop pipeline.
#include <gtest/gtest.h>

#include <string>

#include "engine/ir/module.h"
#include "engine/loop/functor.h"
#include "engine/loop/prim_func.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"
#include "engine/loop_transform/flatten_buffer.h"
#include "engine/loop_transform/loop_partition.h"
#include "engine/loop_transform/lower_intrin.h"
#include "engine/loop_transform/register_loop_passes.h"
#include "engine/loop_transform/remove_no_op.h"
#include "engine/loop_transform/simplify.h"
#include "engine/loop_transform/storage_rewrite.h"
#include "engine/loop_transform/unroll_loop.h"
#include "engine/loop_transform/vectorize_loop.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pipeline.h"

namespace kiln::loop::transform {
namespace {

// Index expressions as text, every binary node in parentheses.
std::string Str(const PrimExpr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return std::to_string(imm->value);
  if (const auto* imm = e.as<FloatImmNode>()) {
    std::string text = std::to_string(imm->value);
    return text.substr(0, text.find_last_not_of('0') + 2);
  }
  if (const auto* var = e.as<VarNode>()) return var->name;
  if (const auto* b = e.as<BinaryNode>()) {
    return "(" + Str(b->a) + " " + BinaryOpName(b->op) + " " + Str(b->b) + ")";
  }
  if (const auto* r = e.as<RampNode>()) {
    return "ramp(" + Str(r->base) + ", " + Str(r->stride) + ", " + std::to_string(r->lanes) + ")";
  }
  if (const auto* b = e.as<BroadcastNode>()) {
    return "broadcast(" + Str(b->value) + ", " + std::to_string(b->lanes) + ")";
  }
  if (const auto* load = e.as<BufferLoadNode>()) {
    std::string text = load->buffer->name + "[";
    for (size_t i = 0; i < load->indices.size(); ++i) {
      text += (i ? ", " : "") + Str(load->indices[i]);
    }
    return text + "]";
  }
  if (const auto* call = e.as<IntrinsicCallNode>()) {
    std::string text = std::string(IntrinsicName(call->intrinsic)) + "(";
    for (size_t i = 0; i < call->args.size(); ++i) text += (i ? ", " : "") + Str(call->args[i]);
    return text + ")";
  }
  if (const auto* cast = e.as<CastNode>()) {
    return "cast(" + PrimTypeName(cast->type) + ", " + Str(cast->value) + ")";
  }
  if (const auto* n = e.as<NotNode>()) return "not(" + Str(n->a) + ")";
  return "?";
}

std::string Indices(const std::vector<PrimExpr>& indices) {
  std::string text;
  for (size_t i = 0; i < indices.size(); ++i) text += (i ? ", " : "") + Str(indices[i]);
  return text;
}

PrimExpr I(int64_t v) { return IntImm(v); }
PrimExpr F(double v) { return FloatImm(v); }

IRModule ModuleOf(const PrimFunc& func) { return MakeModuleFromMain(func); }

PrimFunc RunPass(const Pass& pass, const PrimFunc& func) {
  PassContext context;
  absl::StatusOr<IRModule> result = (*pass)(ModuleOf(func), context);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return func;
  return Downcast<PrimFuncNode>((*result)->Lookup("main"));
}

template <typename T>
const T* As(const Stmt& stmt) {
  const T* node = stmt.as<T>();
  EXPECT_NE(node, nullptr) << "statement is a " << ObjectKindName(stmt->kind());
  return node;
}

// ---------------------------------------------------------------------------
// Shared behaviour

TEST(LoopPassTest, GraphFunctionsAndUnchangedModulesPassThrough) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  PrimFunc kernel = MakePrimFunc(
      {a}, MakeFor(i, I(0), I(4), ForKind::kSerial, MakeBufferStore(a, F(1.0), {i})));
  kiln::Var x = kiln::MakeVar("x");
  Function graph = MakeFunction({x}, x);
  IRModule module = MakeModule({{MakeGlobalVar("main"), graph}, {MakeGlobalVar("k"), kernel}});
  const Pass passes[] = {Simplify(),      RemoveNoOp(), FlattenBuffer(), VectorizeLoop(),
                         UnrollLoop(),    StorageRewrite(), LowerIntrin()};
  for (const Pass& pass : passes) {
    EXPECT_EQ(pass->info().stage, PassStage::kLoop) << pass->info().name;
    PassContext context;
    absl::StatusOr<IRModule> result = (*pass)(module, context);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_TRUE(result->same_as(module)) << pass->info().name << " changed a module it had "
                                         << "nothing to do on";
  }

  // A pass that rewrites the kernel leaves the graph function as it was.
  Var v = MakeVar("v");
  PrimFunc vectorizable = MakePrimFunc(
      {a}, MakeFor(v, I(0), I(4), ForKind::kVectorized, MakeBufferStore(a, F(1.0), {v})));
  IRModule mixed =
      MakeModule({{MakeGlobalVar("main"), graph}, {MakeGlobalVar("k"), vectorizable}});
  PassContext context;
  absl::StatusOr<IRModule> result = (*VectorizeLoop())(mixed, context);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->same_as(mixed));
  EXPECT_TRUE((*result)->Lookup("main").same_as(graph));
  EXPECT_EQ((*result)->functions[1].first->name_hint, "k");
}

// ---------------------------------------------------------------------------
// Simplify

TEST(LoopSimplifyTest, ProvableIfIsRemovedAndIndicesSimplifiedFromLoopRanges) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {64});
  Buffer b = MakeBuffer("B", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Span store_span = MakeSpan("relu");
  Span if_span = MakeSpan("guard");
  PrimExpr flat = i * 8 + j;
  Stmt store = MakeBufferStore(a, MakeBufferLoad(b, {FloorDiv(flat, 8)}), {flat}, store_span);
  Stmt guarded = MakeIfThenElse(flat < I(64), store, nullptr, if_span);
  Stmt body = MakeFor(i, I(0), I(8), ForKind::kSerial,
                      MakeFor(j, I(0), I(8), ForKind::kSerial, guarded, MakeSpan("j")),
                      MakeSpan("i"));
  PrimFunc result = RunPass(Simplify(), MakePrimFunc({a, b}, body));
  const auto* outer = As<ForNode>(result->body);
  const auto* inner = As<ForNode>(outer->body);
  const auto* new_store = As<BufferStoreNode>(inner->body);
  ASSERT_NE(new_store, nullptr);
  EXPECT_TRUE(SpanEqual(new_store->span, store_span));
  EXPECT_EQ(Indices(new_store->indices), "((i mul 8) add j)");
  EXPECT_EQ(Str(new_store->value), "B[i]");
  EXPECT_TRUE(SpanEqual(inner->span, MakeSpan("j")));
}

TEST(LoopSimplifyTest, UndecidedIfStaysAndItsConditionHoldsInside) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {64});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  PrimExpr flat = i * 8 + j;
  Stmt inner_if = MakeIfThenElse(flat < I(60), MakeBufferStore(a, F(1.0), {flat}));
  Stmt outer_if = MakeIfThenElse(flat < I(60), inner_if, nullptr, MakeSpan("tail"));
  Stmt body = MakeFor(i, I(0), I(8), ForKind::kSerial,
                      MakeFor(j, I(0), I(8), ForKind::kSerial, outer_if));
  PrimFunc result = RunPass(Simplify(), MakePrimFunc({a}, body));
  const auto* inner = As<ForNode>(As<ForNode>(result->body)->body);
  const auto* kept = As<IfThenElseNode>(inner->body);
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(SpanEqual(kept->span, MakeSpan("tail")));
  // The repeated test inside is known true there.
  EXPECT_NE(kept->then_case.as<BufferStoreNode>(), nullptr);
}

TEST(LoopSimplifyTest, IfWithFalseConditionTakesTheElseBranch) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  Span else_span = MakeSpan("else_store");
  Stmt choice = MakeIfThenElse(i >= I(8), MakeBufferStore(a, F(1.0), {i}),
                               MakeBufferStore(a, F(2.0), {i}, else_span));
  PrimFunc result =
      RunPass(Simplify(), MakePrimFunc({a}, MakeFor(i, I(0), I(8), ForKind::kSerial, choice)));
  const auto* store = As<BufferStoreNode>(As<ForNode>(result->body)->body);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Str(store->value), "2.0");
  EXPECT_TRUE(SpanEqual(store->span, else_span));
}

TEST(LoopSimplifyTest, LoopsOfExtentOneAndZero) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var k = MakeVar("k");
  Var z = MakeVar("z");
  Span store_span = MakeSpan("store");
  Span empty_span = MakeSpan("empty_loop");
  Stmt once = MakeFor(k, I(3), I(1), ForKind::kSerial,
                      MakeBufferStore(a, F(1.0), {k + 1}, store_span), MakeSpan("once"));
  Stmt never = MakeFor(z, I(0), I(0), ForKind::kSerial, MakeBufferStore(a, F(0.0), {z}),
                       empty_span);
  // In a sequence the empty loop disappears; the other is its body at k = 3.
  PrimFunc result = RunPass(Simplify(), MakePrimFunc({a}, MakeSeqStmt({once, never})));
  const auto* store = As<BufferStoreNode>(result->body);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Indices(store->indices), "4");
  EXPECT_TRUE(SpanEqual(store->span, store_span));
  // As a whole body it becomes an empty sequence carrying the loop's span.
  PrimFunc empty = RunPass(Simplify(), MakePrimFunc({a}, never));
  EXPECT_TRUE(IsNoOp(empty->body));
  EXPECT_TRUE(SpanEqual(empty->body->span, empty_span));
}

// ---------------------------------------------------------------------------
// RemoveNoOp

TEST(RemoveNoOpTest, RemovesEmptyStatementsAndSelfStores) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Span real_span = MakeSpan("real");
  Stmt real = MakeBufferStore(a, F(3.0), {I(0)}, real_span);
  Stmt self_store = MakeBufferStore(a, MakeBufferLoad(a, {i}), {i});
  Stmt body = MakeSeqStmt({
      MakeEvaluate(I(0)),
      MakeFor(i, I(0), I(8), ForKind::kSerial, self_store),
      MakeFor(j, I(0), I(8), ForKind::kSerial, MakeSeqStmt({})),
      MakeIfThenElse(i < I(3), MakeSeqStmt({}), MakeEvaluate(I(1))),
      real,
  });
  PrimFunc result = RunPass(RemoveNoOp(), MakePrimFunc({a}, body));
  EXPECT_TRUE(result->body.same_as(real));
  EXPECT_TRUE(SpanEqual(result->body->span, real_span));
}

TEST(RemoveNoOpTest, IfWithOnlyAnElseBranchIsNegated) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  Span if_span = MakeSpan("if");
  Stmt store = MakeBufferStore(a, F(1.0), {i});
  Stmt branch = MakeIfThenElse(i < I(3), MakeSeqStmt({}), store, if_span);
  PrimFunc result =
      RunPass(RemoveNoOp(), MakePrimFunc({a}, MakeFor(i, I(0), I(8), ForKind::kSerial, branch)));
  const auto* kept = As<IfThenElseNode>(As<ForNode>(result->body)->body);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(Str(kept->condition), "not((i lt 3))");
  EXPECT_TRUE(kept->then_case.same_as(store));
  EXPECT_FALSE(kept->else_case.defined());
  EXPECT_TRUE(SpanEqual(kept->span, if_span));
}

TEST(RemoveNoOpTest, ABodyThatDoesNothingBecomesAnEmptySequenceWithItsSpan) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  Span loop_span = MakeSpan("loop");
  Stmt loop = MakeFor(i, I(0), I(8), ForKind::kSerial, MakeEvaluate(I(0)), loop_span);
  PrimFunc result = RunPass(RemoveNoOp(), MakePrimFunc({a}, loop));
  EXPECT_TRUE(IsNoOp(result->body));
  EXPECT_TRUE(SpanEqual(result->body->span, loop_span));
}

// ---------------------------------------------------------------------------
// FlattenBuffer

TEST(FlattenBufferTest, MultiDimensionalAccessesBecomeFlatIndices) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {4, 8});
  Buffer b = MakeBuffer("B", DataType::kFloat32, {8, 4});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Span store_span = MakeSpan("transpose");
  Stmt store = MakeBufferStore(a, MakeBufferLoad(b, {j, i}), {i, j}, store_span);
  PrimFunc func = MakePrimFunc({a, b}, MakeFor(i, I(0), I(4), ForKind::kSerial,
                                               MakeFor(j, I(0), I(8), ForKind::kSerial, store)));
  PrimFunc result = RunPass(FlattenBuffer(), func);
  const auto* flat = As<BufferStoreNode>(As<ForNode>(As<ForNode>(result->body)->body)->body);
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(Indices(flat->indices), "((i mul 8) add j)");
  EXPECT_EQ(Str(flat->value), "B[((j mul 4) add i)]");
  EXPECT_TRUE(SpanEqual(flat->span, store_span));
  // A 1-D view of the same storage.
  EXPECT_TRUE(flat->buffer->data.same_as(a->data));
  EXPECT_EQ(flat->buffer->shape, (std::vector<int64_t>{32}));
  EXPECT_EQ(flat->buffer->elem_offset, 0);
  // The signature keeps the shaped buffers.
  EXPECT_TRUE(result->param_buffer(0).same_as(a));
  EXPECT_TRUE(result->params[0].same_as(a->data));
}

TEST(FlattenBufferTest, OffsetAndStridesFoldIntoTheIndex) {
  Var storage = MakeVar("pool", kFloat32Type);
  // A 3x4 window at element 5 of rows 10 elements apart.
  Buffer window = MakeBufferView("W", storage, DataType::kFloat32, {3, 4}, 5, {10, 1});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Stmt store = MakeBufferStore(window, F(0.0), {i, j});
  PrimFunc result = RunPass(FlattenBuffer(), MakePrimFunc({}, MakeAllocate(storage, DataType::kFloat32,
                                                                       64, "global", store)));
  const auto* flat = As<BufferStoreNode>(As<AllocateNode>(result->body)->body);
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(Indices(flat->indices), "(((i mul 10) add j) add 5)");
  // Elements 0 .. 5 + 2*10 + 3: the view reaches 29 of them.
  EXPECT_EQ(flat->buffer->shape, (std::vector<int64_t>{29}));
  EXPECT_TRUE(flat->buffer->data.same_as(storage));
}

// ---------------------------------------------------------------------------
// VectorizeLoop

TEST(VectorizeLoopTest, LoopVariableBecomesARampAndScalarsBroadcast) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {32});
  Buffer b = MakeBuffer("B", DataType::kFloat32, {4});
  Buffer c = MakeBuffer("C", DataType::kFloat32, {32});
  Var i = MakeVar("i");
  Var v = MakeVar("v");
  Span store_span = MakeSpan("add");
  Stmt store = MakeBufferStore(
      c, MakeBufferLoad(a, {i * 4 + v}) + MakeBufferLoad(b, {v}) * F(2.0), {i * 4 + v},
      store_span);
  Stmt loop = MakeFor(i, I(0), I(8), ForKind::kSerial,
                      MakeFor(v, I(0), I(4), ForKind::kVectorized, store, MakeSpan("v")));
  PrimFunc result = RunPass(VectorizeLoop(), MakePrimFunc({a, b, c}, loop));
  const auto* vector_store = As<BufferStoreNode>(As<ForNode>(result->body)->body);
  ASSERT_NE(vector_store, nullptr);
  EXPECT_EQ(Indices(vector_store->indices), "ramp((i mul 4), 1, 4)");
  EXPECT_EQ(Str(vector_store->value),
            "(A[ramp((i mul 4), 1, 4)] add (B[ramp(0, 1, 4)] mul broadcast(2.0, 4)))");
  EXPECT_EQ(vector_store->value->type, (PrimType{DataType::kFloat32, 4}));
  EXPECT_TRUE(SpanEqual(vector_store->span, store_span));
}

TEST(VectorizeLoopTest, LetBoundValuesBecomeVectorVariables) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Buffer c = MakeBuffer("C", DataType::kFloat32, {8});
  Var v = MakeVar("v");
  Var t = MakeVar("t", kFloat32Type);
  Stmt body = MakeLetStmt(t, MakeBufferLoad(a, {v}) * F(2.0), MakeBufferStore(c, t + t, {v}));
  PrimFunc result = RunPass(VectorizeLoop(), MakePrimFunc({a, c}, MakeFor(v, I(0), I(8),
                                                                    ForKind::kVectorized, body)));
  const auto* let = As<LetStmtNode>(result->body);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->var->type, (PrimType{DataType::kFloat32, 8}));
  const auto* store = As<BufferStoreNode>(let->body);
  ASSERT_NE(store, nullptr);
  const auto* sum = store->value.as<BinaryNode>();
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(sum->a.same_as(let->var));
}

TEST(VectorizeLoopTest, BodiesThatCannotBeVectorizedStaySerialLoops) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Buffer sum = MakeBuffer("S", DataType::kFloat32, {1});
  Var v = MakeVar("v");
  Var k = MakeVar("k");
  Span loop_span = MakeSpan("loop");
  Stmt guarded = MakeIfThenElse(v < I(6), MakeBufferStore(a, F(1.0), {v}));
  Stmt nested = MakeFor(k, I(0), I(2), ForKind::kSerial, MakeBufferStore(a, F(1.0), {v}));
  Stmt reduction = MakeBufferStore(sum, MakeBufferLoad(sum, {I(0)}) + MakeBufferLoad(a, {v}),
                                   {I(0)});
  for (const Stmt& body : {guarded, nested, reduction}) {
    Stmt loop = MakeFor(v, I(0), I(8), ForKind::kVectorized, body, loop_span);
    PrimFunc result = RunPass(VectorizeLoop(), MakePrimFunc({a, sum}, loop));
    const auto* serial = As<ForNode>(result->body);
    ASSERT_NE(serial, nullptr);
    EXPECT_EQ(serial->for_kind, ForKind::kSerial);
    EXPECT_TRUE(serial->body.same_as(body));
    EXPECT_TRUE(serial->loop_var.same_as(v));
    EXPECT_TRUE(SpanEqual(serial->span, loop_span));
  }
}

// A pooling window's bounds test on the loops outside the lanes: the branch stays, around the
// vector store. A condition that reads memory the lanes write (lane 0's store could flip it for
// the later lanes) keeps the loop serial.
TEST(VectorizeLoopTest, LaneInvariantConditionsStayBranchesAroundVectorBodies) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {8});
  Var v = MakeVar("v");
  Var k = MakeVar("k");
  Stmt window = MakeIfThenElse(k >= I(1), MakeBufferStore(a, F(1.0), {v}));
  Stmt lanes = MakeFor(v, I(0), I(8), ForKind::kVectorized, window);
  PrimFunc result =
      RunPass(VectorizeLoop(), MakePrimFunc({a}, MakeFor(k, I(0), I(3), ForKind::kSerial, lanes)));
  const auto* branch = As<IfThenElseNode>(As<ForNode>(result->body)->body);
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(branch->condition.same_as(As<IfThenElseNode>(window)->condition));
  const auto* store = As<BufferStoreNode>(branch->then_case);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Indices(store->indices), "ramp(0, 1, 8)");

  Stmt reads_written =
      MakeIfThenElse(MakeBufferLoad(a, {I(0)}) < F(0.5), MakeBufferStore(a, F(1.0), {v}));
  Stmt loop = MakeFor(v, I(0), I(8), ForKind::kVectorized, reads_written);
  PrimFunc unchanged = RunPass(VectorizeLoop(), MakePrimFunc({a}, loop));
  const auto* serial = As<ForNode>(unchanged->body);
  ASSERT_NE(serial, nullptr);
  EXPECT_EQ(serial->for_kind, ForKind::kSerial);
  EXPECT_TRUE(serial->body.same_as(reads_written));
}

// ---------------------------------------------------------------------------
// LoopPartition

// A row padded by one element on each side, read inline: out[i] = 1 <= i <= 8 ? in[i - 1] : 0
// over i in [0, 10), each value staged through a one-element scratch allocation. Partitioned
// and simplified: [0, 1) and [9, 10) keep the test, [1, 9) reads in[i - 1] without it; each
// border copy has its own loop variable and its own scratch storage; the output is unchanged.
TEST(LoopPartitionTest, PaddedBordersSplitOffAndTheMiddleLosesItsTests) {
  Buffer in = MakeBuffer("In", DataType::kFloat32, {8});
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {10});
  Var i = MakeVar("i");
  Buffer scratch = MakeBuffer("scratch", DataType::kFloat32, {1});
  PrimExpr inside = MakeBinary(BinaryOp::kAnd, i - I(1) >= I(0), i - I(1) < I(8));
  PrimExpr clamped = MakeBinary(BinaryOp::kMax, MakeBinary(BinaryOp::kMin, i - I(1), I(7)), I(0));
  Stmt body = MakeAllocate(
      scratch->data, DataType::kFloat32, 1, "global",
      MakeSeqStmt({MakeBufferStore(scratch, MakeSelect(inside, MakeBufferLoad(in, {clamped}), F(0.0)), {I(0)}),
                   MakeBufferStore(out, MakeBufferLoad(scratch, {I(0)}), {i})}));
  PrimFunc func = MakePrimFunc({in, out}, MakeFor(i, I(0), I(10), ForKind::kSerial, body));
  PrimFunc partitioned = RunPass(LoopPartition(), func);
  const auto* seq = As<SeqStmtNode>(partitioned->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 3u);
  int64_t ranges[3][2] = {{0, 1}, {1, 8}, {9, 1}};
  std::vector<const VarNode*> vars;
  std::vector<const VarNode*> storage;
  for (int k = 0; k < 3; ++k) {
    const auto* loop = As<ForNode>(seq->seq[k]);
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(Str(loop->min), std::to_string(ranges[k][0])) << k;
    EXPECT_EQ(Str(loop->extent), std::to_string(ranges[k][1])) << k;
    vars.push_back(loop->loop_var.get());
    const auto* alloc = As<AllocateNode>(loop->body);
    ASSERT_NE(alloc, nullptr);
    storage.push_back(alloc->data.get());
  }
  EXPECT_EQ(vars[1], i.get());
  EXPECT_NE(vars[0], vars[2]);
  EXPECT_NE(vars[0], i.get());
  EXPECT_NE(storage[0], storage[1]);
  EXPECT_NE(storage[1], storage[2]);
  EXPECT_NE(storage[0], storage[2]);

  // Simplified: the one-iteration borders become their bodies (i = 0: out of range, 0; i = 9:
  // the same), the middle loop reads In[i - 1] untested.
  PrimFunc result = RunPass(Simplify(), partitioned);
  const auto* middle = As<ForNode>(As<SeqStmtNode>(result->body)->seq[1]);
  ASSERT_NE(middle, nullptr);
  const auto* staged =
      As<BufferStoreNode>(As<SeqStmtNode>(As<AllocateNode>(middle->body)->body)->seq[0]);
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(Str(staged->value), "In[(i sub 1)]");

  HostTensor in_tensor = HostTensor::FromDoubles(DataType::kFloat32, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor out_tensor = HostTensor::Zeros(DataType::kFloat32, {10});
  ASSERT_TRUE(RunPrimFunc(result, {&in_tensor, &out_tensor}).ok());
  EXPECT_EQ(out_tensor.ToDoubles(), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 0}));
}

// Loops that are not serial, tests against memory, and tests that already hold everywhere
// are left alone.
TEST(LoopPartitionTest, ParallelLoopsDataTestsAndDecidedTestsStay) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {10});
  Buffer idx = MakeBuffer("Idx", DataType::kInt64, {10});
  Var i = MakeVar("i");
  Stmt padded = MakeBufferStore(a, MakeSelect(i >= I(1), F(1.0), F(0.0)), {i});
  Stmt parallel = MakeFor(i, I(0), I(10), ForKind::kParallel, padded);
  EXPECT_TRUE(RunPass(LoopPartition(), MakePrimFunc({a}, parallel))->body.same_as(parallel));
  Stmt data_test = MakeFor(i, I(0), I(10), ForKind::kSerial,
                           MakeBufferStore(a, MakeSelect(i < MakeBufferLoad(idx, {I(0)}), F(1.0), F(0.0)), {i}));
  EXPECT_TRUE(RunPass(LoopPartition(), MakePrimFunc({a, idx}, data_test))->body.same_as(data_test));
  Stmt decided = MakeFor(i, I(0), I(10), ForKind::kSerial,
                         MakeBufferStore(a, MakeSelect(i >= I(0), F(1.0), F(0.0)), {i}));
  EXPECT_TRUE(RunPass(LoopPartition(), MakePrimFunc({a}, decided))->body.same_as(decided));
}

// ---------------------------------------------------------------------------
// UnrollLoop

TEST(UnrollLoopTest, ShortUnrolledLoopsRepeatTheirBody) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {16});
  Var k = MakeVar("k");
  Span loop_span = MakeSpan("loop");
  Span store_span = MakeSpan("store");
  Stmt store = MakeBufferStore(a, MakeCast(kFloat32Type, k), {k * 2}, store_span);
  Stmt loop = MakeFor(k, I(1), I(3), ForKind::kUnrolled, store, loop_span);
  PrimFunc result = RunPass(UnrollLoop(), MakePrimFunc({a}, loop));
  const auto* seq = As<SeqStmtNode>(result->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 3u);
  EXPECT_TRUE(SpanEqual(seq->span, loop_span));
  const char* expected[] = {"(1 mul 2)", "(2 mul 2)", "(3 mul 2)"};
  for (size_t n = 0; n < 3; ++n) {
    const auto* copy = As<BufferStoreNode>(seq->seq[n]);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(Indices(copy->indices), expected[n]);
    EXPECT_TRUE(SpanEqual(copy->span, store_span));
  }
}

TEST(UnrollLoopTest, LongOrSerialLoopsStay) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {32});
  Var k = MakeVar("k");
  Stmt store = MakeBufferStore(a, F(0.0), {k});
  PrimFunc too_long =
      MakePrimFunc({a}, MakeFor(k, I(0), I(17), ForKind::kUnrolled, store));
  EXPECT_TRUE(RunPass(UnrollLoop(), too_long).same_as(too_long));
  PrimFunc serial = MakePrimFunc({a}, MakeFor(k, I(0), I(4), ForKind::kSerial, store));
  EXPECT_TRUE(RunPass(UnrollLoop(), serial).same_as(serial));

  // The limit is an option of the registered pass.
  PassRegistry registry;
  RegisterLoopPasses(registry);
  absl::StatusOr<Pass> limited = registry.Create("UnrollLoop", {{"max_extent", int64_t{2}}});
  ASSERT_TRUE(limited.ok()) << limited.status().message();
  PrimFunc three = MakePrimFunc({a}, MakeFor(k, I(0), I(3), ForKind::kUnrolled, store));
  EXPECT_TRUE(RunPass(*limited, three).same_as(three));
  EXPECT_NE(RunPass(UnrollLoop(), three)->body.as<SeqStmtNode>(), nullptr);
  EXPECT_FALSE(registry.Create("UnrollLoop", {{"max_extent", int64_t{-1}}}).ok());
}

// ---------------------------------------------------------------------------
// StorageRewrite

TEST(StorageRewriteTest, SequentialAllocationsShareOneAllocation) {
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {32});
  Buffer t1 = MakeBuffer("T1", DataType::kFloat32, {16}, "local");
  Buffer t2 = MakeBuffer("T2", DataType::kFloat32, {32}, "local");
  Span first_span = MakeSpan("first");
  Stmt use1 = MakeSeqStmt({MakeBufferStore(t1, F(1.0), {I(0)}),
                           MakeBufferStore(out, MakeBufferLoad(t1, {I(0)}), {I(0)})});
  Stmt use2 = MakeSeqStmt({MakeBufferStore(t2, F(2.0), {I(31)}),
                           MakeBufferStore(out, MakeBufferLoad(t2, {I(31)}), {I(1)})});
  Stmt body = MakeSeqStmt(
      {MakeAllocate(t1->data, DataType::kFloat32, 16, "local", use1, first_span),
       MakeAllocate(t2->data, DataType::kFloat32, 32, "local", use2, MakeSpan("second"))},
      MakeSpan("seq"));
  PrimFunc result = RunPass(StorageRewrite(), MakePrimFunc({out}, body));
  const auto* shared = As<AllocateNode>(result->body);
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(shared->data.same_as(t1->data));
  EXPECT_EQ(shared->extent, 32);  // the larger of the two
  EXPECT_EQ(shared->scope, "local");
  EXPECT_TRUE(SpanEqual(shared->span, first_span));
  const auto* seq = As<SeqStmtNode>(shared->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 4u);
  // The second temporary now views the shared storage, with its own shape.
  const auto* store2 = As<BufferStoreNode>(seq->seq[2]);
  ASSERT_NE(store2, nullptr);
  EXPECT_EQ(store2->buffer->name, "T2");
  EXPECT_TRUE(store2->buffer->data.same_as(t1->data));
  EXPECT_EQ(store2->buffer->shape, (std::vector<int64_t>{32}));
  const auto* read2 = As<BufferStoreNode>(seq->seq[3])->value.as<BufferLoadNode>();
  ASSERT_NE(read2, nullptr);
  EXPECT_TRUE(read2->buffer.same_as(store2->buffer));
  // Nothing refers to the second storage variable any more.
  bool mentions_t2 = false;
  PreOrderVisit(result->body, [&](const Object* node) {
    if (node == t2->data.get()) mentions_t2 = true;
    if (node->kind() == ObjectKind::kBufferStore) {
      mentions_t2 |= static_cast<const BufferStoreNode*>(node)->buffer->data.same_as(t2->data);
    }
  });
  EXPECT_FALSE(mentions_t2);
}

TEST(StorageRewriteTest, ChainAroundASequenceReusesByLastUse) {
  // a is written by item 0 and read by item 1; b lives in items 1-2; c in
  // items 2-3. c can take a's storage (a is dead after item 1), not b's.
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {4});
  Buffer a = MakeBuffer("a", DataType::kFloat32, {4});
  Buffer b = MakeBuffer("b", DataType::kFloat32, {4});
  Buffer c = MakeBuffer("c", DataType::kFloat32, {8});
  auto copy = [](const Buffer& to, const Buffer& from) {
    return MakeBufferStore(to, MakeBufferLoad(from, {I(0)}), {I(0)});
  };
  Stmt seq = MakeSeqStmt({MakeBufferStore(a, F(1.0), {I(0)}), copy(b, a), copy(c, b),
                          copy(out, c)});
  Stmt body = MakeAllocate(a->data, DataType::kFloat32, 4, "global",
                           MakeAllocate(b->data, DataType::kFloat32, 4, "global",
                                        MakeAllocate(c->data, DataType::kFloat32, 8, "global",
                                                     seq, MakeSpan("c")),
                                        MakeSpan("b")),
                           MakeSpan("a"));
  PrimFunc result = RunPass(StorageRewrite(), MakePrimFunc({out}, body));
  const auto* first = As<AllocateNode>(result->body);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->data.same_as(a->data));
  EXPECT_EQ(first->extent, 8);
  const auto* second = As<AllocateNode>(first->body);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->data.same_as(b->data));
  EXPECT_EQ(second->extent, 4);
  const auto* items = As<SeqStmtNode>(second->body);
  ASSERT_NE(items, nullptr);
  const auto* write_c = As<BufferStoreNode>(items->seq[2]);
  EXPECT_EQ(write_c->buffer->name, "c");
  EXPECT_TRUE(write_c->buffer->data.same_as(a->data));
}

TEST(StorageRewriteTest, OverlappingOrDifferentlyTypedAllocationsAreKept) {
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {4});
  Buffer x = MakeBuffer("x", DataType::kFloat32, {4});
  Buffer y = MakeBuffer("y", DataType::kFloat32, {4});
  Buffer n = MakeBuffer("n", DataType::kInt32, {4});
  // x and y are both live in item 1.
  Stmt overlapping = MakeAllocate(
      x->data, DataType::kFloat32, 4, "global",
      MakeAllocate(y->data, DataType::kFloat32, 4, "global",
                   MakeSeqStmt({MakeBufferStore(x, F(1.0), {I(0)}),
                                MakeBufferStore(y, MakeBufferLoad(x, {I(0)}), {I(0)}),
                                MakeBufferStore(out, MakeBufferLoad(y, {I(0)}), {I(0)})})));
  PrimFunc first = MakePrimFunc({out}, overlapping);
  EXPECT_TRUE(RunPass(StorageRewrite(), first).same_as(first));
  Stmt typed = MakeSeqStmt(
      {MakeAllocate(x->data, DataType::kFloat32, 4, "global", MakeBufferStore(x, F(1.0), {I(0)})),
       MakeAllocate(n->data, DataType::kInt32, 4, "global",
                    MakeBufferStore(n, IntImm(1, PrimType{DataType::kInt32, 1}), {I(0)}))});
  PrimFunc second = MakePrimFunc({out}, typed);
  EXPECT_TRUE(RunPass(StorageRewrite(), second).same_as(second));
}

// ---------------------------------------------------------------------------
// LowerIntrin

// rsqrt and pow(x, 2) expand; sigmoid and exp map to code directly (code generation divides
// by 1 + exp(-|x|)); a float16 sigmoid runs in float32.
TEST(LowerIntrinTest, RsqrtAndSquareExpandSigmoidStays) {
  Buffer a = MakeBuffer("A", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  Span span = MakeSpan("act");
  PrimExpr x = MakeBufferLoad(a, {i});
  Stmt body = MakeSeqStmt({
      MakeBufferStore(a, MakeIntrinsic(Intrinsic::kSigmoid, {x}, span), {i}),
      MakeBufferStore(a, MakeIntrinsic(Intrinsic::kRsqrt, {x}, span), {i}),
      MakeBufferStore(a, MakeIntrinsic(Intrinsic::kPow, {x, F(2.0)}, span), {i}),
      MakeBufferStore(a, MakeIntrinsic(Intrinsic::kExp, {x}, span), {i}),
  });
  PrimFunc result = RunPass(LowerIntrin(), MakePrimFunc({a}, body));
  const auto* seq = As<SeqStmtNode>(result->body);
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->seq[0].same_as(body.as<SeqStmtNode>()->seq[0]));
  EXPECT_EQ(Str(As<BufferStoreNode>(seq->seq[1])->value), "(1.0 div sqrt(A[i]))");
  EXPECT_EQ(Str(As<BufferStoreNode>(seq->seq[2])->value), "(A[i] mul A[i])");
  EXPECT_TRUE(seq->seq[3].same_as(body.as<SeqStmtNode>()->seq[3]));

  Buffer h = MakeBuffer("H", DataType::kFloat16, {4});
  Stmt half = MakeBufferStore(h, MakeIntrinsic(Intrinsic::kSigmoid, {MakeBufferLoad(h, {i})}), {i});
  PrimFunc widened = RunPass(LowerIntrin(), MakePrimFunc({h}, half));
  EXPECT_EQ(Str(As<BufferStoreNode>(widened->body)->value),
            "cast(float16, sigmoid(cast(float32, H[i])))");
}

TEST(LowerIntrinTest, HalfPrecisionLibmCallsRunInFloat32) {
  PrimType f16{DataType::kFloat16, 1};
  Buffer h = MakeBuffer("H", DataType::kFloat16, {4});
  Var i = MakeVar("i");
  Stmt store = MakeBufferStore(h, MakeIntrinsic(Intrinsic::kTanh, {MakeBufferLoad(h, {i})}), {i});
  PrimFunc result = RunPass(LowerIntrin(), MakePrimFunc({h}, store));
  PrimExpr value = As<BufferStoreNode>(result->body)->value;
  EXPECT_EQ(Str(value), "cast(float16, tanh(cast(float32, H[i])))");
  EXPECT_EQ(value->type, f16);
}

// ---------------------------------------------------------------------------
// Registration and the default pipeline

TEST(LoopPassRegistryTest, EveryLoopPassIsRegisteredWithStageLoop) {
  PassRegistry registry;
  RegisterLoopPasses(registry);
  const char* names[] = {"Simplify",   "RemoveNoOp",     "FlattenBuffer", "LoopPartition",
                         "VectorizeLoop", "UnrollLoop", "StorageRewrite", "LowerIntrin"};
  for (const char* name : names) {
    const PassRegistration* entry = registry.Find(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->info.stage, PassStage::kLoop) << name;
    EXPECT_FALSE(entry->summary.empty());
  }
  EXPECT_EQ(registry.List().size(), 8u);
}

TEST(LoopPassRegistryTest, DefaultPipelineLowersAVectorizedElementwiseKernel) {
  PassRegistry registry;
  RegisterLoopPasses(registry);
  absl::StatusOr<Pass> pipeline = ParsePipeline(DefaultLoopPipeline(), registry);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();

  // out[i, v] = sigmoid(in[i, v]) over a 2x4 tensor, inner axis vectorized.
  Buffer in = MakeBuffer("In", DataType::kFloat32, {2, 4});
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {2, 4});
  Var i = MakeVar("i");
  Var v = MakeVar("v");
  Span span = MakeSpan("sigmoid");
  Stmt store = MakeBufferStore(
      out, MakeIntrinsic(Intrinsic::kSigmoid, {MakeBufferLoad(in, {i, v})}, span), {i, v}, span);
  Stmt loop = MakeFor(i, I(0), I(2), ForKind::kSerial,
                      MakeFor(v, I(0), I(4), ForKind::kVectorized, store, span), span);
  PassContext context;
  context.set_pass_registry(&registry);
  absl::StatusOr<IRModule> result = (**pipeline)(ModuleOf(MakePrimFunc({in, out}, loop)), context);
  ASSERT_TRUE(result.ok()) << result.status().message();
  PrimFunc lowered = Downcast<PrimFuncNode>((*result)->Lookup("main"));
  const auto* outer = As<ForNode>(lowered->body);
  ASSERT_NE(outer, nullptr);
  const auto* vector_store = As<BufferStoreNode>(outer->body);
  ASSERT_NE(vector_store, nullptr);
  EXPECT_EQ(Indices(vector_store->indices), "ramp((i mul 4), 1, 4)");
  EXPECT_EQ(vector_store->buffer->shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(Str(vector_store->value), "sigmoid(In[ramp((i mul 4), 1, 4)])");
  EXPECT_TRUE(SpanEqual(vector_store->span, span));
}

}  // namespace
}  // namespace kiln::loop::transform
