// The loop-IR interpreter: hand-built PrimFuncs run on host tensors, checked
// against hand-computed results (and, for conv2d, a direct C++ loop nest).
#include "engine/loop/interpreter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/ir/float16.h"
#include "engine/ir/module.h"
#include "engine/loop/prim_func.h"

namespace kiln::loop {
namespace {

constexpr PrimType kF32{DataType::kFloat32, 1};
constexpr PrimType kI32{DataType::kInt32, 1};

HostTensor F32(std::vector<int64_t> shape, std::vector<float> values) {
  return HostTensor::FromValues<float>(DataType::kFloat32, std::move(shape), values);
}

Stmt Loop(const Var& var, int64_t extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return MakeFor(var, IntImm(0), IntImm(extent), kind, std::move(body));
}

// out[i] = op(a[i], b[i]) over `n` elements of `type`: one function per
// binary operation under test, with inputs given as doubles.
HostTensor RunElementwise(BinaryOp op, DataType dtype, const std::vector<double>& a,
                          const std::vector<double>& b, absl::Status* status = nullptr) {
  int64_t n = static_cast<int64_t>(a.size());
  Buffer A = MakeBuffer("A", dtype, {n});
  Buffer B = MakeBuffer("B", dtype, {n});
  DataType out_dtype = IsComparison(op) ? DataType::kBool : dtype;
  Buffer C = MakeBuffer("C", out_dtype, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, n,
                   MakeBufferStore(C, MakeBinary(op, MakeBufferLoad(A, {i}),
                                                 MakeBufferLoad(B, {i})),
                                   {i}));
  HostTensor ta = HostTensor::FromDoubles(dtype, {n}, a);
  HostTensor tb = HostTensor::FromDoubles(dtype, {n}, b);
  HostTensor tc = HostTensor::Zeros(out_dtype, {n});
  absl::Status s = RunPrimFunc(MakePrimFunc({A, B, C}, body), {&ta, &tb, &tc});
  if (status != nullptr) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
  return tc;
}

// out[i] = cast(in[i]) from `from` to `to`.
std::vector<double> RunCast(DataType from, DataType to, const std::vector<double>& values) {
  int64_t n = static_cast<int64_t>(values.size());
  Buffer A = MakeBuffer("A", from, {n});
  Buffer B = MakeBuffer("B", to, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, n, MakeBufferStore(B, MakeCast(PrimType{to, 1}, MakeBufferLoad(A, {i})),
                                         {i}));
  HostTensor ta = HostTensor::FromDoubles(from, {n}, values);
  HostTensor tb = HostTensor::Zeros(to, {n});
  absl::Status s = RunPrimFunc(MakePrimFunc({A, B}, body), {&ta, &tb});
  EXPECT_TRUE(s.ok()) << s;
  return tb.ToDoubles();
}

TEST(InterpreterTest, ElementwiseAddBroadcastsARowOverAMatrix) {
  Buffer A = MakeBuffer("A", DataType::kFloat32, {2, 3});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {3});
  Buffer C = MakeBuffer("C", DataType::kFloat32, {2, 3});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Loop(i, 2, Loop(j, 3, MakeBufferStore(C, MakeBufferLoad(A, {i, j}) +
                                                           MakeBufferLoad(B, {j}),
                                                    {i, j})));
  HostTensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = F32({3}, {10, 20, 30});
  HostTensor c = HostTensor::Zeros(DataType::kFloat32, {2, 3});
  ASSERT_TRUE(RunPrimFunc(MakePrimFunc({A, B, C}, body), {&a, &b, &c}).ok());
  EXPECT_EQ(c.Values<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(InterpreterTest, MatmulAccumulatesInAZeroFilledAllocation) {
  // C[i, j] = sum_k A[i, k] * B[k, j]; the accumulator is allocated per (i, j)
  // and never initialized: Allocate must hand out zeroed memory every time.
  Buffer A = MakeBuffer("A", DataType::kFloat32, {2, 3});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {3, 2});
  Buffer C = MakeBuffer("C", DataType::kFloat32, {2, 2});
  Buffer acc = MakeBuffer("acc", DataType::kFloat32, {1}, "local");
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Stmt reduce = Loop(k, 3, MakeBufferStore(acc, MakeBufferLoad(acc, {IntImm(0)}) +
                                                    MakeBufferLoad(A, {i, k}) *
                                                        MakeBufferLoad(B, {k, j}),
                                           {IntImm(0)}));
  Stmt write = MakeBufferStore(C, MakeBufferLoad(acc, {IntImm(0)}), {i, j});
  Stmt body = Loop(i, 2, Loop(j, 2, MakeAllocate(acc->data, DataType::kFloat32, 1, "local",
                                                 MakeSeqStmt({reduce, write}))));
  HostTensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = F32({3, 2}, {7, 8, 9, 10, 11, 12});
  HostTensor c = HostTensor::Zeros(DataType::kFloat32, {2, 2});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B, C}, body), {&a, &b, &c});
  ASSERT_TRUE(status.ok()) << status;
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
  EXPECT_EQ(c.Values<float>(), (std::vector<float>{58, 64, 139, 154}));
}

