// TfIdfVectorizer on integer input (tfidf_vectorizer_converter.cc). The pool holds unigrams 2
// and 3 and the bigram (1, 2); over x = (1, 2, 1, 3, 2) unigram 2 occurs twice and 3 once, and
// with max_skip_count 1 the bigram matches once adjacent (positions 0, 1) and once with one
// item skipped (positions 2, 4): counts (2, 1, 2), worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

std::string Model(std::vector<int64_t> shape, const std::string& mode, std::vector<float> weights) {
  OnnxModelBuilder b(9);
  b.Input("x", shape, onnx::TensorProto::INT64).Output("y");
  onnx::NodeProto& node = b.Node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  OnnxModelBuilder::IntAttr(node, "min_gram_length", 1);
  OnnxModelBuilder::IntAttr(node, "max_gram_length", 2);
  OnnxModelBuilder::IntAttr(node, "max_skip_count", 1);
  OnnxModelBuilder::StringAttr(node, "mode", mode);
  OnnxModelBuilder::IntsAttr(node, "ngram_counts", {0, 2});
  OnnxModelBuilder::IntsAttr(node, "ngram_indexes", {0, 1, 2});
  OnnxModelBuilder::IntsAttr(node, "pool_int64s", {2, 3, 1, 2});
  if (!weights.empty()) OnnxModelBuilder::FloatsAttr(node, "weights", weights);
  return b.Bytes();
}

loop::HostTensor Ints(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kInt64, std::move(shape), values);
}

TEST(TfIdfVectorizerTest, CountsUnigramsOnceAndBigramsPerSkip) {
  auto tf = RunAll(Model({5}, "TF", {}), {Ints({5}, {1, 2, 1, 3, 2})});
  ASSERT_EQ(tf.size(), 1u);
  EXPECT_THAT(tf[0], ElementsAre(2, 1, 2));
  // IDF: the weight wherever the count is positive; TF-IDF: count times weight.
  EXPECT_THAT(RunAll(Model({5}, "IDF", {0.5f, 2, 4}), {Ints({5}, {1, 2, 1, 3, 2})})[0],
              ElementsAre(0.5, 2, 4));
  EXPECT_THAT(RunAll(Model({5}, "TFIDF", {0.5f, 2, 4}), {Ints({5}, {1, 2, 1, 3, 2})})[0],
              ElementsAre(1, 2, 8));
}

TEST(TfIdfVectorizerTest, EachRowOfABatchIsCountedAlone) {
  auto tf = RunAll(Model({2, 5}, "TF", {}), {Ints({2, 5}, {1, 2, 1, 3, 2, 3, 3, 3, 3, 3})});
  ASSERT_EQ(tf.size(), 1u);
  EXPECT_THAT(tf[0], ElementsAre(2, 1, 2, 0, 5, 0));
}

TEST(TfIdfVectorizerTest, AnUnknownModeIsAnError) {
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(Model({5}, "BM25", {}), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              HasSubstr("ONNX node 'tfidf' (#0, TfIdfVectorizer): attribute 'mode' is 'BM25'"));
}

}  // namespace
}  // namespace kiln::driver
