// The sequence operators (engine/frontend/onnx/sequence_converters.cc) on sequences known at
// import time: negative positions, insert and erase, ConcatFromSequence with a new axis,
// SplitToSequence by a scalar split whose last piece is shorter, and positions out of range.
// Expected values follow from the inputs by the operators' definitions, worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

onnx::TensorProto& Int64Initializer(OnnxModelBuilder& b, const std::string& name,
                                    std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name(name);
  init->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) init->add_dims(d);
  for (int64_t v : values) init->add_int64_data(v);
  return *init;
}

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, shape, values);
}

// [a, b, c] -> insert d at -1 (before c) -> [a, b, d, c] -> erase 0 -> [b, d, c] -> at -2 = d.
TEST(SequenceOpsTest, InsertEraseAndAtWithNegativePositions) {
  OnnxModelBuilder b;
  for (const char* name : {"a", "b", "c", "d"}) b.Input(name, {2});
  b.Output("out").Output("len");
  Int64Initializer(b, "minus_one", {}, {-1});
  Int64Initializer(b, "zero", {}, {0});
  Int64Initializer(b, "minus_two", {}, {-2});
  b.Node("SequenceConstruct", {"a", "b", "c"}, {"s1"}, "construct");
  b.Node("SequenceInsert", {"s1", "d", "minus_one"}, {"s2"}, "insert");
  b.Node("SequenceErase", {"s2", "zero"}, {"s3"}, "erase");
  b.Node("SequenceAt", {"s3", "minus_two"}, {"out"}, "at");
  b.Node("SequenceLength", {"s3"}, {"len"}, "length");
  auto out = RunAll(b.Bytes(), {Floats({2}, {1, 2}), Floats({2}, {3, 4}), Floats({2}, {5, 6}),
                                Floats({2}, {7, 8})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(7, 8));
  EXPECT_THAT(out[1], ElementsAre(3));
}

// x (5, 2) split along axis 0 into pieces of 2: (2, 2), (2, 2) and the shorter (1, 2). The
// first two are stacked on a new last axis; the third is read alone.
TEST(SequenceOpsTest, SplitByAScalarThenConcatOnANewAxis) {
  OnnxModelBuilder b;
  b.Input("x", {5, 2}).Output("stacked").Output("last");
  Int64Initializer(b, "two", {}, {2});
  Int64Initializer(b, "minus_one", {}, {-1});
  b.Node("SplitToSequence", {"x", "two"}, {"pieces"}, "split");
  b.Node("SequenceErase", {"pieces", "minus_one"}, {"firsts"}, "drop_last");
  onnx::NodeProto& concat = b.Node("ConcatFromSequence", {"firsts"}, {"stacked"}, "concat");
  OnnxModelBuilder::IntAttr(concat, "axis", -1);
  OnnxModelBuilder::IntAttr(concat, "new_axis", 1);
  b.Node("SequenceAt", {"pieces", "minus_one"}, {"last"}, "at");
  auto out = RunAll(b.Bytes(), {Floats({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_EQ(out.size(), 2u);
  // stacked[i][j][k] = piece k's [i][j]: piece 0 = [[0, 1], [2, 3]], piece 1 = [[4, 5], [6, 7]].
  EXPECT_THAT(out[0], ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  EXPECT_THAT(out[1], ElementsAre(8, 9));
}

TEST(SequenceOpsTest, PositionsOutsideTheSequenceAreErrorsNamingTheNode) {
  OnnxModelBuilder b;
  b.Input("a", {2}).Output("out");
  Int64Initializer(b, "three", {}, {3});
  b.Node("SequenceConstruct", {"a", "a"}, {"s"}, "construct");
  b.Node("SequenceAt", {"s", "three"}, {"out"}, "at_three");
  CompileOptions options;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
  EXPECT_THAT(failure.status.message(), HasSubstr("at_three"));
  EXPECT_THAT(failure.status.message(), HasSubstr("position 3 is outside [-2, 1]"));
}

}  // namespace
}  // namespace kiln::driver