TEST(InterpreterTest, VectorizedLoopWithRampAndBroadcast) {
  // for i (vectorized): C[ramp(4i, 1, 4)] = A[ramp(4i, 1, 4)] * 2 + B[ramp(i, 2, 4)]
  Buffer A = MakeBuffer("A", DataType::kFloat32, {8});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {8});
  Buffer C = MakeBuffer("C", DataType::kFloat32, {8});
  Var i = MakeVar("i");
  PrimExpr dense = MakeRamp(i * 4, IntImm(1), 4);
  PrimExpr strided = MakeRamp(i, IntImm(2), 4);
  PrimExpr value = MakeBufferLoad(A, {dense}) * MakeBroadcast(FloatImm(2.0), 4) +
                   MakeBufferLoad(B, {strided});
  ASSERT_EQ(value->type.lanes, 4);
  Stmt body = Loop(i, 2, MakeBufferStore(C, value, {dense}), ForKind::kVectorized);
  HostTensor a = F32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor b = F32({8}, {0, 10, 20, 30, 40, 50, 60, 70});
  HostTensor c = HostTensor::Zeros(DataType::kFloat32, {8});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B, C}, body), {&a, &b, &c});
  ASSERT_TRUE(status.ok()) << status;
  // i = 0: B at 0, 2, 4, 6 = 0, 20, 40, 60; i = 1: B at 1, 3, 5, 7 = 10, 30, 50, 70.
  EXPECT_EQ(c.Values<float>(), (std::vector<float>{2, 24, 46, 68, 20, 42, 64, 86}));
}

TEST(InterpreterTest, VectorStoreReadsEveryLaneBeforeWriting) {
  // A[ramp(1, 1, 4)] = A[ramp(0, 1, 4)] shifts by one element; lane-by-lane
  // load/store would smear A[0] over the whole range.
  Buffer A = MakeBuffer("A", DataType::kInt32, {5});
  Stmt body = MakeBufferStore(A, MakeBufferLoad(A, {MakeRamp(IntImm(0), IntImm(1), 4)}),
                              {MakeRamp(IntImm(1), IntImm(1), 4)});
  HostTensor a = HostTensor::FromValues<int32_t>(DataType::kInt32, {5}, {1, 2, 3, 4, 5});
  ASSERT_TRUE(RunPrimFunc(MakePrimFunc({A}, body), {&a}).ok());
  EXPECT_EQ(a.Values<int32_t>(), (std::vector<int32_t>{1, 1, 2, 3, 4}));
}

TEST(InterpreterTest, VectorLetBindsEveryLane) {
  // let v = A[ramp(0, 2, 3)] * 10 in B[ramp(0, 1, 3)] = v + ramp(1, 1, 3)
  Buffer A = MakeBuffer("A", DataType::kInt64, {6});
  Buffer B = MakeBuffer("B", DataType::kInt64, {3});
  Var v = MakeVar("v", PrimType{DataType::kInt64, 3});
  Stmt body = MakeLetStmt(
      v, MakeBufferLoad(A, {MakeRamp(IntImm(0), IntImm(2), 3)}) * IntImm(10),
      MakeBufferStore(B, v + MakeRamp(IntImm(1), IntImm(1), 3), {MakeRamp(IntImm(0), IntImm(1), 3)}));
  HostTensor a = HostTensor::FromValues<int64_t>(DataType::kInt64, {6}, {1, 2, 3, 4, 5, 6});
  HostTensor b = HostTensor::Zeros(DataType::kInt64, {3});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B}, body), {&a, &b});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(b.Values<int64_t>(), (std::vector<int64_t>{11, 32, 53}));
}

TEST(InterpreterTest, Int8AndUInt8ArithmeticWraps) {
  HostTensor sum = RunElementwise(BinaryOp::kAdd, DataType::kInt8, {100, 127, -128}, {100, 1, -1});
  EXPECT_EQ(sum.Values<int8_t>(), (std::vector<int8_t>{-56, -128, 127}));
  HostTensor product = RunElementwise(BinaryOp::kMul, DataType::kInt8, {-128, 16}, {-1, 16});
  EXPECT_EQ(product.Values<int8_t>(), (std::vector<int8_t>{-128, 0}));
  HostTensor quotient = RunElementwise(BinaryOp::kDiv, DataType::kInt8, {-128}, {-1});
  EXPECT_EQ(quotient.Values<int8_t>(), (std::vector<int8_t>{-128}));
  HostTensor difference = RunElementwise(BinaryOp::kSub, DataType::kUInt8, {0, 5}, {1, 10});
  EXPECT_EQ(difference.Values<uint8_t>(), (std::vector<uint8_t>{255, 251}));
  // Unsigned comparison: 200 > 100 although 200 is negative as int8.
  HostTensor greater = RunElementwise(BinaryOp::kGT, DataType::kUInt8, {200}, {100});
  EXPECT_EQ(greater.Values<uint8_t>(), (std::vector<uint8_t>{1}));
  // 2^63 is the larger uint64 although its bits are negative as int64.
  HostTensor max64 = RunElementwise(BinaryOp::kMax, DataType::kUInt64, {std::ldexp(1.0, 63)}, {1});
  EXPECT_EQ(max64.Values<uint64_t>(), (std::vector<uint64_t>{uint64_t{1} << 63}));
}

TEST(InterpreterTest, FloorDivAndFloorModRoundDownDivTruncates) {
  std::vector<double> a = {7, -7, 7, -7, 6};
  std::vector<double> b = {2, 2, -2, -2, -3};
  EXPECT_EQ(RunElementwise(BinaryOp::kDiv, DataType::kInt32, a, b).Values<int32_t>(),
            (std::vector<int32_t>{3, -3, -3, 3, -2}));
  EXPECT_EQ(RunElementwise(BinaryOp::kFloorDiv, DataType::kInt32, a, b).Values<int32_t>(),
            (std::vector<int32_t>{3, -4, -4, 3, -2}));
  EXPECT_EQ(RunElementwise(BinaryOp::kFloorMod, DataType::kInt32, a, b).Values<int32_t>(),
            (std::vector<int32_t>{1, 1, -1, -1, 0}));
  // On floats floordiv/floormod also round toward negative infinity.
  EXPECT_EQ(RunElementwise(BinaryOp::kFloorMod, DataType::kFloat32, {-7.5}, {2}).ToDoubles(),
            (std::vector<double>{0.5}));
}

