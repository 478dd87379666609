// Models whose inputs have symbolic dims that are not a per-sample batch (an ONNX dim_param
// such as a sequence length), compiled once without input shapes: kernels read the symbols'
// values at run time, values between kernels are allocated for each run. Oracles: values
// worked out by hand, a plain-loop reference of an attention block, and the same model
// compiled for the run's shape through input_shapes (the static path the conformance suite
// checks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "engine/runtime/kiln_runtime.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}

absl::StatusOr<CompileResult> Compile(const std::string& model,
                                      std::map<std::string, std::vector<int64_t>> shapes = {}) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.import.input_shapes = std::move(shapes);
  return CompileOnnx(model, options);
}

// y = softmax(relu(x W + b)) over each row of x[S, 2], and their column sums z[1, 2] (a
// reduction across S).
std::string RowsModel() {
  OnnxModelBuilder b(11);  // ReduceSum's axes an attribute
  b.Input("x", {-1, 2}, onnx::TensorProto::FLOAT, {"S"});
  b.Output("y");
  b.Output("z");
  b.FloatInitializer("w", {2, 2}, {1, 0, 0, 2});
  b.FloatInitializer("b", {2}, {0, 1});
  b.Node("MatMul", {"x", "w"}, {"m"}, "project");
  b.Node("Add", {"m", "b"}, {"a"}, "bias");
  b.Node("Relu", {"a"}, {"r"}, "relu");
  auto& softmax = b.Node("Softmax", {"r"}, {"y"}, "softmax");
  OnnxModelBuilder::IntAttr(softmax, "axis", 1);
  auto& sum = b.Node("ReduceSum", {"y"}, {"z"}, "column_sum");
  OnnxModelBuilder::IntsAttr(sum, "axes", {0});
  return b.Bytes();
}

TEST(SymbolicDimsTest, RowsOfAnyCountRunOnBothBackends) {
  absl::StatusOr<CompileResult> compiled = Compile(RowsModel());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->symbolic.has_value());
  EXPECT_FALSE(compiled->lowered->sample_batch.has_value());  // S is summed over: no batch
  EXPECT_THAT(compiled->lowered->symbolic->symbols, ElementsAre("S"));
  // Rows (0, 0) -> relu(0, 1) = (0, 1) -> softmax (1/(1+e), e/(1+e)); (1, -1) -> relu(1, -1)
  // = (1, 0) -> (e/(1+e), 1/(1+e)); (2, 0.5) -> (2, 2) -> (1/2, 1/2).
  const double e = std::exp(1.0), low = 1 / (1 + e), high = e / (1 + e);
  for (int threads : {1, 2}) {
    kiln_rt_set_num_threads(threads);
    for (bool native : {false, true}) {
      SCOPED_TRACE(native ? "native" : "interpreter");
      absl::StatusOr<std::vector<loop::HostTensor>> three =
          RunBackendTensors(*compiled, {Floats({3, 2}, {0, 0, 1, -1, 2, 0.5})}, native);
      ASSERT_TRUE(three.ok()) << three.status();
      EXPECT_THAT((*three)[0].shape, ElementsAre(3, 2));
      std::vector<double> y = (*three)[0].ToDoubles(), z = (*three)[1].ToDoubles();
      std::vector<double> want = {low, high, high, low, 0.5, 0.5};
      for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(y[k], want[k], 1e-6) << k;
      EXPECT_THAT((*three)[1].shape, ElementsAre(1, 2));
      EXPECT_NEAR(z[0], 1.5, 1e-6);
      EXPECT_NEAR(z[1], 1.5, 1e-6);
      // No rows: an empty y, and sums over nothing.
      absl::StatusOr<std::vector<loop::HostTensor>> none =
          RunBackendTensors(*compiled, {Floats({0, 2}, {})}, native);
      ASSERT_TRUE(none.ok()) << none.status();
      EXPECT_THAT((*none)[0].shape, ElementsAre(0, 2));
      EXPECT_THAT((*none)[1].ToDoubles(), ElementsAre(0, 0));
    }
  }
  kiln_rt_set_num_threads(0);
}

// One attention block over x[1, S, 4] (2 heads of 2): projections, reshape to heads, scores
// scaled and softmaxed over the keys, the weighted values merged back, an output projection,
// the residual, and layer normalization: the shape of a transformer encoder layer.
constexpr int kWidth = 4, kHeads = 2, kHeadWidth = 2;

