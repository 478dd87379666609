// The ONNX importer as a user meets it: span filling (one-to-many
// expansions, unnamed nodes, inputs and initializers, the switch), symbolic
// dims and overrides, and every validation error with its message.
#include "engine/frontend/onnx/importer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "engine/frontend/onnx/control_flow.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/structural_equal.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxModelBuilder;

const FunctionNode* Main(const IRModule& module) {
  return module->Lookup("main").as<FunctionNode>();
}

// Source names of every call in `expr`, in post-order.
std::vector<std::vector<std::string>> CallSpans(const Expr& expr) {
  std::vector<std::vector<std::string>> out;
  PostOrderVisit(expr, [&](const Expr& e) {
    if (e.as<CallNode>()) out.push_back(SpanSourceNames(e->span));
  });
  return out;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(OnnxImporterTest, EveryPieceOfAnExpandedNodeCarriesItsName) {
  OnnxModelBuilder b;
  b.Input("x", {2, 3}).Output("y");
  auto& elu = b.Node("Elu", {"x"}, {"y"}, "block1/act");
  OnnxModelBuilder::FloatAttr(elu, "alpha", 0.5f);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  auto spans = CallSpans(Main(*module)->body);
  // Elu expands to greater, exp, subtract, multiply, where: five calls.
  ASSERT_EQ(spans.size(), 5u);
  for (const auto& names : spans) EXPECT_EQ(names, std::vector<std::string>{"block1/act"});
  // The expansion stops at the node's input: the parameter keeps its own name.
  EXPECT_EQ(SpanSourceNames(Main(*module)->params[0]->span), std::vector<std::string>{"x"});
}

// An operator without a converter but with an ONNX function body (NegativeLogLikelihoodLoss)
// imports as its body's operators, each carrying the node's name; importing twice gives the same
// module; the body's nodes count toward the graph's node limit.
TEST(OnnxImporterTest, FunctionBodyNodesCarryTheNodesNameAndCountTowardTheLimit) {
  OnnxModelBuilder b;
  b.Input("x", {3, 4}).Input("t", {3}, onnx::TensorProto::INT64).Output("loss");
  b.Node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}, "criterion");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  auto spans = CallSpans(Main(*module)->body);
  ASSERT_GT(spans.size(), 3u);
  for (const auto& names : spans) EXPECT_EQ(names, std::vector<std::string>{"criterion"});
  auto again = ImportOnnxModel(b.Bytes());
  EXPECT_TRUE(StructuralEqual(*module, *again, {.compare_spans = true}));

  OnnxImportOptions options;
  options.max_graph_nodes = 3;
  auto limited = ImportOnnxModel(b.Bytes(), options);
  ASSERT_FALSE(limited.ok());
  EXPECT_THAT(Message(limited.status()),
              ::testing::HasSubstr("with its operators' function bodies expanded has more than 3"));
}

// A function operator that does not match its schema (a required input missing, an attribute of
// the wrong type) is refused with the node and the schema's complaint, before any body is built.
TEST(OnnxImporterTest, FunctionOperatorsAreCheckedAgainstTheirSchema) {
  OnnxModelBuilder missing;
  missing.Input("x", {3, 4}).Output("loss");
  missing.Node("SoftmaxCrossEntropyLoss", {"x"}, {"loss"}, "sce");
  auto module = ImportOnnxModel(missing.Bytes());
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(Message(module.status()), ::testing::HasSubstr("ONNX node 'sce'"));
  EXPECT_THAT(Message(module.status()), ::testing::HasSubstr("input size 1 not in range"));

  OnnxModelBuilder mistyped;
  mistyped.Input("x", {3, 4}).Input("t", {3}, onnx::TensorProto::INT64).Output("loss");
  auto& node = mistyped.Node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}, "nll");
  OnnxModelBuilder::IntAttr(node, "reduction", 5);
  module = ImportOnnxModel(mistyped.Bytes());
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(Message(module.status()), ::testing::HasSubstr("Mismatched attribute type"));
  EXPECT_THAT(Message(module.status()), ::testing::HasSubstr("reduction"));
}

