// Batched innermost loops (interpreter_program.h, Batch): results, errors and
// partial writes must be exactly those of running one iteration at a time.
// Expected values are computed here by plain C++ loops.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/ir/tensor_data.h"
#include "engine/loop/interpreter.h"
#include "engine/loop/prim_func.h"

namespace kiln::loop {
namespace {

// Python's // and %, the reference for floordiv and floormod.
int64_t PyFloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t PyFloorMod(int64_t a, int64_t b) { return a - PyFloorDiv(a, b) * b; }

Stmt Loop(const Var& var, int64_t min, int64_t extent, Stmt body) {
  return MakeFor(var, IntImm(min), IntImm(extent), ForKind::kSerial, std::move(body));
}

// out[i - min] = f(i) over i in [min, min + n): several whole batches and a
// partial one, with dividends below zero, across zero and far above it.
std::vector<int64_t> RunIndexFunction(int64_t min, int64_t n, PrimExpr (*f)(const PrimExpr&)) {
  Buffer out = MakeBuffer("out", DataType::kInt64, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, min, n, MakeBufferStore(out, f(i), {i - min}));
  HostTensor result = HostTensor::Zeros(DataType::kInt64, {n});
  absl::Status status = RunPrimFunc(MakePrimFunc({out}, body), {&result});
  EXPECT_TRUE(status.ok()) << status;
  return result.Values<int64_t>();
}

TEST(InterpreterBatchTest, FloorDivAndModByConstantsMatchPythonSemantics) {
  for (int64_t min : {int64_t{-700}, int64_t{0}, int64_t{(int64_t{1} << 50) - 300},
                      int64_t{(int64_t{1} << 53) + 5}}) {
    std::vector<int64_t> div = RunIndexFunction(min, 1000, [](const PrimExpr& i) {
      return FloorDiv(i, 7);
    });
    std::vector<int64_t> mod = RunIndexFunction(min, 1000, [](const PrimExpr& i) {
      return FloorMod(i, 576);
    });
    // Not consecutive: (3 * i) // 5, the reciprocal path.
    std::vector<int64_t> strided = RunIndexFunction(min, 1000, [](const PrimExpr& i) {
      return FloorDiv(i * 3, 5);
    });
    std::vector<int64_t> strided_mod = RunIndexFunction(min, 1000, [](const PrimExpr& i) {
      return FloorMod(i * 3, 576);
    });
    std::vector<int64_t> truncating = RunIndexFunction(min, 1000, [](const PrimExpr& i) {
      return i / IntImm(9);
    });
    for (int64_t k = 0; k < 1000; ++k) {
      int64_t i = min + k;
      ASSERT_EQ(div[k], PyFloorDiv(i, 7)) << "i = " << i;
      ASSERT_EQ(mod[k], PyFloorMod(i, 576)) << "i = " << i;
      ASSERT_EQ(strided[k], PyFloorDiv(3 * i, 5)) << "i = " << i;
      ASSERT_EQ(strided_mod[k], PyFloorMod(3 * i, 576)) << "i = " << i;
      ASSERT_EQ(truncating[k], i / 9) << "i = " << i;
    }
  }
}

TEST(InterpreterBatchTest, BroadcastMultiplyOverManyBatches) {
  // The shape of a folded conv weight scale: W[o, r] * s[o], fused.
  const int64_t channels = 5, per_channel = 77, n = channels * per_channel;
  Buffer W = MakeBuffer("W", DataType::kFloat32, {n});
  Buffer S = MakeBuffer("S", DataType::kFloat32, {channels});
  Buffer out = MakeBuffer("out", DataType::kFloat32, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, 0, n,
                   MakeBufferStore(out, MakeBufferLoad(W, {i}) *
                                            MakeBufferLoad(S, {FloorDiv(i, per_channel)}),
                                   {i}));
  std::vector<float> w(n), s = {1.5f, -2, 0.25f, 3, -0.5f};
  for (int64_t k = 0; k < n; ++k) w[k] = static_cast<float>(k % 13) - 6.5f;
  TensorData w_data = HostTensor::FromValues<float>(DataType::kFloat32, {n}, w).ToTensorData();
  TensorData s_data =
      HostTensor::FromValues<float>(DataType::kFloat32, {channels}, s).ToTensorData();
  HostTensor result = HostTensor::Zeros(DataType::kFloat32, {n});
  absl::Status status =
      RunPrimFuncOnConstants(MakePrimFunc({W, S, out}, body), {w_data, s_data}, {&result});
  ASSERT_TRUE(status.ok()) << status;
  std::vector<float> values = result.Values<float>();
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(values[k], w[k] * s[k / per_channel]) << k;
}

TEST(InterpreterBatchTest, AnErrorInTheThirdBatchIsReportedAsInSerialOrder) {
  // out[i] = A[i + 3] // D[i]: D is zero at i = 300, and A is read past its
  // end from i = 997; the division by zero comes first.
  const int64_t n = 1000;
  Buffer A = MakeBuffer("A", DataType::kInt32, {n});
  Buffer D = MakeBuffer("D", DataType::kInt32, {n});
  Buffer out = MakeBuffer("out", DataType::kInt32, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, 0, n,
                   MakeBufferStore(out, FloorDiv(MakeBufferLoad(A, {i + 3}),
                                                 MakeBufferLoad(D, {i})),
                                   {i}));
  std::vector<int32_t> a(n, 10), d(n, 2);
  d[300] = 0;
  HostTensor ta = HostTensor::FromValues<int32_t>(DataType::kInt32, {n}, a);
  HostTensor td = HostTensor::FromValues<int32_t>(DataType::kInt32, {n}, d);
  HostTensor tout = HostTensor::Zeros(DataType::kInt32, {n});
  PrimFunc func = MakePrimFunc({A, D, out}, body);
  absl::Status status = RunPrimFunc(func, {&ta, &td, &tout});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("division by zero"), absl::string_view::npos) << status;
  std::vector<int32_t> written = tout.Values<int32_t>();
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(written[k], k < 300 ? 5 : 0) << k;

