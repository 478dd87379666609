// If, Loop and Scan (engine/frontend/onnx/control_flow.h) on what the ONNX backend tests leave
// out: an If whose condition is known only at run time (a branch of main in native code and
// the interpreter, only the taken branch's kernels run), a Loop that stops where its condition
// turns false, a reverse Scan, and Loops known only at run time (while loops of main: trip
// counts and conditions given when the model runs, scan outputs of declared length, swapped
// state) and what Kiln refuses of them. Expected values are the iterations written out by hand.
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

void Int64Initializer(OnnxModelBuilder& b, const std::string& name, int64_t value) {
  auto* tensor = b.model().mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_int64_data(value);
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
  Int64Initializer(b, "m", 10);
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name("true");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  Int64Initializer(b, "two", 2);
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
  Int64Initializer(b, "m", 3);
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

// acc = acc * 2 + iteration, M times (M an input known only at run time): a while loop of main.
// By hand from acc = 1: M = 0 gives 1; M = 3 gives 2, 5, 12.
TEST(ControlFlowTest, ALoopOfARunTimeTripCountRunsAsALoop) {
  OnnxModelBuilder b;
  b.Input("m", {}, onnx::TensorProto::INT64).Input("acc", {1}).Output("final");
  onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "doubling");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"acc_in", "acc_in"}, {"twice"});
  onnx::NodeProto* cast = AddNode(body, "Cast", {"i"}, {"i_float"});
  OnnxModelBuilder::IntAttr(*cast, "to", onnx::TensorProto::FLOAT);
  AddNode(body, "Add", {"twice", "i_float"}, {"acc_out"});
  for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
  auto trips = [](int64_t m) {
    return loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(m)});
  };
  for (auto [m, expected] : {std::pair<int64_t, double>{0, 1}, {1, 2}, {3, 12}, {-2, 1}}) {
    auto out = RunAll(b.Bytes(), {trips(m), Floats({1}, {1})});
    ASSERT_EQ(out.size(), 1u) << "M = " << m;
    EXPECT_THAT(out[0], ElementsAre(expected)) << "M = " << m;
  }
}

// More iterations than Kiln unrolls (a constant M of 100): a loop too. acc += 1 each time.
TEST(ControlFlowTest, ALongLoopIsNotUnrolled) {
  OnnxModelBuilder b;
  b.Input("acc", {2}).Output("final");
  Int64Initializer(b, "m", 100);
  auto* one = b.model().mutable_graph()->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_float_data(1);
  onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "counting");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"acc_in", "one"}, {"acc_out"});
  for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // One add kernel in the loop, not a hundred.
  int adds = 0;
  for (const lower::LoweredKernel& kernel : compiled->lowered->kernels) {
    adds += kernel.name.find("add") != std::string::npos;
  }
  EXPECT_LE(adds, 2);
  auto out = RunAll(b.Bytes(), {Floats({2}, {0.5, -7})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAre(100.5, 93));
}