TEST(InterpreterTest, IntegerDivisionByZeroIsAnErrorNamingTheExpression) {
  absl::Status status;
  RunElementwise(BinaryOp::kFloorMod, DataType::kInt32, {1, 2}, {3, 0}, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("division by zero"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("floormod(A[i], B[i])"), absl::string_view::npos) << status;
  // Float division by zero is IEEE: infinity, not an error.
  HostTensor inf = RunElementwise(BinaryOp::kDiv, DataType::kFloat32, {1}, {0});
  EXPECT_TRUE(std::isinf(inf.Values<float>()[0]));
}

TEST(InterpreterTest, Float32RoundsAfterEveryOperation) {
  HostTensor f32 = RunElementwise(BinaryOp::kAdd, DataType::kFloat32, {16777216}, {1});
  EXPECT_EQ(f32.Values<float>()[0], 16777216.0f);
  HostTensor f64 = RunElementwise(BinaryOp::kAdd, DataType::kFloat64, {16777216}, {1});
  EXPECT_EQ(f64.Values<double>()[0], 16777217.0);
  // float16 has 11 significant bits, bfloat16 8: the +1 is lost (ties to even).
  HostTensor f16 = RunElementwise(BinaryOp::kAdd, DataType::kFloat16, {2048}, {1});
  EXPECT_EQ(f16.ToDoubles(), (std::vector<double>{2048}));
  HostTensor bf16 = RunElementwise(BinaryOp::kAdd, DataType::kBFloat16, {256, 256}, {1, 3});
  EXPECT_EQ(bf16.ToDoubles(), (std::vector<double>{256, 260}));
}

TEST(InterpreterTest, FloatsRoundIntermediateResultsNotJustStores) {
  // C = (A + B) - A: in the narrow format the 1 is lost in the sum; computing
  // in a wider type and rounding only at the store would give 1.
  struct Case {
    DataType dtype;
    double big;
    double expected;
  };
  for (Case c : {Case{DataType::kFloat32, 16777216, 0}, Case{DataType::kFloat16, 2048, 0},
                 Case{DataType::kBFloat16, 256, 0}, Case{DataType::kFloat64, 16777216, 1}}) {
    Buffer A = MakeBuffer("A", c.dtype, {1});
    Buffer B = MakeBuffer("B", c.dtype, {1});
    Buffer C = MakeBuffer("C", c.dtype, {1});
    PrimExpr a = MakeBufferLoad(A, {IntImm(0)});
    Stmt body = MakeBufferStore(C, (a + MakeBufferLoad(B, {IntImm(0)})) - a, {IntImm(0)});
    HostTensor ta = HostTensor::FromDoubles(c.dtype, {1}, {c.big});
    HostTensor tb = HostTensor::FromDoubles(c.dtype, {1}, {1});
    HostTensor tc = HostTensor::Zeros(c.dtype, {1});
    ASSERT_TRUE(RunPrimFunc(MakePrimFunc({A, B, C}, body), {&ta, &tb, &tc}).ok());
    EXPECT_EQ(tc.ToDoubles()[0], c.expected) << DataTypeName(c.dtype);
  }
}

TEST(InterpreterTest, EveryDataTypeLoadsComputesAndStores) {
  // B[i] = A[i] + 0 and C[i] = A[i] < 5 for every dtype.
  for (DataType dtype : kAllDataTypes) {
    Buffer A = MakeBuffer("A", dtype, {4});
    Buffer B = MakeBuffer("B", dtype, {4});
    Buffer C = MakeBuffer("C", DataType::kBool, {4});
    Var i = MakeVar("i");
    PrimExpr a = MakeBufferLoad(A, {i});
    Stmt body = Loop(i, 4, MakeSeqStmt({
                               MakeBufferStore(B, a + MakeConst(PrimType{dtype, 1}, 0), {i}),
                               MakeBufferStore(C, a < MakeConst(PrimType{dtype, 1}, 5), {i}),
                           }));
    HostTensor ta = HostTensor::FromDoubles(dtype, {4}, {0, 1, 5, 100});
    HostTensor tb = HostTensor::Zeros(dtype, {4});
    HostTensor tc = HostTensor::Zeros(DataType::kBool, {4});
    absl::Status status = RunPrimFunc(MakePrimFunc({A, B, C}, body), {&ta, &tb, &tc});
    ASSERT_TRUE(status.ok()) << DataTypeName(dtype) << ": " << status;
    if (dtype == DataType::kBool) {
      // Nonzero values are true; true < true is false (the 5 is true too).
      EXPECT_EQ(tb.ToDoubles(), (std::vector<double>{0, 1, 1, 1}));
      EXPECT_EQ(tc.Values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0}));
    } else {
      EXPECT_EQ(tb.ToDoubles(), (std::vector<double>{0, 1, 5, 100})) << DataTypeName(dtype);
      EXPECT_EQ(tc.Values<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0})) << DataTypeName(dtype);
    }
  }
}

