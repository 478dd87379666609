// The loop dialect printed as docs/loop-script-format.md describes it. Every expected string was
// written by hand from that document; the IR is built node by node here.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "engine/ir/module.h"
#include "engine/loop/buffer.h"
#include "engine/loop/expr.h"
#include "engine/loop/prim_func.h"
#include "engine/loop/stmt.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "tests/unit/printer/test_modules.h"

namespace kiln {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

PrintOptions Script(bool show_spans = true) {
  PrintOptions options;
  options.format = PrintOptions::Format::kScript;
  options.show_spans = show_spans;
  return options;
}

loop::PrimExpr F32Const(double value) { return loop::FloatImm(value); }

// C[i, j] = A[i, j] + B[i, j] over a 4x8 grid, the outer loop parallel.
loop::PrimFunc VectorAdd() {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {4, 8});
  loop::Buffer b = loop::MakeBuffer("B", kF32, {4, 8});
  loop::Buffer c = loop::MakeBuffer("C", kF32, {4, 8});
  loop::Var i = loop::MakeVar("i");
  loop::Var j = loop::MakeVar("j");
  loop::Stmt store =
      loop::MakeBufferStore(c, loop::MakeBufferLoad(a, {i, j}) + loop::MakeBufferLoad(b, {i, j}),
                            {i, j}, MakeSpan("add1"));
  loop::Stmt inner =
      loop::MakeFor(j, loop::IntImm(0), loop::IntImm(8), loop::ForKind::kSerial, store);
  loop::Stmt outer =
      loop::MakeFor(i, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kParallel, inner,
                    MakeRef<SequentialSpanNode>(std::vector<Span>{MakeSpan("add1")}));
  return loop::MakePrimFunc({a, b, c}, outer);
}

TEST(LoopPrinterTest, VectorAddWithParallelLoop) {
  EXPECT_EQ(PrintNode(VectorAdd(), Script()),
            "@T.prim_func\n"
            "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\"), "
            "C: T.Buffer((4, 8), \"float32\")):\n"
            "    for i in T.parallel(4):  # si=[add1]\n"
            "        for j in range(8):\n"
            "            C[i, j] = A[i, j] + B[i, j]  # si=add1\n");
}

TEST(LoopPrinterTest, HideSpansDropsTheComments) {
  EXPECT_EQ(PrintNode(VectorAdd(), Script(/*show_spans=*/false)),
            "@T.prim_func\n"
            "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4, 8), \"float32\"), "
            "C: T.Buffer((4, 8), \"float32\")):\n"
            "    for i in T.parallel(4):\n"
            "        for j in range(8):\n"
            "            C[i, j] = A[i, j] + B[i, j]\n");
}

TEST(LoopPrinterTest, LoopNodesPrintAsScriptInEitherFormat) {
  // The loop dialect has no Relay form: the default (Relay) options print the script too.
  EXPECT_EQ(PrintNode(VectorAdd()), PrintNode(VectorAdd(), Script()));
}

TEST(LoopPrinterTest, StandaloneFunctionTakesItsGlobalSymbol) {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {2});
  loop::PrimFunc func =
      loop::MakePrimFunc({a}, loop::MakeBufferStore(a, F32Const(1), {loop::IntImm(0)}),
                         MakeAttrs({{loop::kAttrGlobalSymbol, "fused_fill"}}));
  EXPECT_EQ(PrintNode(func),
            "@T.prim_func\n"
            "def fused_fill(A: T.Buffer((2,), \"float32\")):\n"
            "    T.func_attr({\"global_symbol\": \"fused_fill\"})\n"
            "    A[0] = T.float32(1.0)\n");
}