// Loop(M = 10, cond, acc) whose body continues while iteration < limit (an input), with a scan
// output the model declares 3 rows long: limit = 2 runs iterations 0, 1, 2 (3 rows, by hand);
// limit = 4 runs 5, and the run fails naming the node instead of writing past the rows.
TEST(ControlFlowTest, ARunTimeLoopsScanOutputHasTheDeclaredRowsOrTheRunFails) {
  OnnxModelBuilder b;
  b.Input("limit", {}, onnx::TensorProto::INT64).Input("go", {}, onnx::TensorProto::BOOL)
      .Input("x", {2}).Output("final").Output("history", {3, 2}, onnx::TensorProto::FLOAT);
  Int64Initializer(b, "m", 10);
  onnx::NodeProto& node = b.Node("Loop", {"m", "go", "x"}, {"final", "history"}, "scanning");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Less", {"i", "limit"}, {"cond_out"});
  AddNode(body, "Add", {"acc_in", "x"}, {"acc_out"});
  AddNode(body, "Identity", {"acc_out"}, {"scan_out"});
  for (const char* out : {"cond_out", "acc_out", "scan_out"}) Value(body->mutable_output(), out);
  auto scalar = [](DataType dtype, double value) {
    return loop::HostTensor::FromDoubles(dtype, {}, {value});
  };
  loop::HostTensor x = Floats({2}, {1, 10});
  auto out = RunAll(b.Bytes(), {scalar(DataType::kInt64, 2), scalar(DataType::kBool, 1), x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(4, 40));
  EXPECT_THAT(out[1], ElementsAre(2, 20, 3, 30, 4, 40));

  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(b.Bytes());
  ASSERT_TRUE(compiled.ok());
  for (bool native : {false, true}) {
    auto five = RunBackend(*compiled, {scalar(DataType::kInt64, 4), scalar(DataType::kBool, 1), x},
                           native);
    ASSERT_FALSE(five.ok()) << (native ? "native" : "interpreter");
    if (!native) EXPECT_THAT(five.status().message(), HasSubstr("'scanning'"));
    // go = false: no iteration, no row.
    auto none = RunBackend(*compiled, {scalar(DataType::kInt64, 2), scalar(DataType::kBool, 0), x},
                           native);
    EXPECT_FALSE(none.ok()) << (native ? "native" : "interpreter");
  }
}

// Two loop-carried values the body swaps, and a value from outside that the loop reads without
// the state (x * 3, computed once before the loop): by hand, (a, b) -> (b + 3x, a).
TEST(ControlFlowTest, ARunTimeLoopSwappingItsStateReadsEveryValueBeforeItIsWritten) {
  OnnxModelBuilder b;
  b.Input("m", {}, onnx::TensorProto::INT64).Input("a", {1}).Input("b", {1}).Input("x", {1})
      .Output("a_final").Output("b_final");
  auto* three = b.model().mutable_graph()->add_initializer();
  three->set_name("three");
  three->set_data_type(onnx::TensorProto::FLOAT);
  three->add_float_data(3);
  onnx::NodeProto& node = b.Node("Loop", {"m", "", "a", "b"}, {"a_final", "b_final"}, "swapping");
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"i", "cond_in", "a_in", "b_in"}) Value(body->mutable_input(), in);
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Mul", {"x", "three"}, {"x3"});
  AddNode(body, "Add", {"b_in", "x3"}, {"a_out"});
  AddNode(body, "Identity", {"a_in"}, {"b_out"});
  for (const char* out : {"cond_out", "a_out", "b_out"}) Value(body->mutable_output(), out);
  auto trips = [](int64_t m) {
    return loop::HostTensor::FromDoubles(DataType::kInt64, {}, {static_cast<double>(m)});
  };
  // (1, 2) -> (2 + 3, 1) = (5, 1) -> (1 + 3, 5) = (4, 5) -> (5 + 3, 4) = (8, 4), with x = 1.
  auto out = RunAll(b.Bytes(), {trips(3), Floats({1}, {1}), Floats({1}, {2}), Floats({1}, {1})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(8));
  EXPECT_THAT(out[1], ElementsAre(4));
}