TEST(InterpreterTest, ParallelAndUnrolledLoopsRunSeriallyInOrder) {
  // A[i + 1] = A[i] + 1 carries a dependence: serial order gives 1, 2, 3, ...
  for (ForKind kind : {ForKind::kParallel, ForKind::kUnrolled, ForKind::kVectorized}) {
    Buffer A = MakeBuffer("A", DataType::kInt32, {5});
    Var i = MakeVar("i");
    Stmt body = MakeFor(i, IntImm(0), IntImm(4), kind,
                        MakeBufferStore(A, MakeBufferLoad(A, {i}) + IntImm(1, kI32), {i + 1}));
    HostTensor a = HostTensor::Zeros(DataType::kInt32, {5});
    ASSERT_TRUE(RunPrimFunc(MakePrimFunc({A}, body), {&a}).ok());
    EXPECT_EQ(a.Values<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4})) << ForKindName(kind);
  }
}

TEST(InterpreterTest, IntegerIntrinsicsAreExact) {
  Buffer A = MakeBuffer("A", DataType::kInt32, {4});
  Buffer B = MakeBuffer("B", DataType::kInt32, {4});
  Buffer P = MakeBuffer("P", DataType::kInt32, {4});
  Buffer M = MakeBuffer("M", DataType::kInt32, {4});
  Var i = MakeVar("i");
  PrimExpr a = MakeBufferLoad(A, {i}), b = MakeBufferLoad(B, {i});
  Stmt body = Loop(i, 4, MakeSeqStmt({
                             MakeBufferStore(P, MakeIntrinsic(Intrinsic::kPow, {a, b}), {i}),
                             MakeBufferStore(M, MakeIntrinsic(Intrinsic::kFmod, {a, b}), {i}),
                         }));
  HostTensor ta = HostTensor::FromValues<int32_t>(DataType::kInt32, {4}, {3, 2, -1, -7});
  HostTensor tb = HostTensor::FromValues<int32_t>(DataType::kInt32, {4}, {4, -1, -3, 2});
  HostTensor tp = HostTensor::Zeros(DataType::kInt32, {4});
  HostTensor tm = HostTensor::Zeros(DataType::kInt32, {4});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B, P, M}, body), {&ta, &tb, &tp, &tm});
  ASSERT_TRUE(status.ok()) << status;
  // 3^4, 2^-1 (0 in integers), (-1)^-3, and (-7)^2.
  EXPECT_EQ(tp.Values<int32_t>(), (std::vector<int32_t>{81, 0, -1, 49}));
  // fmod truncates: the result has the dividend's sign.
  EXPECT_EQ(tm.Values<int32_t>(), (std::vector<int32_t>{3, 0, -1, -1}));

  Buffer C = MakeBuffer("C", DataType::kInt8, {2});
  Stmt abs = Loop(i, 2, MakeBufferStore(C, MakeIntrinsic(Intrinsic::kAbs, {MakeBufferLoad(C, {i})}),
                                        {i}));
  HostTensor tc = HostTensor::FromValues<int8_t>(DataType::kInt8, {2}, {-5, -128});
  ASSERT_TRUE(RunPrimFunc(MakePrimFunc({C}, abs), {&tc}).ok());
  EXPECT_EQ(tc.Values<int8_t>(), (std::vector<int8_t>{5, -128}));
}