std::vector<float> Weights(int salt) {
  std::vector<float> w;
  for (int i = 0; i < kWidth * kWidth; ++i) w.push_back(0.5f * std::sin(1.3f * i + salt));
  return w;
}

std::string AttentionModel() {
  OnnxModelBuilder b(17);
  b.Input("x", {1, -1, kWidth}, onnx::TensorProto::FLOAT, {"", "seq"});
  b.Output("y");
  for (const char* name : {"wq", "wk", "wv", "wo"}) {
    b.FloatInitializer(name, {kWidth, kWidth}, Weights(name[1]));
  }
  b.FloatInitializer("gamma", {kWidth}, {1, 0.5, 2, 1});
  b.FloatInitializer("beta", {kWidth}, {0, 0.1, 0, -0.1});
  b.FloatInitializer("scale", {}, {std::sqrt(static_cast<float>(kHeadWidth))});
  b.Int64Initializer("heads", {4}, {0, -1, kHeads, kHeadWidth});
  b.Int64Initializer("merged", {3}, {0, -1, kWidth});
  for (const char* p : {"q", "k", "v"}) {
    std::string name(p);
    b.Node("MatMul", {"x", "w" + name}, {name + "0"}, name + "_proj");
    b.Node("Reshape", {name + "0", "heads"}, {name + "1"}, name + "_heads");
  }
  auto& tq = b.Node("Transpose", {"q1"}, {"q2"}, "q_t");
  OnnxModelBuilder::IntsAttr(tq, "perm", {0, 2, 1, 3});
  auto& tk = b.Node("Transpose", {"k1"}, {"k2"}, "k_t");
  OnnxModelBuilder::IntsAttr(tk, "perm", {0, 2, 3, 1});
  auto& tv = b.Node("Transpose", {"v1"}, {"v2"}, "v_t");
  OnnxModelBuilder::IntsAttr(tv, "perm", {0, 2, 1, 3});
  b.Node("MatMul", {"q2", "k2"}, {"scores"}, "scores");
  b.Node("Div", {"scores", "scale"}, {"scaled"}, "scale");
  auto& softmax = b.Node("Softmax", {"scaled"}, {"probs"}, "softmax");
  OnnxModelBuilder::IntAttr(softmax, "axis", -1);
  b.Node("MatMul", {"probs", "v2"}, {"o"}, "weighted");
  auto& to = b.Node("Transpose", {"o"}, {"o2"}, "o_t");
  OnnxModelBuilder::IntsAttr(to, "perm", {0, 2, 1, 3});
  b.Node("Reshape", {"o2", "merged"}, {"o3"}, "merge");
  b.Node("MatMul", {"o3", "wo"}, {"o4"}, "out_proj");
  b.Node("Add", {"o4", "x"}, {"residual"}, "residual");
  auto& norm = b.Node("LayerNormalization", {"residual", "gamma", "beta"}, {"y"}, "norm");
  OnnxModelBuilder::IntAttr(norm, "axis", -1);
  return b.Bytes();
}

