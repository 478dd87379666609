// String tensors through both backends: Cast to and from STRING and StringNormalizer. The
// expected strings of the float casts are what NumPy prints for the same float32 values (the
// ONNX tests' oracle: str(np.float32(x)), checked with NumPy 1.24), the rest worked out by hand
// from the ONNX operator specs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/driver/bounded_outputs.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

std::string CastModel(int64_t count, int32_t from, int32_t to) {
  OnnxModelBuilder b(13);
  b.Input("x", {count}, from).Output("y", {count}, to);
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"x"}, {"y"}, "cast"), "to", to);
  return b.Bytes();
}

// Each backend's string outputs of `model` on `inputs`.
std::vector<std::vector<std::string>> StringsOfEachBackend(const std::string& model,
                                                            const std::vector<loop::HostTensor>& inputs) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(model);
  if (!compiled.ok()) return {};
  std::vector<std::vector<std::string>> results;
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> outputs = RunBackendTensors(*compiled, inputs, native);
    EXPECT_TRUE(outputs.ok()) << (native ? "native: " : "interpreter: ") << outputs.status();
    if (!outputs.ok()) return {};
    results.push_back((*outputs)[0].Strings());
  }
  return results;
}

TEST(StringOpsTest, FloatsPrintAsNumPyPrintsThem) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<double> values = {0.1,    1.0,    1e-5,         123456789.0, -0.0, 0.0001,
                                3.4028235e38, 1234.5, std::nan(""), -inf,  std::ldexp(1.0, -96)};
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {11}, values);
  auto results = StringsOfEachBackend(
      CastModel(11, onnx::TensorProto::FLOAT, onnx::TensorProto::STRING), {x});
  ASSERT_EQ(results.size(), 2u);
  // float32(0.0001) is 9.99999975e-05, below NumPy's positional range: "1e-04". Next to a power
  // of two the shortest string is not always the nearest of its length: 2^-96 prints as
  // "1.2621775e-29", where rounding to 8 digits gives 1.2621774e-29, which reads back wrong.
  std::vector<std::string> expected = {"0.1",    "1.0",  "1e-05",  "123456790.0",  "-0.0", "1e-04",
                                       "3.4028235e+38", "1234.5", "NaN", "-INF", "1.2621775e-29"};
  EXPECT_THAT(results[0], ElementsAreArray(expected)) << "interpreter";
  EXPECT_THAT(results[1], ElementsAreArray(expected)) << "native";
}

TEST(StringOpsTest, IntegersPrintInDecimal) {
  loop::HostTensor x = loop::HostTensor::FromValues<int64_t>(
      DataType::kInt64, {3}, {0, -9223372036854775807 - 1, 42});
  auto results = StringsOfEachBackend(
      CastModel(3, onnx::TensorProto::INT64, onnx::TensorProto::STRING), {x});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& strings : results) {
    EXPECT_THAT(strings, ElementsAre("0", "-9223372036854775808", "42"));
  }
}

TEST(StringOpsTest, StringsReadAsNumbers) {
  loop::HostTensor x = loop::HostTensor::FromStrings(
      {7}, {"0.5", " 2.25", "INF", "-INF", "NaN", "no number", "1e3"});
  absl::StatusOr<CompileResult> compiled =
      CompileForAllBackends(CastModel(7, onnx::TensorProto::STRING, onnx::TensorProto::FLOAT));
  ASSERT_TRUE(compiled.ok());
  const double inf = std::numeric_limits<double>::infinity();
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<std::vector<double>>> floats = RunBackend(*compiled, {x}, native);
    ASSERT_TRUE(floats.ok()) << floats.status();
    const std::vector<double>& f = (*floats)[0];
    ASSERT_EQ(f.size(), 7u);
    EXPECT_EQ(f[0], 0.5);
    EXPECT_EQ(f[1], 2.25);
    EXPECT_EQ(f[2], inf);
    EXPECT_EQ(f[3], -inf);
    EXPECT_TRUE(std::isnan(f[4]));
    EXPECT_TRUE(std::isnan(f[5])) << "text without a number reads as NaN";
    EXPECT_EQ(f[6], 1000.0);
  }
  loop::HostTensor ints = loop::HostTensor::FromStrings({3}, {"42", "-7", "x"});
  EXPECT_THAT(RunAll(CastModel(3, onnx::TensorProto::STRING, onnx::TensorProto::INT32), {ints})[0],
              ElementsAre(42, -7, 0));
}

std::string NormalizerModel(std::vector<int64_t> in_shape, std::vector<int64_t> out_shape,
                            const std::string& action, int64_t case_sensitive,
                            std::vector<std::string> stopwords) {
  OnnxModelBuilder b(10);
  b.Input("x", in_shape, onnx::TensorProto::STRING).Output("y", out_shape, onnx::TensorProto::STRING);
  onnx::NodeProto& node = b.Node("StringNormalizer", {"x"}, {"y"}, "normalize");
  OnnxModelBuilder::StringAttr(node, "case_change_action", action);
  OnnxModelBuilder::IntAttr(node, "is_case_sensitive", case_sensitive);
  if (!stopwords.empty()) OnnxModelBuilder::StringsAttr(node, "stopwords", stopwords);
  return b.Bytes();
}