TEST(InterpreterTest, EvaluateEvaluatesItsExpression) {
  // Evaluate has no effect but its errors: the division by zero is reported.
  Buffer A = MakeBuffer("A", DataType::kInt64, {1});
  Stmt body = MakeEvaluate(FloorDiv(MakeBufferLoad(A, {IntImm(0)}), IntImm(0)));
  HostTensor a = HostTensor::Zeros(DataType::kInt64, {1});
  EXPECT_EQ(RunPrimFunc(MakePrimFunc({A}, body), {&a}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(RunPrimFunc(MakePrimFunc({A}, MakeEvaluate(IntImm(0))), {&a}).ok());
}

TEST(InterpreterTest, CastsTruncateSaturateAndRoundToNearestEven) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(RunCast(DataType::kFloat32, DataType::kInt32, {2.7, -2.7, nan, 1e10, -1e10}),
            (std::vector<double>{2, -2, 0, 2147483647, -2147483648.0}));
  EXPECT_EQ(RunCast(DataType::kFloat64, DataType::kUInt8, {-1.5, 300, 255.9}),
            (std::vector<double>{0, 255, 255}));
  EXPECT_EQ(RunCast(DataType::kInt32, DataType::kInt8, {300, -129, 127}),
            (std::vector<double>{44, 127, 127}));
  EXPECT_EQ(RunCast(DataType::kInt8, DataType::kUInt16, {-1}), (std::vector<double>{65535}));
  EXPECT_EQ(RunCast(DataType::kInt32, DataType::kBool, {0, 5, -1}),
            (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(RunCast(DataType::kFloat32, DataType::kBool, {0, 0.25, nan}),
            (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(RunCast(DataType::kBool, DataType::kFloat32, {1, 0}), (std::vector<double>{1, 0}));
  // float16 ties go to even: 2049 -> 2048, 2051 -> 2052; 65520 overflows.
  std::vector<double> halves = RunCast(DataType::kFloat64, DataType::kFloat16, {2049, 2051, 65520});
  EXPECT_EQ(halves[0], 2048);
  EXPECT_EQ(halves[1], 2052);
  EXPECT_TRUE(std::isinf(halves[2]));
  // 1 + 2^-11 + 2^-40 is just above a float16 tie: rounding through float
  // (to 1 + 2^-11, the tie) and then to even would give 1.
  std::vector<double> above_tie =
      RunCast(DataType::kFloat64, DataType::kFloat16, {1 + std::ldexp(1, -11) + std::ldexp(1, -40)});
  EXPECT_EQ(above_tie[0], 1 + std::ldexp(1, -10));
  EXPECT_EQ(RunCast(DataType::kInt64, DataType::kFloat32, {16777217}),
            (std::vector<double>{16777216}));
  EXPECT_EQ(RunCast(DataType::kInt32, DataType::kBFloat16, {257, 259}),
            (std::vector<double>{256, 260}));
}

TEST(InterpreterTest, IntrinsicsFollowOnnxSemantics) {
  int64_t n = 6;
  Buffer A = MakeBuffer("A", DataType::kFloat32, {n});
  Buffer R = MakeBuffer("R", DataType::kFloat32, {n});
  Buffer S = MakeBuffer("S", DataType::kFloat32, {n});
  Buffer N = MakeBuffer("N", DataType::kBool, {n});
  Var i = MakeVar("i");
  PrimExpr a = MakeBufferLoad(A, {i});
  Stmt body = Loop(i, n, MakeSeqStmt({
                             MakeBufferStore(R, MakeIntrinsic(Intrinsic::kRound, {a}), {i}),
                             MakeBufferStore(S, MakeIntrinsic(Intrinsic::kSigmoid, {a}), {i}),
                             MakeBufferStore(N, MakeIntrinsic(Intrinsic::kIsNan, {a}), {i}),
                         }));
  float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor ta = F32({n}, {0.5f, 1.5f, 2.5f, -2.5f, 0.0f, nan});
  HostTensor tr = HostTensor::Zeros(DataType::kFloat32, {n});
  HostTensor ts = HostTensor::Zeros(DataType::kFloat32, {n});
  HostTensor tn = HostTensor::Zeros(DataType::kBool, {n});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, R, S, N}, body), {&ta, &tr, &ts, &tn});
  ASSERT_TRUE(status.ok()) << status;
  std::vector<float> rounded = tr.Values<float>();
  EXPECT_EQ(std::vector<float>(rounded.begin(), rounded.end() - 1),
            (std::vector<float>{0, 2, 2, -2, 0}));
  EXPECT_EQ(ts.Values<float>()[4], 0.5f);
  EXPECT_EQ(tn.Values<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0, 0, 1}));
}

TEST(InterpreterTest, BitwiseOperationsAndShifts) {
  EXPECT_EQ(RunElementwise(BinaryOp::kShiftRight, DataType::kInt8, {-128, 64}, {7, 3})
                .Values<int8_t>(),
            (std::vector<int8_t>{-1, 8}));
  EXPECT_EQ(RunElementwise(BinaryOp::kShiftRight, DataType::kUInt8, {128}, {7}).Values<uint8_t>(),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(RunElementwise(BinaryOp::kShiftLeft, DataType::kInt8, {1, 3}, {7, 7}).Values<int8_t>(),
            (std::vector<int8_t>{-128, -128}));
  EXPECT_EQ(RunElementwise(BinaryOp::kBitXor, DataType::kInt16, {0x0ff0}, {0x00ff})
                .Values<int16_t>(),
            (std::vector<int16_t>{0x0f0f}));
  absl::Status status;
  RunElementwise(BinaryOp::kShiftLeft, DataType::kInt32, {1}, {32}, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("shift amount 32"), absl::string_view::npos) << status;
}

TEST(InterpreterTest, OutOfBoundsLoadAndStoreAreErrorsNamingBufferAndIndex) {
  Buffer A = MakeBuffer("A", DataType::kFloat32, {4});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  // Reads A[i + 1] for i up to 3.
  Stmt read_past = Loop(i, 4, MakeBufferStore(B, MakeBufferLoad(A, {i + 1}), {i}));
  HostTensor a = F32({4}, {1, 2, 3, 4});
  HostTensor b = HostTensor::Zeros(DataType::kFloat32, {4});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B}, read_past), {&a, &b});
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(status.message().find("load from buffer 'A' at A[4]"), absl::string_view::npos)
      << status;
  // The iterations before the failing one ran; the failing store did not.
  EXPECT_EQ(b.Values<float>(), (std::vector<float>{2, 3, 4, 0}));

  Stmt write_before = MakeBufferStore(B, FloatImm(1.0), {IntImm(-1)});
  status = RunPrimFunc(MakePrimFunc({A, B}, write_before), {&a, &b});
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(status.message().find("store to buffer 'B' at B[-1]"), absl::string_view::npos)
      << status;

  // A 2-D view: in bounds per dimension is not enough, the storage decides.
  Buffer M = MakeBufferView("M", A->data, DataType::kFloat32, {2, 3});
  Stmt read_2d = MakeBufferStore(B, MakeBufferLoad(M, {IntImm(1), IntImm(2)}), {IntImm(0)});
  status = RunPrimFunc(MakePrimFunc({A, B}, read_2d), {&a, &b});
  EXPECT_NE(status.message().find("M[1, 2]: element 5 is outside storage 'A' of 4"),
            absl::string_view::npos)
      << status;
}