// A Scan of 100 steps (more than Kiln unrolls) runs as a loop: a running sum of x's rows read
// backwards (row r of x is r + 1, so the sum after k steps is 100 + 99 + ... + (101 - k)), its
// scan output stacked along axis 1 in reverse (column c holds the sum after 100 - c steps).
TEST(ControlFlowTest, ALongScanRunsAsALoop) {
  constexpr int kSteps = 100;
  OnnxModelBuilder b;
  b.Input("init", {1}).Input("x", {kSteps, 1}).Output("sum").Output("partial");
  onnx::NodeProto& node = b.Node("Scan", {"init", "x"}, {"sum", "partial"}, "running_sum");
  OnnxModelBuilder::IntAttr(node, "num_scan_inputs", 1);
  OnnxModelBuilder::IntsAttr(node, "scan_input_directions", {1});
  OnnxModelBuilder::IntsAttr(node, "scan_output_directions", {1});
  OnnxModelBuilder::IntsAttr(node, "scan_output_axes", {1});
  onnx::GraphProto* body = GraphAttr(node, "body");
  for (const char* in : {"sum_in", "row"}) Value(body->mutable_input(), in);
  AddNode(body, "Add", {"sum_in", "row"}, {"sum_out"});
  AddNode(body, "Identity", {"sum_out"}, {"scan_out"});
  for (const char* out : {"sum_out", "scan_out"}) Value(body->mutable_output(), out);
  std::vector<double> rows(kSteps);
  for (int r = 0; r < kSteps; ++r) rows[r] = r + 1;
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_LE(compiled->lowered->kernels.size(), 12u) << "one body, not a hundred";
  auto out = RunAll(b.Bytes(), {Floats({1}, {0}), Floats({kSteps, 1}, rows)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAre(kSteps * (kSteps + 1) / 2));
  ASSERT_EQ(out[1].size(), static_cast<size_t>(kSteps));
  for (int c = 0; c < kSteps; ++c) {
    int k = kSteps - c;  // steps taken
    double expected = 0;
    for (int r = kSteps; r > kSteps - k; --r) expected += r;
    EXPECT_EQ(out[1][c], expected) << "column " << c;
  }
}

// What a loop known only at run time cannot do is an error naming the node and saying why.
TEST(ControlFlowTest, RunTimeLoopsKilnCannotCompileAreErrorsNamingTheNode) {
  {  // A scan output whose number of rows nothing tells.
    OnnxModelBuilder b;
    b.Input("m", {}, onnx::TensorProto::INT64).Input("acc", {1}).Output("final").Output("rows");
    onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final", "rows"}, "unbounded");
    onnx::GraphProto* body = GraphAttr(node, "body");
    for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
    AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
    AddNode(body, "Identity", {"acc_in"}, {"acc_out"});
    AddNode(body, "Identity", {"acc_in"}, {"scan_out"});
    for (const char* out : {"cond_out", "acc_out", "scan_out"}) Value(body->mutable_output(), out);
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
    EXPECT_THAT(failure.status.message(), HasSubstr("'unbounded'"));
    EXPECT_THAT(failure.status.message(), HasSubstr("declare the output's shape"));
  }
  {  // A loop-carried value that grows every iteration.
    OnnxModelBuilder b;
    b.Input("m", {}, onnx::TensorProto::INT64).Input("acc", {1}).Output("final");
    onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "growing");
    onnx::GraphProto* body = GraphAttr(node, "body");
    for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
    AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
    onnx::NodeProto* concat = AddNode(body, "Concat", {"acc_in", "acc_in"}, {"acc_out"});
    OnnxModelBuilder::IntAttr(*concat, "axis", 0);
    for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
    EXPECT_THAT(failure.status.message(), HasSubstr("'growing'"));
    EXPECT_THAT(failure.status.message(), HasSubstr("keeps each value's type"));
  }
  {  // Neither a trip count nor a condition: it never ends.
    OnnxModelBuilder b;
    b.Input("acc", {1}).Output("final");
    onnx::NodeProto& node = b.Node("Loop", {"", "", "acc"}, {"final"}, "forever");
    onnx::GraphProto* body = GraphAttr(node, "body");
    for (const char* in : {"i", "cond_in", "acc_in"}) Value(body->mutable_input(), in);
    AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
    AddNode(body, "Identity", {"acc_in"}, {"acc_out"});
    for (const char* out : {"cond_out", "acc_out"}) Value(body->mutable_output(), out);
    CompileOptions options;
    CompileFailure failure;
    ASSERT_FALSE(CompileOnnx(b.Bytes(), options, &failure).ok());
    EXPECT_THAT(failure.status.message(), HasSubstr("'forever'"));
  }
}

}  // namespace
}  // namespace kiln::driver