// The block in plain loops, in double.
std::vector<double> ReferenceAttention(const std::vector<double>& x, int seq) {
  auto project = [&](const std::vector<double>& in, const std::vector<float>& w) {
    std::vector<double> out(seq * kWidth, 0);
    for (int s = 0; s < seq; ++s) {
      for (int j = 0; j < kWidth; ++j) {
        for (int k = 0; k < kWidth; ++k) out[s * kWidth + j] += in[s * kWidth + k] * w[k * kWidth + j];
      }
    }
    return out;
  };
  std::vector<double> q = project(x, Weights('q')), k = project(x, Weights('k')),
                      v = project(x, Weights('v'));
  std::vector<double> merged(seq * kWidth, 0);
  for (int h = 0; h < kHeads; ++h) {
    for (int s = 0; s < seq; ++s) {
      std::vector<double> scores(seq);
      double top = -INFINITY;
      for (int t = 0; t < seq; ++t) {
        double dot = 0;
        for (int d = 0; d < kHeadWidth; ++d) {
          dot += q[s * kWidth + h * kHeadWidth + d] * k[t * kWidth + h * kHeadWidth + d];
        }
        scores[t] = dot / std::sqrt(static_cast<double>(kHeadWidth));
        top = std::max(top, scores[t]);
      }
      double total = 0;
      for (double& score : scores) total += (score = std::exp(score - top));
      for (int t = 0; t < seq; ++t) {
        for (int d = 0; d < kHeadWidth; ++d) {
          merged[s * kWidth + h * kHeadWidth + d] += scores[t] / total * v[t * kWidth + h * kHeadWidth + d];
        }
      }
    }
  }
  std::vector<double> r = project(merged, Weights('o'));
  const std::vector<double> gamma = {1, 0.5, 2, 1}, beta = {0, 0.1, 0, -0.1};
  for (int s = 0; s < seq; ++s) {
    double mean = 0, variance = 0;
    for (int j = 0; j < kWidth; ++j) mean += (r[s * kWidth + j] += x[s * kWidth + j]) / kWidth;
    for (int j = 0; j < kWidth; ++j) variance += std::pow(r[s * kWidth + j] - mean, 2) / kWidth;
    for (int j = 0; j < kWidth; ++j) {
      r[s * kWidth + j] = (r[s * kWidth + j] - mean) / std::sqrt(variance + 1e-5) * gamma[j] + beta[j];
    }
  }
  return r;
}

TEST(SymbolicDimsTest, AnAttentionBlockRunsOnAnySequenceLength) {
  absl::StatusOr<CompileResult> compiled = Compile(AttentionModel());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->symbolic.has_value());
  EXPECT_THAT(compiled->lowered->symbolic->symbols, ElementsAre("seq"));
  kiln_rt_set_num_threads(2);
  for (int seq : {1, 5, 17}) {
    std::vector<double> x;
    for (int i = 0; i < seq * kWidth; ++i) x.push_back(std::cos(0.61 * i) * 1.5);
    std::vector<double> want = ReferenceAttention(x, seq);
    std::vector<loop::HostTensor> inputs = {Floats({1, seq, kWidth}, x)};
    // The same block compiled for this length: the static kernels and schedules.
    absl::StatusOr<CompileResult> fixed = Compile(AttentionModel(), {{"x", {1, seq, kWidth}}});
    ASSERT_TRUE(fixed.ok()) << fixed.status();
    ASSERT_FALSE(fixed->lowered->symbolic.has_value());
    absl::StatusOr<std::vector<std::vector<double>>> expected = RunBackend(*fixed, inputs, true);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool native : {false, true}) {
      SCOPED_TRACE(absl::StrCat(native ? "native" : "interpreter", ", seq ", seq));
      absl::StatusOr<std::vector<loop::HostTensor>> got = RunBackendTensors(*compiled, inputs, native);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_THAT((*got)[0].shape, ElementsAre(1, seq, kWidth));
      std::vector<double> y = (*got)[0].ToDoubles();
      ASSERT_EQ(y.size(), want.size());
      for (size_t k = 0; k < y.size(); ++k) {
        EXPECT_NEAR(y[k], want[k], 1e-5) << k;
        EXPECT_NEAR(y[k], (*expected)[0][k], 1e-5) << k;
      }
    }
  }
  kiln_rt_set_num_threads(0);
}

// x[S, 2] + y[S, 2]: both inputs give S, and must agree.
std::string TwoInputsModel() {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 2}, onnx::TensorProto::FLOAT, {"S"});
  b.Input("y", {-1, 2}, onnx::TensorProto::FLOAT, {"S"});
  b.Output("z");
  b.Node("Add", {"x", "y"}, {"z"}, "sum");
  return b.Bytes();
}

TEST(SymbolicDimsTest, InputsThatDisagreeOnASymbolFailTheRunOnBothBackends) {
  absl::StatusOr<CompileResult> compiled = Compile(TwoInputsModel());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> ok = RunBackendTensors(
        *compiled, {Floats({2, 2}, {1, 2, 3, 4}), Floats({2, 2}, {10, 20, 30, 40})}, native);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_THAT((*ok)[0].ToDoubles(), ElementsAre(11, 22, 33, 44));
    absl::Status ran = RunBackendTensors(*compiled, {Floats({2, 2}, {1, 2, 3, 4}),
                                                     Floats({1, 2}, {1, 2})},
                                         native)
                           .status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
    EXPECT_THAT(ran.message(), HasSubstr(native ? "KILN_ERROR_SHAPE_MISMATCH" : "float32[S, 2]"));
  }
}

