// Models with a symbolic batch dim (an ONNX dim_param on axis 0), compiled without input shapes:
// per sample, run on any batch by both backends. Oracles: values worked out by hand, and the
// same model compiled for a fixed batch through input_shapes (the static path the conformance
// suite checks). Models that mix samples are no batch: the proof says why, naming the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "engine/frontend/onnx/importer.h"
#include "engine/lower/sample_batch.h"
#include "engine/runtime/kiln_runtime.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}

// The outputs of one backend: (shape, values) per output.
struct Outputs {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<double>> values;
};
absl::StatusOr<Outputs> RunOn(const CompileResult& compiled, std::vector<loop::HostTensor> inputs,
                            bool native) {
  ModelTensors tensors = MakeModelTensors(compiled);
  std::vector<loop::HostTensor*> in, out;
  for (loop::HostTensor& t : inputs) in.push_back(&t);
  for (loop::HostTensor& t : tensors.outputs) out.push_back(&t);
  absl::Status ran = native ? RunNative(compiled, in, out) : RunModel(compiled, in, out);
  if (!ran.ok()) return ran;
  Outputs outputs;
  for (loop::HostTensor& t : tensors.outputs) {
    outputs.shapes.push_back(t.shape);
    outputs.values.push_back(t.ToDoubles());
  }
  return outputs;
}

absl::StatusOr<CompileResult> Compile(const std::string& model,
                                      std::map<std::string, std::vector<int64_t>> shapes = {}) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.import.input_shapes = std::move(shapes);
  return CompileOnnx(model, options);
}

// y[n] = sum_k (2 x[n, k] + 1): a batch of rows, each reduced on its own.
std::string RowSumModel() {
  OnnxModelBuilder b(11);  // ReduceSum's axes an attribute
  b.Input("x", {-1, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.Output("y");
  b.FloatInitializer("two", {}, {2});
  b.FloatInitializer("one", {}, {1});
  b.Node("Mul", {"x", "two"}, {"twice"}, "double");
  b.Node("Add", {"twice", "one"}, {"shifted"}, "shift");
  auto& sum = b.Node("ReduceSum", {"shifted"}, {"y"}, "row_sum");
  OnnxModelBuilder::IntAttr(sum, "keepdims", 0);
  OnnxModelBuilder::IntsAttr(sum, "axes", {1});
  return b.Bytes();
}

// Rows of 8 bytes: every sample goes through an aligned copy. Natively on 1 thread (one sample
// at a time), 2 (two samples at once, the third alone) and 3 (three at once, one per thread).
TEST(SampleBatchTest, ABatchOfRowsRunsPerSampleOnAnyBatch) {
  absl::StatusOr<CompileResult> compiled = Compile(RowSumModel());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(compiled->lowered->sample_batch.has_value());
  EXPECT_EQ(compiled->lowered->sample_batch->symbol, "N");
  for (int threads : {1, 2, 3}) {
    kiln_rt_set_num_threads(threads);
    for (bool native : {false, true}) {
      absl::StatusOr<Outputs> three = RunOn(*compiled, {Floats({3, 2}, {1, 2, 3, 4, 5, 6})}, native);
      ASSERT_TRUE(three.ok()) << three.status();
      EXPECT_THAT(three->shapes[0], ElementsAre(3));
      EXPECT_THAT(three->values[0], ElementsAre(8, 16, 24));  // 3 + 5, 7 + 9, 11 + 13
      absl::StatusOr<Outputs> none = RunOn(*compiled, {Floats({0, 2}, {})}, native);
      ASSERT_TRUE(none.ok()) << none.status();
      EXPECT_THAT(none->shapes[0], ElementsAre(0));
    }
  }
  kiln_rt_set_num_threads(0);
}

// conv 3x3 (2 -> 3 channels) + relu -> global average pool -> flatten -> gemm (3 -> 4) + a
// per-class offset input shared by all samples -> softmax; a second output that does not
// depend on the batch (the offset doubled).
std::string SmallNetModel() {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 2, 5, 5}, onnx::TensorProto::FLOAT, {"batch"});
  b.Input("offset", {4});
  b.Output("probs");
  b.Output("offset2");
  std::vector<float> w, g;
  for (int i = 0; i < 3 * 2 * 3 * 3; ++i) w.push_back(std::sin(0.7f * i));
  for (int i = 0; i < 4 * 3; ++i) g.push_back(std::cos(1.3f * i));
  b.FloatInitializer("w", {3, 2, 3, 3}, w);
  b.FloatInitializer("bias", {3}, {0.1f, -0.2f, 0.3f});
  b.FloatInitializer("g", {4, 3}, g);
  b.FloatInitializer("two", {}, {2});
  auto& conv = b.Node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
  OnnxModelBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"}, "relu");
  b.Node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  b.Node("Flatten", {"p"}, {"f"}, "flatten");
  auto& gemm = b.Node("Gemm", {"f", "g"}, {"logits"}, "fc");
  OnnxModelBuilder::IntAttr(gemm, "transB", 1);
  b.Node("Add", {"logits", "offset"}, {"shifted"}, "offset_add");
  auto& softmax = b.Node("Softmax", {"shifted"}, {"probs"}, "softmax");
  OnnxModelBuilder::IntAttr(softmax, "axis", 1);
  b.Node("Mul", {"offset", "two"}, {"offset2"}, "offset_twice");
  return b.Bytes();
}