TEST(InterpreterTest, SelectEvaluatesOnlyTheChosenOperand) {
  // Padding: B[i] = select(i >= 1, A[i - 1], 0) never reads A[-1].
  Buffer A = MakeBuffer("A", DataType::kFloat32, {3});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  PrimExpr guarded = MakeSelect(i >= IntImm(1) && i < IntImm(4),
                                MakeBufferLoad(A, {i - 1}), FloatImm(0.0));
  Stmt body = Loop(i, 4, MakeBufferStore(B, guarded, {i}));
  HostTensor a = F32({3}, {5, 6, 7});
  HostTensor b = HostTensor::Zeros(DataType::kFloat32, {4});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B}, body), {&a, &b});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(b.Values<float>(), (std::vector<float>{0, 5, 6, 7}));
}

TEST(InterpreterTest, BuffersViewingOneStorageShareItWithOffsetsAndStrides) {
  // T is a transposed 3x2 view of the 2x3 parameter A; W views B from element 2.
  Buffer A = MakeBuffer("A", DataType::kInt32, {2, 3});
  Buffer B = MakeBuffer("B", DataType::kInt32, {8});
  Buffer T = MakeBufferView("T", A->data, DataType::kInt32, {3, 2}, 0, {1, 3});
  Buffer W = MakeBufferView("W", B->data, DataType::kInt32, {3, 2}, 2);
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Loop(i, 3, Loop(j, 2, MakeBufferStore(W, MakeBufferLoad(T, {i, j}), {i, j})));
  HostTensor a = HostTensor::FromValues<int32_t>(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = HostTensor::Zeros(DataType::kInt32, {8});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B}, body), {&a, &b});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(b.Values<int32_t>(), (std::vector<int32_t>{0, 0, 1, 4, 2, 5, 3, 6}));
}

TEST(InterpreterTest, IfThenElseAndLetStmt) {
  // B[i] = (let t = A[i] * 2 in t > 5 ? t : -1)
  Buffer A = MakeBuffer("A", DataType::kInt32, {4});
  Buffer B = MakeBuffer("B", DataType::kInt32, {4});
  Var i = MakeVar("i");
  Var t = MakeVar("t", kI32);
  Stmt body = Loop(i, 4, MakeLetStmt(t, MakeBufferLoad(A, {i}) * IntImm(2, kI32),
                                     MakeIfThenElse(t > IntImm(5, kI32),
                                                    MakeBufferStore(B, t, {i}),
                                                    MakeBufferStore(B, IntImm(-1, kI32), {i}))));
  HostTensor a = HostTensor::FromValues<int32_t>(DataType::kInt32, {4}, {1, 3, 2, 10});
  HostTensor b = HostTensor::Zeros(DataType::kInt32, {4});
  ASSERT_TRUE(RunPrimFunc(MakePrimFunc({A, B}, body), {&a, &b}).ok());
  EXPECT_EQ(b.Values<int32_t>(), (std::vector<int32_t>{-1, 6, -1, 20}));
}