// scores[S, S] = x x^T for x[S, 1]: a run whose S makes that intermediate larger than memory
// (or int64) is an error from either backend, never an allocation attempt that crashes.
TEST(SymbolicDimsTest, ARunWhoseValuesDoNotFitFailsWithAnError) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 1}, onnx::TensorProto::FLOAT, {"S"});
  b.Output("y");
  auto& t = b.Node("Transpose", {"x"}, {"xt"}, "xt");
  OnnxModelBuilder::IntsAttr(t, "perm", {1, 0});
  b.Node("MatMul", {"x", "xt"}, {"scores"}, "outer");
  b.Node("MatMul", {"scores", "x"}, {"y"}, "back");
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // 2^22 rows: 16 MiB of input, 64 TiB of scores.
  const int64_t rows = int64_t{1} << 22;
  loop::HostTensor x = loop::HostTensor::Zeros(DataType::kFloat32, {rows, 1});
  for (bool native : {false, true}) {
    absl::Status ran = RunBackendTensors(*compiled, {x}, native).status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kResourceExhausted) << ran;
  }
}

TEST(SymbolicDimsTest, AnOperatorWithoutSymbolicSupportIsACompileErrorNamingTheNode) {
  // x[2, S] stacked on itself (concatenate reads static shapes; S on axis 1 is no batch).
  OnnxModelBuilder b(13);
  b.Input("x", {2, -1}, onnx::TensorProto::FLOAT, {"", "S"});
  b.Output("y");
  auto& concat = b.Node("Concat", {"x", "x"}, {"y"}, "the_concat");
  OnnxModelBuilder::IntAttr(concat, "axis", 0);
  CompileFailure failure;
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kUnimplemented) << compiled.status();
  EXPECT_THAT(compiled.status().message(), HasSubstr("si=the_concat"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("known only at run time"));
  // A dim computed from a symbol (a convolution's output rows) has no symbol of its own.
  OnnxModelBuilder c(13);
  c.Input("x", {1, 1, -1, 4}, onnx::TensorProto::FLOAT, {"", "", "H"});
  c.Output("y");
  c.FloatInitializer("w", {1, 1, 3, 1}, {1, 2, 1});
  c.Node("Conv", {"x", "w"}, {"y"}, "the_conv");
  compiled = CompileOnnx(c.Bytes(), options, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("si=the_conv"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("not a symbol of the model's inputs"));
}

// x[N, 3] + y[4, 3] types as (4, 3): the run checks N = 4 before any kernel reads x.
TEST(SymbolicDimsTest, ARunBreakingWhatTheTypesAssumedFailsBeforeAnyKernelRuns) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 3}, onnx::TensorProto::FLOAT, {"N"});
  b.Input("y", {4, 3});
  b.Output("z");
  b.Node("Add", {"x", "y"}, {"z"}, "sum");
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->symbolic.has_value());
  ASSERT_EQ(compiled->lowered->symbolic->equalities.size(), 1u);
  std::vector<double> ones(12, 1);
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<std::vector<double>>> fits =
        RunBackend(*compiled, {Floats({4, 3}, ones), Floats({4, 3}, ones)}, native);
    ASSERT_TRUE(fits.ok()) << fits.status();
    EXPECT_EQ((*fits)[0], std::vector<double>(12, 2));
    absl::Status ran =
        RunBackend(*compiled, {Floats({1, 3}, {1, 1, 1}), Floats({4, 3}, ones)}, native).status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
    EXPECT_THAT(ran.message(),
                HasSubstr(native ? "KILN_ERROR_SHAPE_MISMATCH" : "si=sum: N must equal 4"));
  }
}