TEST(StringOpsTest, StringNormalizerDropsStopwordsThenChangesCase) {
  loop::HostTensor x = loop::HostTensor::FromStrings({1, 4}, {"Monday", "tuesday", "MONDAY", "wed"});
  // Case-insensitive: every spelling of monday goes.
  auto upper = StringsOfEachBackend(NormalizerModel({1, 4}, {1, 2}, "UPPER", 0, {"monday"}), {x});
  ASSERT_EQ(upper.size(), 2u);
  for (const auto& strings : upper) EXPECT_THAT(strings, ElementsAre("TUESDAY", "WED"));
  // Case-sensitive: only the exact "Monday" goes.
  auto lower = StringsOfEachBackend(NormalizerModel({1, 4}, {1, 3}, "LOWER", 1, {"Monday"}), {x});
  ASSERT_EQ(lower.size(), 2u);
  for (const auto& strings : lower) EXPECT_THAT(strings, ElementsAre("tuesday", "monday", "wed"));
}

TEST(StringOpsTest, StringNormalizerGivesOneEmptyStringWhenEveryWordGoes) {
  std::string model = NormalizerModel({2}, {1}, "NONE", 1, {"a", "b"});
  auto empty = StringsOfEachBackend(model, {loop::HostTensor::FromStrings({2}, {"b", "a"})});
  ASSERT_EQ(empty.size(), 2u);
  for (const auto& strings : empty) EXPECT_THAT(strings, ElementsAre(""));
  // One word left fills the same declared length.
  auto one = StringsOfEachBackend(model, {loop::HostTensor::FromStrings({2}, {"c", "a"})});
  ASSERT_EQ(one.size(), 2u);
  for (const auto& strings : one) EXPECT_THAT(strings, ElementsAre("c"));
}

TEST(StringOpsTest, AKeptCountOtherThanTheDeclaredOneFailsTheRun) {
  absl::StatusOr<CompileResult> compiled =
      CompileForAllBackends(NormalizerModel({3}, {2}, "NONE", 1, {"x"}));
  ASSERT_TRUE(compiled.ok());
  loop::HostTensor x = loop::HostTensor::FromStrings({3}, {"a", "b", "c"});
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> outputs = RunBackendTensors(*compiled, {x}, native);
    ASSERT_FALSE(outputs.ok()) << (native ? "native" : "interpreter");
    EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(StringOpsTest, CastsThroughAStringAreNeverMerged) {
  // bool -> int32 -> string prints the integer ("1"); merged into one cast it would be a cast
  // from bool, which strings do not take.
  OnnxModelBuilder b(13);
  b.Input("x", {2}, onnx::TensorProto::BOOL).Output("y", {2}, onnx::TensorProto::STRING);
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"x"}, {"i"}, "to_int"), "to", onnx::TensorProto::INT32);
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"i"}, {"y"}, "to_text"), "to", onnx::TensorProto::STRING);
  auto results = StringsOfEachBackend(
      b.Bytes(), {loop::HostTensor::FromValues<uint8_t>(DataType::kBool, {2}, {1, 0})});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& strings : results) EXPECT_THAT(strings, ElementsAre("1", "0"));
}

TEST(StringOpsTest, ABoundedStringOutputKeepsItsStringsWhenCut) {
  // Compress without a declared output shape: a bounded output, cut after the run.
  OnnxModelBuilder b(13);
  b.Input("x", {3}, onnx::TensorProto::STRING).Input("keep", {3}, onnx::TensorProto::BOOL).Output("y");
  OnnxModelBuilder::IntAttr(b.Node("Compress", {"x", "keep"}, {"y"}, "pick"), "axis", 0);
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(b.Bytes());
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(compiled->lowered->bounded_outputs.size(), 1u);
  std::vector<loop::HostTensor> inputs = {
      loop::HostTensor::FromStrings({3}, {"a", "bb", "ccc"}),
      loop::HostTensor::FromValues<uint8_t>(DataType::kBool, {3}, {1, 0, 1})};
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<loop::HostTensor>> outputs = RunBackendTensors(*compiled, inputs, native);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    ASSERT_TRUE(CutBoundedOutputs(compiled->lowered->bounded_outputs, &*outputs).ok());
    EXPECT_THAT((*outputs)[0].Strings(), ElementsAre("a", "ccc")) << (native ? "native" : "interpreter");
  }
}

// Neither per sample nor over its symbol (the interpreter's symbolic runs keep no string arena).
TEST(StringOpsTest, AModelWithStringsAndARunTimeDimIsRefused) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 2}, onnx::TensorProto::FLOAT, {"N"}).Output("y");
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"x"}, {"y"}, "to_text"), "to", onnx::TensorProto::STRING);
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), HasSubstr("string tensors, which need fixed input shapes"));
}

TEST(StringOpsTest, ArithmeticOnStringsIsAnImportErrorNamingTheNode) {
  OnnxModelBuilder b(13);
  b.Input("x", {2}, onnx::TensorProto::STRING).Output("y");
  b.Node("Add", {"x", "x"}, {"y"}, "sum");
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), HasSubstr("ONNX node 'sum' (#0, Add)"));
  EXPECT_THAT(failure.status.message(), HasSubstr("does not take string tensors"));
}

TEST(StringOpsTest, CastsBetweenStringsAndFloat16AreAnImportError) {
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(CastModel(2, onnx::TensorProto::FLOAT16, onnx::TensorProto::STRING),
                           options, &failure)
                   .ok());
  EXPECT_THAT(failure.status.message(), HasSubstr("casts between string and float16"));
}

}  // namespace
}  // namespace kiln::driver