// B[i] = sum over j of |A[i, j]|, accumulated in a local allocation.
TEST(LoopPrinterTest, ReductionWithAllocateAndIfThenElse) {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {4, 8});
  loop::Buffer b = loop::MakeBuffer("B", kF32, {4});
  loop::Buffer acc = loop::MakeBuffer("acc", kF32, {1}, "local");
  loop::Var i = loop::MakeVar("i");
  loop::Var j = loop::MakeVar("j");
  loop::PrimExpr zero = loop::IntImm(0);
  loop::PrimExpr a_ij = loop::MakeBufferLoad(a, {i, j});
  loop::PrimExpr acc0 = loop::MakeBufferLoad(acc, {zero});
  loop::Stmt accumulate =
      loop::MakeIfThenElse(a_ij > F32Const(0), loop::MakeBufferStore(acc, acc0 + a_ij, {zero}),
                           loop::MakeBufferStore(acc, acc0 - a_ij, {zero}), MakeSpan("abs1"));
  loop::Stmt body = loop::MakeSeqStmt({
      loop::MakeBufferStore(acc, F32Const(0), {zero}),
      loop::MakeFor(j, zero, loop::IntImm(8), loop::ForKind::kSerial, accumulate),
      loop::MakeBufferStore(b, acc0, {i}, MakeSpan("sum1")),
  });
  loop::Stmt alloc = loop::MakeAllocate(acc->data, kF32, 1, "local", body, MakeSpan("sum1"));
  loop::PrimFunc func = loop::MakePrimFunc(
      {a, b}, loop::MakeFor(i, zero, loop::IntImm(4), loop::ForKind::kSerial, alloc));
  EXPECT_EQ(PrintNode(func),
            "@T.prim_func\n"
            "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
            "    for i in range(4):\n"
            "        acc = T.allocate([1], \"float32\", \"local\")  # si=sum1\n"
            "        acc[0] = T.float32(0.0)\n"
            "        for j in range(8):\n"
            "            if A[i, j] > T.float32(0.0):  # si=abs1\n"
            "                acc[0] = acc[0] + A[i, j]\n"
            "            else:\n"
            "                acc[0] = acc[0] - A[i, j]\n"
            "        B[i] = acc[0]  # si=sum1\n");
}

TEST(LoopPrinterTest, VectorizedLoopsRampsAndBroadcasts) {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {16});
  loop::Buffer b = loop::MakeBuffer("B", kF32, {16});
  loop::Var i = loop::MakeVar("i");
  loop::Var v = loop::MakeVar("v");
  loop::Var u = loop::MakeVar("u");
  loop::Var n = loop::MakeVar("n");
  loop::Var w = loop::MakeVar("w");
  loop::PrimExpr lanes = loop::MakeRamp(i * 4, loop::IntImm(1), 4);
  loop::Stmt vector_store = loop::MakeBufferStore(
      b, loop::MakeBufferLoad(a, {lanes}) * loop::MakeBroadcast(F32Const(2), 4), {lanes});
  loop::Stmt scalar_exp = loop::MakeBufferStore(
      b, loop::MakeIntrinsic(loop::Intrinsic::kExp, {loop::MakeBufferLoad(a, {v})}), {v});
  loop::Stmt body = loop::MakeSeqStmt({
      loop::MakeFor(i, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial, vector_store),
      loop::MakeFor(v, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kVectorized, scalar_exp),
      loop::MakeFor(u, loop::IntImm(2), loop::IntImm(4), loop::ForKind::kUnrolled,
                    loop::MakeBufferStore(b, F32Const(0), {u})),
      loop::MakeLetStmt(n, loop::IntImm(12),
                        loop::MakeFor(w, n, loop::IntImm(4), loop::ForKind::kSerial,
                                      loop::MakeBufferStore(b, F32Const(0.5), {w}))),
  });
  EXPECT_EQ(PrintNode(loop::MakePrimFunc({a, b}, body)),
            "@T.prim_func\n"
            "def main(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
            "    for i in range(4):\n"
            "        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * "
            "T.Broadcast(T.float32(2.0), 4)\n"
            "    for v in T.vectorized(4):\n"
            "        B[v] = T.exp(A[v])\n"
            "    for u in T.unroll(2, 6):\n"
            "        B[u] = T.float32(0.0)\n"
            "    n: T.int64 = 12\n"
            "    for w in range(n, n + 4):\n"
            "        B[w] = T.float32(0.5)\n");
}