TEST(OnnxImporterTest, UnnamedNodesGetOpTypeAndIndex) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("z");
  b.FloatInitializer("bias", {4}, {1, 2, 3, 4});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Add", {"r", "bias"}, {"z"});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* add = Main(*module)->body.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(SpanSourceNames(add->span), std::vector<std::string>{"Add_1"});
  EXPECT_EQ(SpanSourceNames(add->args[0]->span), std::vector<std::string>{"Relu_0"});
  // Initializers are constants named after themselves.
  EXPECT_EQ(SpanSourceNames(add->args[1]->span), std::vector<std::string>{"bias"});
  EXPECT_NE(add->args[1].as<ConstantNode>(), nullptr);
  // Importing again gives the same names (stable) and the same module.
  auto again = ImportOnnxModel(b.Bytes());
  EXPECT_TRUE(StructuralEqual(*module, *again, {.compare_spans = true}));
}

// A subgraph's nodes carry their own names, an unnamed one `<op_type>_<k>` with k counted in
// its subgraph; the If carries its node's name.
TEST(OnnxImporterTest, SubgraphNodesCarryTheirOwnNames) {
  OnnxModelBuilder b;
  b.Input("cond", {}, onnx::TensorProto::BOOL).Input("x", {3}).Output("y");
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"y"}, "branch");
  auto graph_attr = [&](const std::string& name) {
    onnx::AttributeProto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    return attr->mutable_g();
  };
  onnx::GraphProto* then_branch = graph_attr("then_branch");
  onnx::NodeProto* neg = then_branch->add_node();
  neg->set_op_type("Neg");
  neg->set_name("then_neg");
  neg->add_input("x");
  neg->add_output("negated");
  then_branch->add_output()->set_name("negated");
  onnx::GraphProto* else_branch = graph_attr("else_branch");
  onnx::NodeProto* exp = else_branch->add_node();
  exp->set_op_type("Exp");
  exp->set_name("else_exp");
  exp->add_input("x");
  exp->add_output("e");
  onnx::NodeProto* mul = else_branch->add_node();
  mul->set_op_type("Mul");
  mul->add_input("e");
  mul->add_input("x");
  mul->add_output("product");
  else_branch->add_output()->set_name("product");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* branch = Main(*module)->body.as<IfNode>();
  ASSERT_NE(branch, nullptr);
  EXPECT_EQ(SpanSourceNames(branch->span), std::vector<std::string>{"branch"});
  EXPECT_EQ(CallSpans(branch->true_branch),
            (std::vector<std::vector<std::string>>{{"then_neg"}}));
  EXPECT_EQ(CallSpans(branch->false_branch),
            (std::vector<std::vector<std::string>>{{"else_exp"}, {"Mul_1"}}));
}

// Each If on a run-time condition is a scope passes and printers walk recursively: a chain of
// them, each reading the last one's result, is refused past kMaxRunTimeIfs, naming the node.
TEST(OnnxImporterTest, IfsOnRunTimeConditionsAreLimited) {
  auto chain = [](int ifs) {
    OnnxModelBuilder b;
    b.Input("cond", {}, onnx::TensorProto::BOOL).Input("x", {2});
    std::string last = "x";
    for (int i = 0; i < ifs; ++i) {
      std::string out = "o" + std::to_string(i);
      onnx::NodeProto& node = b.Node("If", {"cond"}, {out}, "if" + std::to_string(i));
      for (const char* name : {"then_branch", "else_branch"}) {
        onnx::AttributeProto* attr = node.add_attribute();
        attr->set_name(name);
        attr->set_type(onnx::AttributeProto::GRAPH);
        onnx::NodeProto* relu = attr->mutable_g()->add_node();
        relu->set_op_type(std::string(name) == "then_branch" ? "Relu" : "Neg");
        relu->add_input(last);
        relu->add_output(out + name);
        attr->mutable_g()->add_output()->set_name(out + name);
      }
      last = out;
    }
    b.Output(last);
    return b.Bytes();
  };
  EXPECT_TRUE(ImportOnnxModel(chain(onnx_frontend::kMaxRunTimeIfs)).ok());
  auto refused = ImportOnnxModel(chain(onnx_frontend::kMaxRunTimeIfs + 1));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(refused.status()),
              ::testing::HasSubstr("ONNX node 'if256' (#256, If): more than 256 Ifs on conditions "
                                   "known only at run time"));
}

