// Einsum (engine/frontend/onnx/einsum_converter.cc) beyond the ONNX backend tests: three
// operands, attention's batched contraction, an outer product, the implicit output's ASCII
// order, a diagonal inside a contraction, and equations that are errors. Every expected value
// is the sum the equation writes, computed here with plain loops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::HasSubstr;

// 0.1, 0.2, ... as `n` values, offset so operands differ.
std::vector<double> Ramp(int n, double offset) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(offset + 0.1 * i - 0.03 * (i % 3));
  return v;
}

loop::HostTensor Floats(std::vector<int64_t> shape, const std::vector<double>& values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, shape, values);
}

std::string EinsumModel(const std::string& equation,
                        const std::vector<std::vector<int64_t>>& shapes) {
  OnnxModelBuilder b;
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back("in" + std::to_string(i));
    b.Input(names.back(), shapes[i]);
  }
  b.Output("out");
  OnnxModelBuilder::StringAttr(b.Node("Einsum", names, {"out"}, "einsum"), "equation", equation);
  return b.Bytes();
}

void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected) {
  EXPECT_THAT(actual, ::testing::Pointwise(::testing::DoubleNear(1e-4), expected));
}

// Attention scores: q (b, h, q, d) x k (b, h, k, d) -> (b, h, q, k).
TEST(EinsumTest, BatchedContractionOfAttention) {
  const int B = 2, H = 2, Q = 3, K = 4, D = 5;
  std::vector<double> q = Ramp(B * H * Q * D, 0.1), k = Ramp(B * H * K * D, -0.4);
  auto out = RunAll(EinsumModel("bhqd,bhkd->bhqk", {{B, H, Q, D}, {B, H, K, D}}),
                    {Floats({B, H, Q, D}, q), Floats({B, H, K, D}, k)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Q; ++i)
        for (int j = 0; j < K; ++j) {
          double sum = 0;
          for (int d = 0; d < D; ++d) {
            sum += q[((b * H + h) * Q + i) * D + d] * k[((b * H + h) * K + j) * D + d];
          }
          expected.push_back(sum);
        }
  ExpectNear(out[0], expected);
}

// Three operands, one label (j) summed between the first two and one (k) with the third:
// out[i, l] = sum_j sum_k a[i, j] b[j, k] c[k, l].
TEST(EinsumTest, ThreeOperandsContractLeftToRight) {
  std::vector<double> a = Ramp(2 * 3, 0.2), b = Ramp(3 * 4, -0.1), c = Ramp(4 * 2, 0.3);
  auto out = RunAll(EinsumModel("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}),
                    {Floats({2, 3}, a), Floats({3, 4}, b), Floats({4, 2}, c)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 2; ++l) {
      double sum = 0;
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) sum += a[i * 3 + j] * b[j * 4 + k] * c[k * 2 + l];
      expected.push_back(sum);
    }
  ExpectNear(out[0], expected);
}

// No "->": the output is the labels seen once in ASCII order. "aB,c" is an outer product of x
// (a=2, B=3) and y (c=4) whose output is (B, a, c): 'B' sorts before 'a'.
TEST(EinsumTest, ImplicitOutputIsAnOuterProductInAsciiOrder) {
  std::vector<double> x = Ramp(2 * 3, 0.5), y = Ramp(4, -0.2);
  auto out = RunAll(EinsumModel("aB,c", {{2, 3}, {4}}), {Floats({2, 3}, x), Floats({4}, y)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int bb = 0; bb < 3; ++bb)
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 4; ++c) expected.push_back(x[a * 3 + bb] * y[c]);
  ExpectNear(out[0], expected);
}

// A repeated label inside a contraction: out[b] = sum_i x[b, i, i] * v[i] (a trace weighted by v).
TEST(EinsumTest, DiagonalInsideAContraction) {
  std::vector<double> x = Ramp(2 * 3 * 3, 0.1), v = Ramp(3, 1.0);
  auto out = RunAll(EinsumModel("bii,i->b", {{2, 3, 3}, {3}}), {Floats({2, 3, 3}, x), Floats({3}, v)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 3; ++i) sum += x[(b * 3 + i) * 3 + i] * v[i];
    expected.push_back(sum);
  }
  ExpectNear(out[0], expected);
}

TEST(EinsumTest, BadEquationsAreErrorsNamingTheNode) {
  struct Case {
    std::string equation;
    std::vector<std::vector<int64_t>> shapes;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"ij,jk->ik", {{2, 3}, {4, 5}}, "extent 3 in one place and 4"},
           {"ij->k", {{2, 3}}, "the output has a label no input has"},
           {"i1->i", {{2, 3}}, "expected letters"},
           {"ijk->i", {{2, 3}}, "3 labels for an input of rank 2"},
           {"ij,jk", {{2, 3}}, "2 input terms for 1 inputs"}}) {
    CompileOptions options;
    CompileFailure failure;
    absl::StatusOr<CompileResult> compiled =
        CompileOnnx(EinsumModel(c.equation, c.shapes), options, &failure);
    ASSERT_FALSE(compiled.ok()) << c.equation;
    EXPECT_THAT(failure.status.message(), HasSubstr("einsum")) << c.equation;
    EXPECT_THAT(failure.status.message(), HasSubstr(c.message)) << c.equation;
  }
}

}  // namespace
}  // namespace kiln::driver