// main runs two kernels on buffers that view one workspace at different offsets.
IRModule KernelModule() {
  loop::Buffer in = loop::MakeBuffer("A", kF32, {8});
  loop::Buffer out = loop::MakeBuffer("B", kF32, {8});
  loop::Var k = loop::MakeVar("i");
  loop::PrimFunc relu = loop::MakePrimFunc(
      {in, out}, loop::MakeFor(k, loop::IntImm(0), loop::IntImm(8), loop::ForKind::kSerial,
                               loop::MakeBufferStore(
                                   out, loop::Max(loop::MakeBufferLoad(in, {k}), F32Const(0)), {k},
                                   MakeSpan("relu1"))));
  GlobalVar relu_name = MakeGlobalVar("fused_relu");

  loop::Buffer x = loop::MakeBuffer("x", kF32, {8});
  loop::Buffer y = loop::MakeBuffer("y", kF32, {8});
  loop::Var workspace = loop::MakeVar("ws", loop::kFloat32Type);
  loop::Buffer t0 = loop::MakeBufferView("t0", workspace, kF32, {8});
  loop::Buffer t1 = loop::MakeBufferView("t1", workspace, kF32, {8}, /*elem_offset=*/8);
  loop::Stmt calls = loop::MakeSeqStmt({
      loop::MakeCallKernel(relu_name, {x, t0}, MakeSpan("relu1")),
      loop::MakeCallKernel(relu_name, {t0, t1}, MakeSpan("relu2")),
      loop::MakeCallKernel(relu_name, {t1, y}, MakeSpan("relu3")),
  });
  loop::PrimFunc main =
      loop::MakePrimFunc({x, y}, loop::MakeAllocate(workspace, kF32, 16, "global", calls));
  return MakeModule({{relu_name, relu}, {MakeGlobalVar("main"), main}});
}

TEST(LoopPrinterTest, KernelCallsAndBufferViewsOfOneWorkspace) {
  EXPECT_EQ(PrintModule(KernelModule(), Script()),
            "class Module:\n"
            "    @T.prim_func\n"
            "    def fused_relu(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
            "        for i in range(8):\n"
            "            B[i] = T.max(A[i], T.float32(0.0))  # si=relu1\n"
            "\n"
            "    @T.prim_func\n"
            "    def main(x: T.Buffer((8,), \"float32\"), y: T.Buffer((8,), \"float32\")):\n"
            "        ws = T.allocate([16], \"float32\", \"global\")\n"
            "        t0 = T.Buffer((8,), \"float32\", data=ws)\n"
            "        t1 = T.Buffer((8,), \"float32\", data=ws, elem_offset=8)\n"
            "        T.call_kernel(fused_relu, x, t0)  # si=relu1\n"
            "        T.call_kernel(fused_relu, t0, t1)  # si=relu2\n"
            "        T.call_kernel(fused_relu, t1, y)  # si=relu3\n");
}

TEST(LoopPrinterTest, ViewsOfParameterStorageAreDeclaredAtTheTop) {
  // A flattened view of a 2-D parameter: same storage, one dimension, its own name.
  loop::Buffer a = loop::MakeBuffer("A", kF32, {2, 3});
  loop::Buffer flat = loop::MakeBufferView("A", a->data, kF32, {6}, 0, {}, "global");
  loop::Buffer strided = loop::MakeBufferView("S", a->data, kF32, {2}, 1, {3}, "local");
  loop::Var i = loop::MakeVar("i");
  loop::Stmt body =
      loop::MakeFor(i, loop::IntImm(0), loop::IntImm(2), loop::ForKind::kSerial,
                    loop::MakeBufferStore(flat, loop::MakeBufferLoad(strided, {i}), {i * 3}));
  EXPECT_EQ(PrintNode(loop::MakePrimFunc({a}, body)),
            "@T.prim_func\n"
            "def main(A: T.Buffer((2, 3), \"float32\")):\n"
            "    A_1 = T.Buffer((6,), \"float32\", data=A.data)\n"
            "    S = T.Buffer((2,), \"float32\", data=A.data, strides=(3,), elem_offset=1, "
            "scope=\"local\")\n"
            "    for i in range(2):\n"
            "        A_1[i * 3] = S[i]\n");
}

