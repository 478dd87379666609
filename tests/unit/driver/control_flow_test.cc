// If, Loop and Scan (engine/frontend/onnx/control_flow.h) on what the ONNX backend tests leave
// out: an If whose condition is known only at run time (a branch of main in native code and
// the interpreter, only the taken branch's kernels run), a Loop that stops where its condition turns false, a reverse Scan, and loops Kiln
// refuses to unroll. Expected values are the iterations written out by hand.
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

onnx::ValueInfoProto* Value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                            const std::string& name) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  return v;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(op);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

onnx::GraphProto* GraphAttr(onnx::NodeProto& node, const std::string& name) {
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::GRAPH);
  attr->mutable_g()->set_name(name);
  return attr->mutable_g();
}

loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, shape, values);
}

// cond is a model input with no value at import: main branches at run time.
TEST(ControlFlowTest, IfWithARunTimeConditionSelectsBetweenBranches) {
  OnnxModelBuilder b;
  b.Input("cond", {}, onnx::TensorProto::BOOL).Input("x", {3}).Output("y");
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"y"}, "branch");
  onnx::GraphProto* then_branch = GraphAttr(node, "then_branch");
  AddNode(then_branch, "Neg", {"x"}, {"negated"});  // reads x from the enclosing graph
  Value(then_branch->mutable_output(), "negated");
  onnx::GraphProto* else_branch = GraphAttr(node, "else_branch");
  AddNode(else_branch, "Add", {"x", "x"}, {"doubled"});
  Value(else_branch->mutable_output(), "doubled");
  loop::HostTensor x = Floats({3}, {1, -2, 3});
  auto taken = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kBool, {}, {1}), x});
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_THAT(taken[0], ElementsAre(-1, 2, -3));
  auto other = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kBool, {}, {0}), x});
  ASSERT_EQ(other.size(), 1u);
  EXPECT_THAT(other[0], ElementsAre(2, -4, 6));
}

// Two outputs per branch; the else-branch gives the enclosing graph's x through an Identity.
TEST(ControlFlowTest, IfWithARunTimeConditionGivesEveryOutputOfTheTakenBranch) {
  OnnxModelBuilder b;
  b.Input("cond", {1}, onnx::TensorProto::BOOL).Input("x", {3}).Output("a").Output("b");
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"a", "b"}, "branch");
  onnx::GraphProto* then_branch = GraphAttr(node, "then_branch");
  AddNode(then_branch, "Neg", {"x"}, {"negated"});
  AddNode(then_branch, "Add", {"x", "x"}, {"doubled"});
  Value(then_branch->mutable_output(), "negated");
  Value(then_branch->mutable_output(), "doubled");
  onnx::GraphProto* else_branch = GraphAttr(node, "else_branch");
  AddNode(else_branch, "Identity", {"x"}, {"same"});
  AddNode(else_branch, "Mul", {"x", "x"}, {"squared"});
  Value(else_branch->mutable_output(), "same");
  Value(else_branch->mutable_output(), "squared");
  loop::HostTensor x = Floats({3}, {1, -2, 3});
  auto taken = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kBool, {1}, {1}), x});
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_THAT(taken[0], ElementsAre(-1, 2, -3));
  EXPECT_THAT(taken[1], ElementsAre(2, -4, 6));
  auto other = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kBool, {1}, {0}), x});
  ASSERT_EQ(other.size(), 2u);
  EXPECT_THAT(other[0], ElementsAre(1, -2, 3));
  EXPECT_THAT(other[1], ElementsAre(1, 4, 9));
}

// Loop(M = 10, cond = true, acc): acc += x while iteration < 2 (the body's condition), so it
// runs 3 times (iterations 0, 1, 2: cond_out false after the third) and scans acc each time.
TEST(ControlFlowTest, LoopStopsWhereItsConditionTurnsFalse) {
  OnnxModelBuilder b;
  b.Input("x", {2}).Input("acc", {2}).Output("final").Output("history");
  auto* m = b.model().mutable_graph()->add_initializer();
  m->set_name("m");
  m->set_data_type(onnx::TensorProto::INT64);
  m->add_int64_data(10);
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name("true");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  auto* two = b.model().mutable_graph()->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::INT64);
  two->add_int64_data(2);
  onnx::NodeProto& node = b.Node("Loop", {"m", "true", "acc"}, {"final", "history"}, "loop");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Less", {"i", "two"}, {"cond_out"});
  AddNode(body, "Add", {"acc_in", "x"}, {"acc_out"});
  AddNode(body, "Identity", {"acc_out"}, {"scan_out"});
  for (const char* out : {"cond_out", "acc_out", "scan_out"}) Value(body->mutable_output(), out);
  auto out = RunAll(b.Bytes(), {Floats({2}, {1, 10}), Floats({2}, {0, 0})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(3, 30));
  EXPECT_THAT(out[1], ElementsAre(1, 10, 2, 20, 3, 30));
}