TEST(SampleBatchTest, APerSampleNetworkMatchesTheNetworkCompiledForThatBatch) {
  absl::StatusOr<CompileResult> dynamic = Compile(SmallNetModel());
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  ASSERT_TRUE(dynamic->lowered->sample_batch.has_value());
  EXPECT_THAT(dynamic->lowered->sample_batch->inputs, ElementsAre(true, false));
  EXPECT_THAT(dynamic->lowered->sample_batch->outputs, ElementsAre(true, false));
  loop::HostTensor offset = Floats({4}, {0.5, -0.25, 0, 1});
  kiln_rt_set_num_threads(2);  // a batch of 3: two samples at once, then one with parallel kernels
  for (int64_t batch : {1, 3}) {
    std::vector<double> x;
    for (int64_t i = 0; i < batch * 2 * 5 * 5; ++i) x.push_back(std::sin(0.37 * i) * 2);
    std::vector<loop::HostTensor> inputs = {Floats({batch, 2, 5, 5}, x), offset};
    absl::StatusOr<CompileResult> fixed = Compile(SmallNetModel(), {{"x", {batch, 2, 5, 5}}});
    ASSERT_TRUE(fixed.ok()) << fixed.status();
    ASSERT_FALSE(fixed->lowered->sample_batch.has_value());
    absl::StatusOr<Outputs> expected = RunOn(*fixed, inputs, false);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool native : {false, true}) {
      absl::StatusOr<Outputs> got = RunOn(*dynamic, inputs, native);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_THAT(got->shapes[0], ElementsAre(batch, 4));
      EXPECT_THAT(got->shapes[1], ElementsAre(4));
      EXPECT_THAT(got->values[1], ElementsAre(1, -0.5, 0, 2));
      ASSERT_EQ(got->values[0].size(), expected->values[0].size());
      for (size_t k = 0; k < got->values[0].size(); ++k) {
        EXPECT_NEAR(got->values[0][k], expected->values[0][k], 1e-6) << "batch " << batch << " " << k;
      }
    }
  }
  kiln_rt_set_num_threads(0);
}

TEST(SampleBatchTest, InputsThatAreNotTheModelsShapeFailTheRunOnBothBackends) {
  absl::StatusOr<CompileResult> compiled = Compile(SmallNetModel());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  std::vector<double> x(2 * 2 * 4 * 5, 0.5);
  for (bool native : {false, true}) {
    absl::Status ran = RunOn(*compiled, {Floats({2, 2, 4, 5}, x), Floats({4}, {0, 0, 0, 0})}, native).status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
    EXPECT_THAT(ran.message(), HasSubstr(native ? "KILN_ERROR_SHAPE_MISMATCH" : "float32[batch, 2, 5, 5]"));
  }
}

// A scalar input shared by every sample (its shape pointer is NULL in the C ABI's terms).
TEST(SampleBatchTest, AScalarInputIsSharedByEverySample) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.Input("scale", {});
  b.Output("y");
  b.Node("Mul", {"x", "scale"}, {"y"}, "scaled");
  absl::StatusOr<CompileResult> compiled = Compile(b.Bytes());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_THAT(compiled->lowered->sample_batch->inputs, ElementsAre(true, false));
  for (bool native : {false, true}) {
    absl::StatusOr<Outputs> got =
        RunOn(*compiled, {Floats({2, 2}, {1, 2, 3, 4}), Floats({}, {0.5})}, native);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT(got->shapes[0], ElementsAre(2, 2));
    EXPECT_THAT(got->values[0], ElementsAre(0.5, 1, 1.5, 2));
  }
}