TEST(LoopPrinterTest, NamesAreUniqueWithinAFunction) {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {4});
  loop::Buffer keyword = loop::MakeBuffer("lambda", kF32, {4});
  loop::Var first = loop::MakeVar("i");
  loop::Var second = loop::MakeVar("i");
  loop::Var prefix = loop::MakeVar("T");
  loop::Var dotted = loop::MakeVar("a.b");
  loop::Stmt body = loop::MakeSeqStmt({
      loop::MakeFor(first, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial,
                    loop::MakeBufferStore(a, F32Const(0), {first})),
      loop::MakeFor(second, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial,
                    loop::MakeBufferStore(keyword, loop::MakeBufferLoad(a, {second}), {second})),
      // The same variable object in a second loop keeps its name.
      loop::MakeFor(first, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial,
                    loop::MakeBufferStore(a, F32Const(1), {first})),
      loop::MakeFor(prefix, loop::IntImm(0), loop::IntImm(1), loop::ForKind::kSerial,
                    loop::MakeFor(dotted, loop::IntImm(0), loop::IntImm(1), loop::ForKind::kSerial,
                                  loop::MakeEvaluate(prefix + dotted))),
  });
  EXPECT_EQ(PrintNode(loop::MakePrimFunc({a, keyword}, body)),
            "@T.prim_func\n"
            "def main(A: T.Buffer((4,), \"float32\"), lambda_: T.Buffer((4,), \"float32\")):\n"
            "    for i in range(4):\n"
            "        A[i] = T.float32(0.0)\n"
            "    for i_1 in range(4):\n"
            "        lambda_[i_1] = A[i_1]\n"
            "    for i in range(4):\n"
            "        A[i] = T.float32(1.0)\n"
            "    for T_ in range(1):\n"
            "        for a_b in range(1):\n"
            "            T.evaluate(T_ + a_b)\n");
}

TEST(LoopPrinterTest, NamesRestartInEachFunctionOfAModule) {
  loop::PrimFunc first = VectorAdd();
  loop::PrimFunc second = VectorAdd();
  std::string text = PrintModule(
      MakeModule({{MakeGlobalVar("f"), first}, {MakeGlobalVar("g"), second}}), Script(false));
  // Both functions name their buffers A, B, C and their loops i, j.
  EXPECT_EQ(text.find("A_1"), std::string::npos) << text;
  EXPECT_EQ(text.find("i_1"), std::string::npos) << text;
  EXPECT_NE(text.find("def g(A: T.Buffer((4, 8), \"float32\")"), std::string::npos) << text;
}

TEST(LoopPrinterTest, EveryBinaryOperator) {
  loop::Var i = loop::MakeVar("i");
  loop::Var j = loop::MakeVar("j");
  loop::Var x = loop::MakeVar("x", loop::kFloat32Type);
  loop::Var y = loop::MakeVar("y", loop::kFloat32Type);
  loop::Var p = loop::MakeVar("p", loop::kBoolType);
  loop::Var q = loop::MakeVar("q", loop::kBoolType);
  auto text = [](const loop::PrimExpr& expr) { return PrintNode(expr); };
  using loop::BinaryOp;
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kAdd, i, j)), "i + j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kSub, i, j)), "i - j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kMul, i, j)), "i * j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kDiv, x, y)), "x / y");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kDiv, i, j)), "T.truncdiv(i, j)");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kFloorDiv, i, j)), "i // j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kFloorMod, i, j)), "i % j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kMin, i, j)), "T.min(i, j)");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kMax, x, y)), "T.max(x, y)");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kEQ, i, j)), "i == j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kNE, i, j)), "i != j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kLT, i, j)), "i < j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kLE, i, j)), "i <= j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kGT, i, j)), "i > j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kGE, i, j)), "i >= j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kAnd, p, q)), "p and q");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kOr, p, q)), "p or q");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kBitAnd, i, j)), "i & j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kBitOr, i, j)), "i | j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kBitXor, i, j)), "i ^ j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kShiftLeft, i, j)), "i << j");
  EXPECT_EQ(text(loop::MakeBinary(BinaryOp::kShiftRight, i, j)), "i >> j");
}