  // Without the zero: the out-of-bounds load at i = 997 names A[1000], and
  // iterations up to 996 were stored.
  d[300] = 2;
  td = HostTensor::FromValues<int32_t>(DataType::kInt32, {n}, d);
  tout = HostTensor::Zeros(DataType::kInt32, {n});
  status = RunPrimFunc(func, {&ta, &td, &tout});
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_NE(status.message().find("load from buffer 'A' at A[1000]"), absl::string_view::npos)
      << status;
  written = tout.Values<int32_t>();
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(written[k], k < 997 ? 5 : 0) << k;
}

TEST(InterpreterBatchTest, OverlappingStoragesRunOneIterationAtATime) {
  // B[i] = A[i - 1] + 1 with A and B the same tensor: each iteration reads
  // what the previous one wrote, so the result counts up from A[0].
  const int64_t n = 600;
  Buffer A = MakeBuffer("A", DataType::kInt32, {n});
  Buffer B = MakeBuffer("B", DataType::kInt32, {n});
  Var i = MakeVar("i");
  Stmt body = Loop(i, 1, n - 1,
                   MakeBufferStore(B, MakeBufferLoad(A, {i - 1}) + IntImm(1, PrimType{DataType::kInt32, 1}),
                                   {i}));
  HostTensor t = HostTensor::Zeros(DataType::kInt32, {n});
  absl::Status status = RunPrimFunc(MakePrimFunc({A, B}, body), {&t, &t});
  ASSERT_TRUE(status.ok()) << status;
  std::vector<int32_t> values = t.Values<int32_t>();
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(values[k], k) << k;
}

TEST(InterpreterBatchTest, ConstantsPassedReadOnlyCannotBeStoredTo) {
  Buffer A = MakeBuffer("A", DataType::kFloat32, {4});
  Buffer out = MakeBuffer("out", DataType::kFloat32, {4});
  Var i = MakeVar("i");
  Stmt body = Loop(i, 0, 4, MakeBufferStore(A, MakeBufferLoad(A, {i}) * FloatImm(2), {i}));
  TensorData a = HostTensor::FromValues<float>(DataType::kFloat32, {4}, std::vector<float>{1, 2, 3, 4})
                     .ToTensorData();
  HostTensor result = HostTensor::Zeros(DataType::kFloat32, {4});
  absl::Status status = RunPrimFuncOnConstants(MakePrimFunc({A, out}, body), {a}, {&result});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("stores to parameter 'A', which is a read-only constant"),
            absl::string_view::npos)
      << status;
  EXPECT_EQ(HostTensor::FromTensorData(a).Values<float>(), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace kiln::loop