// Loop(M = 3) whose body branches on a run-time flag: acc doubles, or gains x. Unrolled, each
// iteration's If reads the last one's result in both branches: each is computed once, before
// the next If.
TEST(ControlFlowTest, AnUnrolledLoopBranchingOnARunTimeFlag) {
  OnnxModelBuilder b;
  b.Input("flag", {}, onnx::TensorProto::BOOL).Input("x", {2}).Input("acc", {2}).Output("final");
  auto* m = b.model().mutable_graph()->add_initializer();
  m->set_name("m");
  m->set_data_type(onnx::TensorProto::INT64);
  m->add_int64_data(3);
  onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "loop");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  onnx::NodeProto* branch = AddNode(body, "If", {"flag"}, {"acc_out"});
  onnx::GraphProto* then_branch = GraphAttr(*branch, "then_branch");
  AddNode(then_branch, "Add", {"acc_in", "acc_in"}, {"doubled"});
  Value(then_branch->mutable_output(), "doubled");
  onnx::GraphProto* else_branch = GraphAttr(*branch, "else_branch");
  AddNode(else_branch, "Add", {"acc_in", "x"}, {"grown"});
  Value(else_branch->mutable_output(), "grown");
  for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
  auto flag = [](bool value) {
    return loop::HostTensor::FromDoubles(DataType::kBool, {}, {value ? 1.0 : 0.0});
  };
  auto doubled = RunAll(b.Bytes(), {flag(true), Floats({2}, {1, 10}), Floats({2}, {1, -2})});
  ASSERT_EQ(doubled.size(), 1u);
  EXPECT_THAT(doubled[0], ElementsAre(8, -16));
  auto grown = RunAll(b.Bytes(), {flag(false), Floats({2}, {1, 10}), Floats({2}, {1, -2})});
  ASSERT_EQ(grown.size(), 1u);
  EXPECT_THAT(grown[0], ElementsAre(4, 28));
}

// A running sum over the rows of x read backwards (scan_input_directions 1), its outputs stored
// forwards: the k-th scan output is the sum of the last k + 1 rows.
TEST(ControlFlowTest, ReverseScanReadsItsInputBackwards) {
  OnnxModelBuilder b;
  b.Input("init", {2}).Input("x", {3, 2}).Output("sum").Output("partial");
  onnx::NodeProto& node = b.Node("Scan", {"init", "x"}, {"sum", "partial"}, "scan");
  OnnxModelBuilder::IntAttr(node, "num_scan_inputs", 1);
  OnnxModelBuilder::IntsAttr(node, "scan_input_directions", {1});
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"sum_in", "row"}) Value(body->mutable_input(), in);
  AddNode(body, "Add", {"sum_in", "row"}, {"sum_out"});
  AddNode(body, "Identity", {"sum_out"}, {"scan_out"});
  for (const char* out : {"sum_out", "scan_out"}) Value(body->mutable_output(), out);
  auto out = RunAll(b.Bytes(), {Floats({2}, {0, 0}), Floats({3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(9, 12));
  EXPECT_THAT(out[1], ElementsAre(5, 6, 8, 10, 9, 12));
}

TEST(ControlFlowTest, LoopsKilnCannotUnrollAreErrorsNamingTheNode) {
  for (int64_t trip : {int64_t{-1}, int64_t{1'000'000}}) {
    OnnxModelBuilder b;
    b.Input("acc", {1}).Output("final");
    if (trip < 0) {
      b.Input("m", {}, onnx::TensorProto::INT64);  // known only at run time
    } else {
      auto* m = b.model().mutable_graph()->add_initializer();
      m->set_name("m");
      m->set_data_type(onnx::TensorProto::INT64);
      m->add_int64_data(trip);
    }
    onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "long_loop");
    onnx::GraphProto* body = GraphAttr(node, "body");
    for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
    AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
    AddNode(body, "Identity", {"acc_in"}, {"acc_out"});
    for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
    EXPECT_THAT(failure.status.message(), HasSubstr("long_loop"));
    EXPECT_THAT(failure.status.message(),
                HasSubstr(trip < 0 ? "trip count M must be known at import" : "more than the 4096"));
  }
}

}  // namespace
}  // namespace kiln::driver