TEST(LoopPrinterTest, PrecedenceDecidesParentheses) {
  loop::Var i = loop::MakeVar("i");
  loop::Var j = loop::MakeVar("j");
  EXPECT_EQ(PrintNode((i + j) * 2), "(i + j) * 2");
  EXPECT_EQ(PrintNode(i + j * 2), "i + j * 2");
  EXPECT_EQ(PrintNode(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(PrintNode(loop::FloorMod(loop::FloorDiv(i, 4) + j, 3)), "(i // 4 + j) % 3");
  EXPECT_EQ(PrintNode(loop::MakeNot(i < j)), "not i < j");
  EXPECT_EQ(PrintNode(loop::MakeNot(loop::MakeVar("p", loop::kBoolType)) &&
                      loop::MakeVar("q", loop::kBoolType)),
            "not p and q");
}

TEST(LoopPrinterTest, EveryOtherExpressionKind) {
  loop::Var i = loop::MakeVar("i");
  loop::Var x = loop::MakeVar("x", loop::kFloat32Type);
  loop::Buffer a = loop::MakeBuffer("A", kF32, {4, 4});
  loop::Buffer scalar = loop::MakeBuffer("s", kF32, {});
  EXPECT_EQ(PrintNode(loop::IntImm(-3)), "-3");
  EXPECT_EQ(PrintNode(loop::IntImm(7, loop::PrimType{DataType::kInt32, 1})), "T.int32(7)");
  EXPECT_EQ(PrintNode(loop::IntImm(200, loop::PrimType{DataType::kUInt8, 1})), "T.uint8(200)");
  EXPECT_EQ(PrintNode(loop::BoolImm(true)), "True");
  EXPECT_EQ(PrintNode(loop::FloatImm(0.1)), "T.float32(0.1)");
  EXPECT_EQ(PrintNode(loop::FloatImm(0.1, loop::PrimType{DataType::kFloat64, 1})),
            "T.float64(0.1)");
  EXPECT_EQ(PrintNode(loop::FloatImm(1e20)), "T.float32(1e+20)");
  EXPECT_EQ(PrintNode(loop::FloatImm(-std::numeric_limits<double>::infinity())),
            "T.float32(\"-inf\")");
  EXPECT_EQ(PrintNode(loop::FloatImm(std::numeric_limits<double>::quiet_NaN())),
            "T.float32(\"nan\")");
  EXPECT_EQ(PrintNode(loop::MakeCast(loop::PrimType{DataType::kInt32, 1}, i)),
            "T.Cast(\"int32\", i)");
  EXPECT_EQ(PrintNode(loop::MakeCast(loop::PrimType{DataType::kFloat32, 4},
                                     loop::MakeRamp(i, loop::IntImm(2), 4))),
            "T.Cast(\"float32x4\", T.Ramp(i, 2, 4))");
  EXPECT_EQ(PrintNode(loop::MakeSelect(i < loop::IntImm(2), x, loop::FloatImm(0))),
            "T.Select(i < 2, x, T.float32(0.0))");
  EXPECT_EQ(PrintNode(loop::MakeIntrinsic(loop::Intrinsic::kFma, {x, x, x})), "T.fma(x, x, x)");
  EXPECT_EQ(PrintNode(loop::MakeIntrinsic(loop::Intrinsic::kIsNan, {x})), "T.isnan(x)");
  EXPECT_EQ(PrintNode(loop::MakeBufferLoad(a, {i, i + 1})), "A[i, i + 1]");
  EXPECT_EQ(PrintNode(loop::MakeBufferLoad(scalar, {})), "s[()]");
  EXPECT_EQ(PrintNode(loop::MakeBroadcast(x, 8)), "T.Broadcast(x, 8)");
  // Two different variables of one name in one expression.
  EXPECT_EQ(PrintNode(i + loop::MakeVar("i")), "i + i_1");
}

TEST(LoopPrinterTest, StatementOnItsOwnDeclaresWhatItUses) {
  loop::Buffer a = loop::MakeBuffer("A", kF32, {8});
  loop::Var n = loop::MakeVar("n");
  loop::Var i = loop::MakeVar("i");
  loop::Stmt loop_stmt =
      loop::MakeFor(i, loop::IntImm(0), n, loop::ForKind::kSerial,
                    loop::MakeBufferStore(a, F32Const(1), {i}), MakeSpan("fill"));
  EXPECT_EQ(PrintNode(loop_stmt),
            "n = T.int64()\n"
            "A = T.Buffer((8,), \"float32\")\n"
            "for i in range(n):  # si=fill\n"
            "    A[i] = T.float32(1.0)\n");
  EXPECT_EQ(PrintNode(loop::MakeEvaluate(loop::IntImm(0))), "T.evaluate(0)\n");
  EXPECT_EQ(PrintNode(loop::MakeSeqStmt({})), "pass\n");
  loop::Buffer view = loop::MakeBufferView("V", a->data, kF32, {4}, 4);
  EXPECT_EQ(PrintNode(view), "V = T.Buffer((4,), \"float32\", elem_offset=4)\n");
}

TEST(LoopPrinterTest, BufferUnderlines) {
  loop::PrimFunc func = VectorAdd();
  const auto* outer = func->body.as<loop::ForNode>();
  const auto* store = outer->body.as<loop::ForNode>()->body.as<loop::BufferStoreNode>();
  std::string text = PrintNodeWithUnderlines(func, {store->value}, Script(false));
  EXPECT_NE(text.find("            C[i, j] = A[i, j] + B[i, j]\n"
                      "                      ^^^^^^^^^^^^^^^^^\n"),
            std::string::npos)
      << text;
}

// A graph function and a PrimFunc in one module, printed in module order.
IRModule MixedModule() {
  Var x = MakeVar("x", testing::F32({4}));
  Function graph_main = MakeFunction({x}, testing::CallOp("nn.relu", {x}, nullptr, "relu1"));
  loop::Buffer a = loop::MakeBuffer("A", kF32, {4});
  loop::Buffer b = loop::MakeBuffer("B", kF32, {4});
  loop::Var i = loop::MakeVar("i");
  loop::PrimFunc kernel = loop::MakePrimFunc(
      {a, b},
      loop::MakeFor(i, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial,
                    loop::MakeBufferStore(b, loop::Max(loop::MakeBufferLoad(a, {i}), F32Const(0)),
                                          {i}, MakeSpan("relu1"))));
  return MakeModule({{MakeGlobalVar("main"), graph_main}, {MakeGlobalVar("fused_relu"), kernel}});
}

TEST(LoopPrinterTest, MixedModuleAsScript) {
  EXPECT_EQ(PrintModule(MixedModule(), Script()),
            "class Module:\n"
            "    def main(x: Tensor[(4,), float32]):\n"
            "        return R.nn.relu(x)  # si=relu1\n"
            "\n"
            "    @T.prim_func\n"
            "    def fused_relu(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
            "        for i in range(4):\n"
            "            B[i] = T.max(A[i], T.float32(0.0))  # si=relu1\n");
}

TEST(LoopPrinterTest, MixedModuleAsRelayText) {
  EXPECT_EQ(PrintModule(MixedModule()),
            "def @main(%x: Tensor[(4), float32]) {\n"
            "  nn.relu(%x) /* si=relu1 */\n"
            "}\n"
            "\n"
            "#[T.prim_func]\n"
            "def @fused_relu(%A: T.Buffer((4,), \"float32\"), %B: T.Buffer((4,), \"float32\")) {\n"
            "  for (%i in range(4)) {\n"
            "    %B[%i] = T.max(%A[%i], T.float32(0.0)) /* si=relu1 */;\n"
            "  }\n"
            "}\n");
}

TEST(LoopPrinterTest, MixedModuleAsJson) {
  std::string json = PrintModuleJson(MixedModule(), /*indent=*/-1);
  EXPECT_NE(json.find("{\"name\":\"fused_relu\",\"kind\":\"PrimFunc\",\"spans\":[],"
                      "\"script\":\"@T.prim_func\\ndef fused_relu(A: T.Buffer((4,), "
                      "\\\"float32\\\"), B: T.Buffer((4,), \\\"float32\\\")):\\n    for i in "
                      "range(4):\\n        B[i] = T.max(A[i], T.float32(0.0))  # si=relu1\\n\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\":\"main\",\"kind\":\"Function\""), std::string::npos) << json;
}

}  // namespace
}  // namespace kiln
