// The sequence operators (engine/frontend/onnx/sequence_converters.cc) on sequences known at
// import time: negative positions, insert and erase, ConcatFromSequence with a new axis,
// SplitToSequence by a scalar split whose last piece is shorter, and positions out of range;
// sequences as graph inputs and outputs (their element shapes given), and SequenceMap.
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

// The same chain with the three positions given at run time (graph inputs): every tensor of one
// type, so each slot picks among them. Positions -1, 0, -2 give d as above; 2, 1, 0 give
// [a, b, d, c] -> [a, d, c] -> a; a position outside the sequence fails the run.
TEST(SequenceOpsTest, PositionsGivenAtRunTimePickAmongTensorsOfOneType) {
  OnnxModelBuilder b;
  for (const char* name : {"a", "b", "c", "d"}) b.Input(name, {2});
  for (const char* name : {"p_insert", "p_erase", "p_at"}) b.Input(name, {}, onnx::TensorProto::INT64);
  b.Output("out").Output("len");
  b.Node("SequenceConstruct", {"a", "b", "c"}, {"s1"}, "construct");
  b.Node("SequenceInsert", {"s1", "d", "p_insert"}, {"s2"}, "insert");
  b.Node("SequenceErase", {"s2", "p_erase"}, {"s3"}, "erase");
  b.Node("SequenceAt", {"s3", "p_at"}, {"out"}, "at");
  b.Node("SequenceLength", {"s3"}, {"len"}, "length");
  const std::string model = b.Bytes();
  auto inputs = [](int64_t insert, int64_t erase, int64_t at) {
    auto position = [](int64_t p) {
      return loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(p)});
    };
    return std::vector<loop::HostTensor>{Floats({2}, {1, 2}), Floats({2}, {3, 4}),
                                         Floats({2}, {5, 6}), Floats({2}, {7, 8}),
                                         position(insert), position(erase), position(at)};
  };
  auto out = RunAll(model, inputs(-1, 0, -2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(7, 8));
  EXPECT_THAT(out[1], ElementsAre(3));
  EXPECT_THAT(RunAll(model, inputs(2, 1, 0))[0], ElementsAre(1, 2));
  EXPECT_THAT(RunAll(model, inputs(3, 3, 2))[0], ElementsAre(5, 6));  // appended d erased
  std::vector<absl::Status> failures = RunFailures(model, inputs(4, 0, 0));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(),
              HasSubstr("position (input 2) must lie in [-3, 3] for a sequence of 3 tensors"));
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

namespace kiln::driver {
namespace {

// A graph input (or output) `name` of type sequence(tensor(float)) on `b`'s graph.
void SequenceValue(onnx::ValueInfoProto* value, const std::string& name) {
  value->set_name(name);
  value->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
}

// A sequence graph input is a tuple of tensor parameters `s.0`, `s.1`, ... whose shapes the
// options give; a sequence graph output comes back as its elements among the outputs.
TEST(SequenceOpsTest, SequenceGraphInputsAndOutputsAreTheirElements) {
  OnnxModelBuilder b(16);
  SequenceValue(b.model().mutable_graph()->add_input(), "s");
  b.Input("t", {1});
  SequenceValue(b.model().mutable_graph()->add_output(), "s2");
  b.Output("n");
  b.Node("SequenceInsert", {"s", "t"}, {"s2"}, "insert");
  b.Node("SequenceLength", {"s2"}, {"n"}, "length");
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.import.input_sequence_shapes["s"] = {{2}, {3}};
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (bool native : {false, true}) {
    ModelTensors tensors = MakeModelTensors(*compiled);
    ASSERT_EQ(tensors.inputs.size(), 3u);
    ASSERT_EQ(tensors.outputs.size(), 4u);  // the three elements of s2, then n
    tensors.inputs[0] = Floats({2}, {1, 2});
    tensors.inputs[1] = Floats({3}, {3, 4, 5});
    tensors.inputs[2] = Floats({1}, {6});
    std::vector<loop::HostTensor*> in, out;
    for (auto& t : tensors.inputs) in.push_back(&t);
    for (auto& t : tensors.outputs) out.push_back(&t);
    absl::Status ran = native ? RunNative(*compiled, in, out) : RunModel(*compiled, in, out);
    ASSERT_TRUE(ran.ok()) << ran;
    EXPECT_THAT(tensors.outputs[0].ToDoubles(), ElementsAre(1, 2));
    EXPECT_THAT(tensors.outputs[1].ToDoubles(), ElementsAre(3, 4, 5));
    EXPECT_THAT(tensors.outputs[2].ToDoubles(), ElementsAre(6));
    EXPECT_THAT(tensors.outputs[3].ToDoubles(), ElementsAre(3));
  }
  // Without the element shapes the sequence's length is unknown: an error saying what to give.
  CompileOptions bare;
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(b.Bytes(), bare, &failure).ok());
  EXPECT_THAT(failure.status.message(), HasSubstr("graph input 's' is a sequence: give its element shapes"));
}

// SequenceMap expands through ONNX's own function body: a Loop whose body reads the mapped
// sequence from the enclosing graph (libonnx leaves such reads unrenamed; the importer renames
// them). This once crashed inside libonnx, which was handed no type for the sequence.
TEST(SequenceOpsTest, SequenceMapOverAConstructedSequence) {
  OnnxModelBuilder b(17);
  b.Input("a", {2}).Input("b", {2}).Output("y");
  b.Node("SequenceConstruct", {"a", "b"}, {"s"}, "construct");
  onnx::NodeProto& map = b.Node("SequenceMap", {"s"}, {"negated"}, "map");
  onnx::AttributeProto* body = map.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* g = body->mutable_g();
  g->set_name("negate");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* y = g->add_output();
  y->set_name("x_neg");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::NodeProto* neg = g->add_node();
  neg->set_op_type("Neg");
  neg->add_input("x");
  neg->add_output("x_neg");
  onnx::NodeProto& concat = b.Node("ConcatFromSequence", {"negated"}, {"y"}, "concat");
  OnnxModelBuilder::IntAttr(concat, "axis", 0);
  auto out = RunAll(b.Bytes(), {Floats({2}, {1, 2}), Floats({2}, {3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAre(-1, -2, -3, -4));
}

}  // namespace
}  // namespace kiln::driver