// dim_params that are not identifiers, two of them alike once sanitized ("a.b", "a_b"): each
// is its own symbol, copied out by its own kernel.
TEST(SymbolicDimsTest, SymbolsAreToldApartByTheirNamesNotTheirIdentifiers) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, -1}, onnx::TensorProto::FLOAT, {"", "a.b"});
  b.Input("y", {2, -1}, onnx::TensorProto::FLOAT, {"", "a_b"});
  b.Input("z", {2, -1}, onnx::TensorProto::FLOAT, {"", "seq-len"});
  b.Output("x_out");
  b.Output("y_out");
  b.Output("z_out");
  b.Node("Identity", {"x"}, {"x_out"}, "x_copy");
  b.Node("Identity", {"y"}, {"y_out"}, "y_copy");
  b.Node("Relu", {"z"}, {"z_out"}, "z_relu");
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->symbolic.has_value());
  EXPECT_THAT(compiled->lowered->symbolic->symbols, ElementsAre("a.b", "a_b", "seq-len"));
  for (bool native : {false, true}) {
    SCOPED_TRACE(native ? "native" : "interpreter");
    absl::StatusOr<std::vector<loop::HostTensor>> got = RunBackendTensors(
        *compiled,
        {Floats({2, 3}, {1, 2, 3, 4, 5, 6}), Floats({2, 1}, {7, 8}), Floats({2, 2}, {-1, 2, -3, 4})},
        native);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT((*got)[0].ToDoubles(), ElementsAre(1, 2, 3, 4, 5, 6));
    EXPECT_THAT((*got)[1].shape, ElementsAre(2, 1));
    EXPECT_THAT((*got)[1].ToDoubles(), ElementsAre(7, 8));
    EXPECT_THAT((*got)[2].ToDoubles(), ElementsAre(0, 2, 0, 4));
  }
}

// x[S, T] summed over S: T = 0 makes every tensor empty whatever S, but a loop over S would
// still run S times; a value past KILN_MAX_SYMBOL_VALUE is refused before any kernel runs.
TEST(SymbolicDimsTest, ASymbolPastTheLimitIsRefusedEvenWhenTheTensorsAreEmpty) {
  OnnxModelBuilder b(11);
  b.Input("x", {-1, -1}, onnx::TensorProto::FLOAT, {"S", "T"});
  b.Output("y");
  auto& sum = b.Node("ReduceSum", {"x"}, {"y"}, "sum");
  OnnxModelBuilder::IntsAttr(sum, "axes", {0});
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const int64_t too_many = int64_t{KILN_MAX_SYMBOL_VALUE} + 1;
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> empty =
        RunBackendTensors(*compiled, {Floats({5, 0}, {})}, native);
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_THAT((*empty)[0].shape, ElementsAre(1, 0));
    absl::Status ran =
        RunBackendTensors(*compiled, {loop::HostTensor::Zeros(DataType::kFloat32, {too_many, 0})},
                          native)
            .status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
  }
}

// A token sequence's embeddings: ids[1, S] gathered from a static table[5, 3] (row r holds
// 10 r, 10 r + 1, 10 r + 2), then scaled: the first layer of an exported transformer.
TEST(SymbolicDimsTest, AnEmbeddingLookupGathersTokensOfAnyCount) {
  OnnxModelBuilder b(13);
  b.Input("ids", {1, -1}, onnx::TensorProto::INT64, {"", "S"});
  b.Output("y");
  std::vector<float> table;
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 3; ++c) table.push_back(static_cast<float>(10 * r + c));
  }
  b.FloatInitializer("table", {5, 3}, table);
  b.FloatInitializer("half", {}, {0.5});
  b.Node("Gather", {"table", "ids"}, {"embedded"}, "embed");
  b.Node("Mul", {"embedded", "half"}, {"y"}, "scale");
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->symbolic.has_value());
  for (bool native : {false, true}) {
    SCOPED_TRACE(native ? "native" : "interpreter");
    absl::StatusOr<std::vector<loop::HostTensor>> got = RunBackendTensors(
        *compiled, {loop::HostTensor::FromValues<int64_t>(DataType::kInt64, {1, 3}, {3, 0, -1})},
        native);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT((*got)[0].shape, ElementsAre(1, 3, 3));
    EXPECT_THAT((*got)[0].ToDoubles(), ElementsAre(15, 15.5, 16, 0, 0.5, 1, 20, 20.5, 21));
    absl::StatusOr<std::vector<loop::HostTensor>> none = RunBackendTensors(
        *compiled, {loop::HostTensor::FromValues<int64_t>(DataType::kInt64, {1, 0}, {})}, native);
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_THAT((*none)[0].shape, ElementsAre(1, 0, 3));
  }
}

}  // namespace
}  // namespace kiln::driver