// A Loop whose trip count is an input is a while_loop of main, its body a closed function: the
// outer value it reads (x) is passed in as an invariant, what it computes without the state
// (x * x) is computed outside it, and its nodes carry their own names.
TEST(OnnxImporterTest, ARunTimeLoopIsAWhileLoopWithAClosedBody) {
  OnnxModelBuilder b;
  b.Input("m", {}, onnx::TensorProto::INT64).Input("x", {2}).Input("acc", {2}).Output("final");
  onnx::NodeProto& node = b.Node("Loop", {"m", "", "acc"}, {"final"}, "accumulate");
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  for (const char* in : {"i", "cond_in", "acc_in"}) body->add_input()->set_name(in);
  auto add_node = [&](const char* op, std::vector<std::string> inputs, const char* output,
                      const char* name) {
    onnx::NodeProto* n = body->add_node();
    n->set_op_type(op);
    if (name != nullptr) n->set_name(name);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
  };
  add_node("Identity", {"cond_in"}, "cond_out", nullptr);
  add_node("Mul", {"x", "x"}, "squared", "square");
  add_node("Add", {"acc_in", "squared"}, "acc_out", "accumulate_step");
  for (const char* out : {"cond_out", "acc_out"}) body->add_output()->set_name(out);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();

  const CallNode* loop = nullptr;
  PostOrderVisit(Main(*module)->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call != nullptr && call->op.same_as(GetOp("while_loop"))) loop = call;
  });
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(SpanSourceNames(loop->span), std::vector<std::string>{"accumulate"});
  const auto* func = loop->args[0].as<FunctionNode>();
  ASSERT_NE(func, nullptr);
  // (cond, iteration, acc), then the invariants: the trip count and x * x.
  ASSERT_EQ(func->params.size(), 5u);
  ASSERT_EQ(loop->args.size(), 6u);
  std::set<const ExprNode*> params;
  for (const Var& param : func->params) params.insert(param.get());
  std::vector<std::string> free_vars;
  std::vector<std::vector<std::string>> body_calls;
  PostOrderVisit(func->body, [&](const Expr& e) {
    if (const auto* var = e.as<VarNode>(); var != nullptr && !params.count(var)) {
      free_vars.push_back(var->name_hint);
    }
    if (const auto* call = e.as<CallNode>(); call != nullptr && call->op.same_as(GetOp("multiply"))) {
      ADD_FAILURE() << "x * x reads no state: it belongs outside the body";
    }
  });
  EXPECT_THAT(free_vars, ::testing::IsEmpty());
  const auto* squared = loop->args[5].as<CallNode>();
  ASSERT_NE(squared, nullptr) << "the last invariant is x * x, computed before the loop";
  EXPECT_EQ(SpanSourceNames(squared->span), std::vector<std::string>{"square"});
  EXPECT_THAT(CallSpans(func->body), ::testing::Contains(std::vector<std::string>{"accumulate_step"}));
}

TEST(OnnxImporterTest, SpanFillingSwitchAndInitializersAsParameters) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("z");
  b.FloatInitializer("w", {4}, {1, 2, 3, 4});
  b.Node("Mul", {"x", "w"}, {"z"}, "scale");
  OnnxImportOptions options;
  options.span_filling = false;
  options.initializers_as_params = true;
  auto module = ImportOnnxModel(b.Bytes(), options);
  ASSERT_TRUE(module.ok()) << module.status();
  const FunctionNode* main = Main(*module);
  ASSERT_EQ(main->params.size(), 2u);
  EXPECT_EQ(main->params[1]->name_hint, "w");
  int with_span = 0;
  PostOrderVisit(main->body, [&](const Expr& e) { with_span += e->span.defined(); });
  for (const Var& p : main->params) with_span += p->span.defined();
  EXPECT_EQ(with_span, 0);
}