// One-node models over x[N, 3] whose node mixes the samples.
std::string MixingModel(const std::string& op, const std::function<void(onnx::NodeProto&)>& attrs,
                        std::vector<std::string> symbols = {"N"}, std::vector<int64_t> dims = {-1, 3}) {
  OnnxModelBuilder b(13);
  b.Input("x", dims, onnx::TensorProto::FLOAT, symbols);
  b.Output("y");
  auto& node = b.Node(op, {"x"}, {"y"}, "mixer");
  attrs(node);
  return b.Bytes();
}

// The proof's refusals name the node and why; such a model is then no batch and is compiled
// over its symbol instead (symbolic_dims_test.cc), or refused by that path naming the node.
TEST(SampleBatchTest, ModelsThatMixSamplesAreNoBatchAndSayWhy) {
  struct Case {
    std::string model;
    std::string message;
  };
  std::vector<Case> cases = {
      {MixingModel("Softmax", [](onnx::NodeProto& n) { OnnxModelBuilder::IntAttr(n, "axis", 0); }),
       "nn.softmax (si=mixer): it works along the batch axis: it does not compute each sample of "
       "batch dimension N on its own"},
      {MixingModel("ReduceMax", [](onnx::NodeProto& n) { OnnxModelBuilder::IntsAttr(n, "axes", {0}); }),
       "max (si=mixer): its result (1, 3) does not keep the batch on axis 0"},
      {MixingModel("Transpose", [](onnx::NodeProto&) {}),
       "transpose (si=mixer): the value has type (3, N): dimension N on axis 1"},
      // Compiled for one sample, a Squeeze without axes would drop the batch axis too.
      {MixingModel("Squeeze", [](onnx::NodeProto&) {}, {"N"}, {-1, 1, 3}),
       "squeeze (si=mixer): it squeezes every axis of extent 1, the batch's included"},
      {MixingModel("Relu", [](onnx::NodeProto&) {}, {"", "L"}, {2, -1}),
       "input 'x' has type (2, L): dimension L on axis 1 is known only at run time"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<IRModule> imported = ImportOnnxModel(c.model, {});
    ASSERT_TRUE(imported.ok()) << imported.status();
    absl::StatusOr<std::optional<lower::SampleBatch>> batch = lower::FindSampleBatch(*imported);
    ASSERT_FALSE(batch.ok()) << c.message;
    EXPECT_EQ(batch.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(batch.status().message(), HasSubstr(c.message));
  }
  // Over its symbol: a softmax down the column of x[N, 3].
  absl::StatusOr<CompileResult> softmax = Compile(cases[0].model);
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  EXPECT_FALSE(softmax->lowered->sample_batch.has_value());
  ASSERT_TRUE(softmax->lowered->symbolic.has_value());
  for (bool native : {false, true}) {
    absl::StatusOr<Outputs> got = RunOn(*softmax, {Floats({2, 3}, {0, 1, 5, 0, 1, 5})}, native);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT(got->shapes[0], ElementsAre(2, 3));
    EXPECT_THAT(got->values[0], ElementsAre(0.5, 0.5, 0.5, 0.5, 0.5, 0.5));
  }
  // Refused by both: which axes a squeeze without axes drops depends on N.
  CompileOptions options;
  CompileFailure failure;
  absl::StatusOr<CompileResult> squeeze = CompileOnnx(cases[3].model, options, &failure);
  ASSERT_FALSE(squeeze.ok());
  EXPECT_EQ(squeeze.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(squeeze.status().message(), HasSubstr("squeeze (si=mixer)"));
  EXPECT_THAT(squeeze.status().message(), HasSubstr("a squeeze without axes"));
  // Two run-time dims that broadcast against each other: the sum's rows are neither.
  OnnxModelBuilder b(13);
  b.Input("a", {-1, 3}, onnx::TensorProto::FLOAT, {"N"});
  b.Input("b", {-1, 3}, onnx::TensorProto::FLOAT, {"M"});
  b.Output("y");
  b.Node("Add", {"a", "b"}, {"y"}, "sum");
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("si=sum"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("not a symbol of the model's inputs"));
}

}  // namespace
}  // namespace kiln::driver