TEST(InterpreterTest, StepBudgetStopsALongLoop) {
  Buffer A = MakeBuffer("A", DataType::kInt64, {1});
  Var i = MakeVar("i");
  Stmt body = Loop(i, int64_t{1} << 50,
                   MakeBufferStore(A, MakeBufferLoad(A, {IntImm(0)}) + IntImm(1), {IntImm(0)}));
  HostTensor a = HostTensor::Zeros(DataType::kInt64, {1});
  InterpreterOptions options;
  options.max_steps = 100'000;
  absl::Status status = RunPrimFunc(MakePrimFunc({A}, body), {&a}, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  // Each iteration costs several steps, so far fewer than 100,000 ran.
  EXPECT_GT(a.Values<int64_t>()[0], 0);
  EXPECT_LT(a.Values<int64_t>()[0], 100'000);
}

// while flag[0]: n += 1; flag[0] = n < 5 -- runs 5 times (by hand); with the flag never
// cleared, the step budget ends the run instead of a hang.
TEST(InterpreterTest, AWhileLoopRunsWhileItsConditionHoldsAndWithinTheStepBudget) {
  Buffer flag = MakeBuffer("flag", DataType::kBool, {});
  Buffer n = MakeBuffer("n", DataType::kInt64, {});
  PrimExpr count = MakeBufferLoad(n, {}) + IntImm(1);
  Stmt counting = MakeWhile(MakeBufferLoad(flag, {}),
                            MakeSeqStmt({MakeBufferStore(n, count, {}),
                                         MakeBufferStore(flag, MakeBufferLoad(n, {}) < IntImm(5), {})}));
  HostTensor go = HostTensor::FromValues<uint8_t>(DataType::kBool, {}, {1});
  HostTensor runs = HostTensor::Zeros(DataType::kInt64, {});
  ASSERT_TRUE(RunPrimFunc(MakePrimFunc({flag, n}, counting), {&go, &runs}).ok());
  EXPECT_EQ(runs.Values<int64_t>()[0], 5);

  Stmt forever = MakeWhile(MakeBufferLoad(flag, {}), MakeBufferStore(n, count, {}));
  go = HostTensor::FromValues<uint8_t>(DataType::kBool, {}, {1});
  runs = HostTensor::Zeros(DataType::kInt64, {});
  InterpreterOptions options;
  options.max_steps = 100'000;
  absl::Status status = RunPrimFunc(MakePrimFunc({flag, n}, forever), {&go, &runs}, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_GT(runs.Values<int64_t>()[0], 0);
  EXPECT_LT(runs.Values<int64_t>()[0], 100'000);
}

TEST(InterpreterTest, CancellationCallbackStopsTheRun) {
  Buffer A = MakeBuffer("A", DataType::kInt64, {1});
  Var i = MakeVar("i");
  Stmt body = Loop(i, int64_t{1} << 50,
                   MakeBufferStore(A, MakeBufferLoad(A, {IntImm(0)}) + IntImm(1), {IntImm(0)}));
  HostTensor a = HostTensor::Zeros(DataType::kInt64, {1});
  int polls = 0;
  InterpreterOptions options;
  options.cancellation_check_interval = 1000;
  options.is_cancelled = [&polls] { return ++polls == 3; };
  absl::Status status = RunPrimFunc(MakePrimFunc({A}, body), {&a}, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(polls, 3);
}

TEST(InterpreterTest, AllocationBeyondTheMemoryLimitFailsBeforeAllocating) {
  Buffer A = MakeBuffer("A", DataType::kFloat32, {1});
  Var big = MakeVar("big", kF32);
  Stmt body = MakeAllocate(big, DataType::kFloat32, int64_t{1} << 40, "global",
                           MakeBufferStore(A, FloatImm(1.0), {IntImm(0)}));
  HostTensor a = HostTensor::Zeros(DataType::kFloat32, {1});
  absl::Status status = RunPrimFunc(MakePrimFunc({A}, body), {&a});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("allocation 'big'"), absl::string_view::npos) << status;
  EXPECT_EQ(a.Values<float>()[0], 0.0f);
}

TEST(InterpreterTest, ArgumentsMustMatchTheParameters) {
  Buffer A = MakeBuffer("A", DataType::kFloat32, {4});
  Buffer B = MakeBuffer("B", DataType::kFloat32, {2, 2});
  PrimFunc func = MakePrimFunc({A, B}, MakeSeqStmt({}));
  HostTensor a = HostTensor::Zeros(DataType::kFloat32, {4});
  HostTensor wrong_type = HostTensor::Zeros(DataType::kInt32, {2, 2});
  absl::Status status = RunPrimFunc(func, {&a, &wrong_type});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("parameter 'B'"), absl::string_view::npos) << status;
  HostTensor wrong_size = HostTensor::Zeros(DataType::kFloat32, {5});
  status = RunPrimFunc(func, {&a, &wrong_size});
  EXPECT_NE(status.message().find("parameter 'B'"), absl::string_view::npos) << status;
  // Same element count in another shape is accepted (buffers are flat storage).
  HostTensor flat = HostTensor::Zeros(DataType::kFloat32, {4});
  EXPECT_TRUE(RunPrimFunc(func, {&a, &flat}).ok());
  EXPECT_FALSE(RunPrimFunc(func, {&a}).ok());
}

TEST(InterpreterTest, UndefinedVariableIsACompileError) {
  Buffer A = MakeBuffer("A", DataType::kInt64, {4});
  Var ghost = MakeVar("ghost");
  absl::Status status =
      RunPrimFunc(MakePrimFunc({A}, MakeBufferStore(A, IntImm(1), {ghost})), {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("variable 'ghost' is not defined"), absl::string_view::npos)
      << status;
}

// add_one(In[4], Out[4]): Out[i] = In[i] + 1.
PrimFunc AddOneKernel() {
  Buffer in = MakeBuffer("In", DataType::kFloat32, {4});
  Buffer out = MakeBuffer("Out", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  return MakePrimFunc(
      {in, out},
      Loop(i, 4, MakeBufferStore(out, MakeBufferLoad(in, {i}) + FloatImm(1.0), {i})));
}

TEST(InterpreterTest, ModuleMainCallsKernelsOnViewsWithElementOffsets) {
  // main(X[8], Y[4]): tmp = add_one(X[4:8]) into arena[8:12]; Y = add_one(tmp).
  GlobalVar add_one = MakeGlobalVar("add_one");
  Buffer X = MakeBuffer("X", DataType::kFloat32, {8});
  Buffer Y = MakeBuffer("Y", DataType::kFloat32, {4});
  Var arena = MakeVar("arena", kF32);
  Buffer x_high = MakeBufferView("x_high", X->data, DataType::kFloat32, {4}, 4);
  Buffer tmp = MakeBufferView("tmp", arena, DataType::kFloat32, {4}, 8);
  Stmt body = MakeAllocate(arena, DataType::kFloat32, 12, "global",
                           MakeSeqStmt({MakeCallKernel(add_one, {x_high, tmp}),
                                        MakeCallKernel(add_one, {tmp, Y})}));
  PrimFunc main = MakePrimFunc({X, Y}, body);
  IRModule module = MakeModule({{MakeGlobalVar("main"), main}, {add_one, AddOneKernel()}});
  HostTensor x = F32({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  HostTensor y = HostTensor::Zeros(DataType::kFloat32, {4});
  absl::Status status = RunModuleFunction(module, "main", {&x, &y});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(y.Values<float>(), (std::vector<float>{6, 7, 8, 9}));

  // A view past the end of its storage is an error naming the kernel and buffer.
  Buffer past_end = MakeBufferView("past_end", arena, DataType::kFloat32, {4}, 10);
  PrimFunc bad_main =
      MakePrimFunc({X, Y}, MakeAllocate(arena, DataType::kFloat32, 12, "global",
                                        MakeCallKernel(add_one, {x_high, past_end})));
  IRModule bad = MakeModule({{MakeGlobalVar("main"), bad_main}, {add_one, AddOneKernel()}});
  status = RunModuleFunction(bad, "main", {&x, &y});
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(status.message().find("'past_end' views elements [10, 14)"), absl::string_view::npos)
      << status;

  // Without a module there is nothing to call.
  EXPECT_EQ(RunPrimFunc(main, {&x, &y}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(InterpreterTest, KernelErrorsNameTheKernelAndRecursionIsRejected) {
  GlobalVar loop_forever = MakeGlobalVar("loop_forever");
  Buffer A = MakeBuffer("A", DataType::kFloat32, {4});
  PrimFunc recursive = MakePrimFunc({A}, MakeCallKernel(loop_forever, {A}));
  IRModule module = MakeModule({{loop_forever, recursive}});
  HostTensor a = HostTensor::Zeros(DataType::kFloat32, {4});
  absl::Status status = RunModuleFunction(module, "loop_forever", {&a});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("calls itself"), absl::string_view::npos) << status;

  EXPECT_EQ(RunModuleFunction(module, "missing", {&a}).code(), absl::StatusCode::kNotFound);

  GlobalVar bad_kernel = MakeGlobalVar("bad_kernel");
  PrimFunc reads_past = MakePrimFunc(
      {A}, MakeBufferStore(A, MakeBufferLoad(A, {IntImm(4)}), {IntImm(0)}));
  PrimFunc caller = MakePrimFunc({A}, MakeCallKernel(bad_kernel, {A}));
  IRModule with_bad = MakeModule({{MakeGlobalVar("main"), caller}, {bad_kernel, reads_past}});
  status = RunModuleFunction(with_bad, "main", {&a});
  EXPECT_NE(status.message().find("in function 'bad_kernel'"), absl::string_view::npos)
      << status;
}

// conv2d, NCHW, 1x3x32x32 input, 16 3x3 filters, padding 1 (a select guards
// the padded reads), accumulating in an allocated scalar.
TEST(InterpreterTest, Conv2dMatchesADirectLoopNestAndIsFast) {
  const int64_t C = 3, H = 32, W = 32, K = 16;
  Buffer I = MakeBuffer("I", DataType::kFloat32, {1, C, H, W});
  Buffer F = MakeBuffer("F", DataType::kFloat32, {K, C, 3, 3});
  Buffer O = MakeBuffer("O", DataType::kFloat32, {1, K, H, W});
  Buffer acc = MakeBuffer("acc", DataType::kFloat32, {1}, "local");
  Var k = MakeVar("k"), y = MakeVar("y"), x = MakeVar("x");
  Var c = MakeVar("c"), ky = MakeVar("ky"), kx = MakeVar("kx");
  PrimExpr iy = y + ky - 1;
  PrimExpr ix = x + kx - 1;
  PrimExpr inside = iy >= IntImm(0) && iy < IntImm(H) && ix >= IntImm(0) && ix < IntImm(W);
  PrimExpr input = MakeSelect(inside, MakeBufferLoad(I, {IntImm(0), c, iy, ix}), FloatImm(0.0));
  PrimExpr zero = IntImm(0);
  Stmt accumulate = MakeBufferStore(
      acc, MakeBufferLoad(acc, {zero}) + input * MakeBufferLoad(F, {k, c, ky, kx}), {zero});
  Stmt reduce = Loop(c, C, Loop(ky, 3, Loop(kx, 3, accumulate)));
  Stmt body = Loop(
      k, K,
      Loop(y, H,
           Loop(x, W,
                MakeAllocate(acc->data, DataType::kFloat32, 1, "local",
                             MakeSeqStmt({reduce, MakeBufferStore(O, MakeBufferLoad(acc, {zero}),
                                                                  {zero, k, y, x})})))));
  PrimFunc conv = MakePrimFunc({I, F, O}, body);

  std::vector<float> input_values(C * H * W), filter_values(K * C * 9);
  for (size_t n = 0; n < input_values.size(); ++n) {
    input_values[n] = static_cast<float>((n * 37) % 101) / 50.0f - 1.0f;
  }
  for (size_t n = 0; n < filter_values.size(); ++n) {
    filter_values[n] = static_cast<float>((n * 13) % 29) / 14.0f - 1.0f;
  }
  HostTensor in = F32({1, C, H, W}, input_values);
  HostTensor filters = F32({K, C, 3, 3}, filter_values);
  HostTensor out = HostTensor::Zeros(DataType::kFloat32, {1, K, H, W});

  auto start = std::chrono::steady_clock::now();
  absl::Status status = RunPrimFunc(conv, {&in, &filters, &out});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(status.ok()) << status;
  std::printf("[ bench    ] conv2d 1x3x32x32 * 16x3x3x3 (pad 1): %.1f ms\n", seconds * 1e3);

  // The oracle: the same loop nest in C++ float, same summation order.
  std::vector<float> result = out.Values<float>();
  for (int64_t ok = 0; ok < K; ++ok) {
    for (int64_t oy = 0; oy < H; ++oy) {
      for (int64_t ox = 0; ox < W; ++ox) {
        float sum = 0.0f;
        for (int64_t ic = 0; ic < C; ++ic) {
          for (int64_t dy = 0; dy < 3; ++dy) {
            for (int64_t dx = 0; dx < 3; ++dx) {
              int64_t sy = oy + dy - 1, sx = ox + dx - 1;
              float v = (sy >= 0 && sy < H && sx >= 0 && sx < W)
                            ? input_values[(ic * H + sy) * W + sx]
                            : 0.0f;
              sum = sum + v * filter_values[((ok * C + ic) * 3 + dy) * 3 + dx];
            }
          }
        }
        ASSERT_EQ(result[(ok * H + oy) * W + ox], sum) << "at " << ok << ", " << oy << ", " << ox;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::loop