TEST(OnnxImporterTest, NamesThatAreNotUtf8AreMadeValid) {
  // Latin-1 bytes (ONNX names are unchecked bytes): IR text, JSON and the
  // service's proto3 strings need UTF-8, so each bad byte becomes U+FFFD.
  OnnxModelBuilder b;
  b.Input("caf\xE9", {2}).Output("y");
  b.Node("Exp", {"caf\xE9"}, {"y"}, "exp\xFF");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const FunctionNode* main = Main(*module);
  EXPECT_EQ(main->params[0]->name_hint, "caf\xEF\xBF\xBD");
  EXPECT_EQ(SpanSourceNames(main->body->span), std::vector<std::string>{"exp\xEF\xBF\xBD"});
}

TEST(OnnxImporterTest, SymbolicDimsStayAndOverridesMakeThemStatic) {
  OnnxModelBuilder b;
  b.Input("x", {-1, 3, -1}, onnx::TensorProto::FLOAT, {"N", "", ""}).Output("y");
  b.Node("Exp", {"x"}, {"y"}, "e");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(StructuralEqual(
      Main(*module)->body->checked_type,
      MakeTensorType({Dim::Symbolic("N"), Dim::Static(3), Dim::Symbolic()}, DataType::kFloat32)));
  OnnxImportOptions options;
  options.input_shapes["x"] = {8, 3, 5};
  auto fixed = ImportOnnxModel(b.Bytes(), options);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_TRUE(StructuralEqual(Main(*fixed)->body->checked_type,
                              MakeTensorType({8, 3, 5}, DataType::kFloat32)));
  options.input_shapes["x"] = {8, 3};
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes(), options).status()),
            "input shape override for 'x' has rank 2, the model says 3");
  options.input_shapes = {{"nope", {1}}};
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes(), options).status()),
            "input shape override names 'nope', which is not a graph input");
  // 2^62 * 3 * 5 elements overflows int64: refused before any shape arithmetic, by its extent
  // alone (which also refuses an empty tensor with a 2^62 extent).
  options.input_shapes = {{"x", {int64_t{1} << 62, 3, 5}}};
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes(), options).status()),
            "graph input 'x' has extent 4611686018427387904, more than the limit of 2147483648");
  options.input_shapes = {{"x", {0, int64_t{1} << 62, 5}}};
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes(), options).status()),
            "graph input 'x' has extent 4611686018427387904, more than the limit of 2147483648");
  // 2^20 * 2^20 * 5 elements: every extent within the limit, the product not.
  options.input_shapes = {{"x", {int64_t{1} << 20, int64_t{1} << 20, 5}}};
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes(), options).status()),
            "graph input 'x' would have more than 2147483648 elements (the importer's limit on "
            "one tensor)");
  options.max_tensor_elements = 100;
  options.input_shapes = {{"x", {8, 3, 5}}};
  EXPECT_FALSE(ImportOnnxModel(b.Bytes(), options).ok());
}

TEST(OnnxImporterTest, UnsupportedOperatorsAreListedTogetherWithCounts) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("y");
  b.Node("FancyOp", {"x"}, {"a"});
  b.Node("FancyOp", {"a"}, {"b"});
  b.Node("OtherOp", {"b"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  auto status = ImportOnnxModel(b.Bytes()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Message(status), "2 unsupported ONNX operator type(s): FancyOp (x2), OtherOp (x1)");
}

TEST(OnnxImporterTest, GraphStructureErrorsNameTheNode) {
  {
    OnnxModelBuilder b;
    b.Input("x", {4}).Output("y");
    b.Node("Relu", {"ghost"}, {"y"}, "r1");
    EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
              "ONNX node 'r1' (#0, Relu): input 'ghost' is not produced by any node and is not "
              "a graph input or initializer");
  }
  {
    OnnxModelBuilder b;
    b.Input("x", {4}).Output("y");
    b.Node("Add", {"x", "b"}, {"a"}, "first");
    b.Node("Relu", {"a"}, {"b"}, "second");
    b.Node("Relu", {"a"}, {"y"}, "third");
    EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
              "the graph has a cycle through ONNX node 'first' (#0, Add), ONNX node 'second' "
              "(#1, Relu)");
  }
  {
    OnnxModelBuilder b;
    b.Input("x", {4}).Output("y");
    b.Node("Relu", {"x"}, {"y"}, "a");
    b.Node("Exp", {"x"}, {"y"}, "b");
    EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
              "ONNX node 'b' (#1, Exp): output 'y' is already produced by ONNX node 'a' (#0, "
              "Relu)");
  }
  {
    OnnxModelBuilder b;
    b.Input("x", {4}).Input("i", {4}, onnx::TensorProto::INT32).Output("y");
    b.Node("Exp", {"i"}, {"y"}, "e");
    EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
              "ONNX node 'e' (#0, Exp): argument 0 has dtype int32, expected a float dtype");
  }
}

TEST(OnnxImporterTest, InitializerDataMustMatchItsDims) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("y");
  b.FloatInitializer("w", {2, 2}, {1, 2, 3});
  b.Node("Add", {"x", "w"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
            "tensor 'w': holds 3 values, expected 4 from its dims");

  OnnxModelBuilder raw;
  raw.Input("x", {4}).Output("y");
  auto& w = raw.FloatInitializer("w", {4}, {});
  w.set_raw_data(std::string(12, '\0'));
  raw.Node("Add", {"x", "w"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(raw.Bytes()).status()),
            "tensor 'w': raw_data holds 12 bytes, expected 16 for dims 1-d with 4 elements");
}

TEST(OnnxImporterTest, ElementCountsAreCheckedBeforeAllocating) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("y");
  auto& huge = b.FloatInitializer("huge", {1 << 20, 1 << 20, 1 << 20, 1 << 20}, {});
  huge.set_raw_data("");
  b.Node("Add", {"x", "huge"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(b.Bytes()).status()),
            "tensor 'huge': element count overflows int64");

  OnnxModelBuilder big;
  big.Input("x", {4}).Output("y");
  big.FloatInitializer("w", {1000, 1000}, {}).set_raw_data("");
  big.Node("Add", {"x", "w"}, {"y"});
  OnnxImportOptions options;
  options.max_tensor_elements = 1000;
  EXPECT_EQ(Message(ImportOnnxModel(big.Bytes(), options).status()),
            "tensor 'w': 1000000 elements exceed the limit of 1000");
}

TEST(OnnxImporterTest, RanksAreLimitedWhereverAShapeEnters) {
  OnnxModelBuilder input;
  input.Input("x", std::vector<int64_t>(33, 1)).Output("y");
  input.Node("Relu", {"x"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(input.Bytes()).status()),
            "graph input 'x' has rank 33, more than the limit of 32");
  OnnxModelBuilder at_limit;
  at_limit.Input("x", std::vector<int64_t>(32, 1)).Output("y");
  at_limit.Node("Relu", {"x"}, {"y"});
  EXPECT_TRUE(ImportOnnxModel(at_limit.Bytes()).ok());

  OnnxImportOptions override_rank;
  override_rank.input_shapes["x"] = std::vector<int64_t>(40, 1);
  OnnxModelBuilder symbolic;
  symbolic.model().mutable_graph()->add_input()->set_name("x");
  symbolic.model().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  symbolic.Output("y").Node("Relu", {"x"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(symbolic.Bytes(), override_rank).status()),
            "graph input 'x' has rank 40, more than the limit of 32");

  OnnxModelBuilder initializer;
  initializer.Input("x", {1}).Output("y");
  initializer.FloatInitializer("w", std::vector<int64_t>(33, 1), {1.0f});
  initializer.Node("Add", {"x", "w"}, {"y"});
  EXPECT_EQ(Message(ImportOnnxModel(initializer.Bytes()).status()),
            "tensor 'w': 33 dimensions, more than the limit of 32");

  // A Reshape to a computed rank-40 shape: the node's output is refused.
  OnnxModelBuilder reshape;
  reshape.Input("x", {1}).Output("y");
  auto& shape = *reshape.model().mutable_graph()->add_initializer();
  shape.set_name("shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(40);
  for (int i = 0; i < 40; ++i) shape.add_int64_data(1);
  reshape.Node("Reshape", {"x", "shape"}, {"y"}, "deep");
  EXPECT_THAT(Message(ImportOnnxModel(reshape.Bytes()).status()),
              ::testing::HasSubstr("reshape would give a result of rank 40, more than the limit of 32"));
}

TEST(OnnxImporterTest, MaterializedTensorsAreChargedToTheBudgetBeforeAllocating) {
  // ConstantOfShape of 2^28 floats (1 GiB) against a 64 MiB budget: refused
  // at once, naming the node, without allocating.
  OnnxModelBuilder b;
  b.Output("y");
  auto& shape = *b.model().mutable_graph()->add_initializer();
  shape.set_name("shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(1);
  shape.add_int64_data(int64_t{1} << 28);
  b.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  CompileBudget budget(CompileLimits{int64_t{64} << 20, 1000});
  OnnxImportOptions options;
  options.budget = &budget;
  absl::Status status = ImportOnnxModel(b.Bytes(), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(status), ::testing::HasSubstr("ONNX node 'fill'"));
  EXPECT_THAT(Message(status), ::testing::HasSubstr("needs 1073741824 bytes"));
  EXPECT_EQ(budget.peak_bytes(), 8);  // the shape initializer only

  // Initializers count too: 4 MiB of weights against a 1 MiB budget.
  OnnxModelBuilder weights;
  weights.Input("x", {1}).Output("y");
  weights.FloatInitializer("w", {1 << 20}, {}).set_raw_data(std::string(4 << 20, '\0'));
  weights.Node("Add", {"x", "w"}, {"y"});
  CompileBudget small(CompileLimits{int64_t{1} << 20, 1000});
  options.budget = &small;
  status = ImportOnnxModel(weights.Bytes(), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(status), ::testing::HasSubstr("tensor 'w' needs 4194304 bytes"));
}

// Slice and Pad with run-time bounds materialize a table of positions the size of the declared
// output axis: charged before it is built (a 2^28-long declared axis against a 64 MiB budget).
TEST(OnnxImporterTest, RunTimeBoundsPositionsAreChargedToTheBudget) {
  for (const char* op : {"Pad", "Slice"}) {
    OnnxModelBuilder b(13);
    const bool pad = std::string(op) == "Pad";
    b.Input("x", {1}).Input("bounds", {pad ? 2 : 1}, onnx::TensorProto::INT64)
        .Output("y", {int64_t{1} << 28});
    std::vector<std::string> inputs = {"x", "bounds"};
    if (!pad) inputs = {"x", "bounds", "bounds"};
    b.Node(op, inputs, {"y"}, "huge");
    CompileBudget budget(CompileLimits{int64_t{64} << 20, 1000});
    OnnxImportOptions options;
    options.budget = &budget;
    absl::Status status = ImportOnnxModel(b.Bytes(), options).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << op << ": " << status;
    EXPECT_THAT(Message(status), ::testing::HasSubstr("ONNX node 'huge'"));
    EXPECT_LT(budget.peak_bytes(), int64_t{64} << 20) << op;
  }
}

TEST(OnnxImporterTest, ImportStopsBetweenNodesOnceCancelled) {
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("y");
  b.Node("Relu", {"x"}, {"r"}, "first");
  b.Node("Relu", {"r"}, {"y"}, "second");
  int polls = 0;
  CompileBudget budget(CompileLimits{}, [&] { return ++polls > 1; });
  OnnxImportOptions options;
  options.budget = &budget;
  absl::Status status = ImportOnnxModel(b.Bytes(), options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(Message(status), "the compile was cancelled while importing ONNX node second");
}

TEST(OnnxImporterTest, BytesThatAreNotAModelAreRejected) {
  EXPECT_EQ(Message(ImportOnnxModel("").status()),
            "empty input: expected the bytes of an ONNX ModelProto");
  EXPECT_EQ(Message(ImportOnnxModel("def @main() { 1f }").status()),
            "not an ONNX model: the bytes do not parse as a ModelProto (truncated or another "
            "format)");
  OnnxModelBuilder b;
  b.Input("x", {4}).Output("y");
  b.Node("Relu", {"x"}, {"y"});
  std::string bytes = b.Bytes();
  auto truncated = ImportOnnxModel(bytes.substr(0, bytes.size() - 3));
  EXPECT_FALSE(truncated.ok());
  OnnxImportOptions options;
  options.max_model_bytes = 10;
  EXPECT_EQ(Message(ImportOnnxModel(bytes, options).status()),
            "model is " + std::to_string(bytes.size()) + " bytes, more than the limit of 10");
}

}  // namespace
}  // namespace kiln
