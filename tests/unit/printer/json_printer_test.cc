// The JSON form of the IR (docs/ir-json.md): read back with nlohmann::json and checked field
// by field, as a dashboard would read it.
#include "engine/printer/json_printer.h"

#include <gtest/gtest.h>

#include <limits>

#include "nlohmann/json.hpp"
#include "tests/unit/printer/test_modules.h"

namespace kiln {
namespace {

using Json = nlohmann::json;
using testing::CallOp;
using testing::F32;

// The example of docs/ir-json.md.
IRModule DocumentExample() {
  Var x = MakeVar("x", F32({1, 4}), MakeSpan("input"), MakeVirtualDevice("cpu", 0));
  Var c = MakeVar("c");
  Var y = MakeVar("y");
  Expr relu = CallOp("nn.relu", {x}, MakeAttrs({{"alpha", 0.5}}), "relu1");
  relu = WithCheckedType(relu, F32({1, 4}));
  Expr tuple = MakeTuple({relu, MakeConstant(MakeScalar(2.0f), MakeSpan("two"))});
  Expr body = MakeLet(y, MakeTupleGetItem(tuple, 0), MakeIf(c, y, x));
  return MakeModuleFromMain(MakeFunction({x, c}, body, F32({1, 4})));
}

TEST(JsonPrinterTest, MatchesTheDocumentedExample) {
  const Json expected = Json::parse(R"({
    "format": "kiln.graph-ir", "version": 1, "attrs": {},
    "functions": [{
      "name": "main", "kind": "Function", "params": [0, 1], "body": 8,
      "ret_type": "Tensor[(1, 4), float32]", "attrs": {}, "spans": [],
      "nodes": [
        {"id": 0, "kind": "Var", "name": "x", "type": "Tensor[(1, 4), float32]",
         "spans": ["input"], "virtual_device": {"device_type": "cpu", "device_id": 0}},
        {"id": 1, "kind": "Var", "name": "c", "spans": []},
        {"id": 2, "kind": "Call", "op": "nn.relu", "inputs": [0], "attrs": {"alpha": 0.5},
         "type": "Tensor[(1, 4), float32]", "spans": ["relu1"]},
        {"id": 3, "kind": "Constant", "dtype": "float32", "shape": [], "value": 2.0,
         "spans": ["two"]},
        {"id": 4, "kind": "Tuple", "inputs": [2, 3], "spans": []},
        {"id": 5, "kind": "TupleGetItem", "inputs": [4], "index": 0, "spans": []},
        {"id": 6, "kind": "Var", "name": "y", "spans": []},
        {"id": 7, "kind": "If", "cond": 1, "then": 6, "else": 0, "spans": []},
        {"id": 8, "kind": "Let", "var": 6, "value": 5, "body": 7, "spans": []}
      ]
    }]
  })");
  const std::string text = PrintModuleJson(DocumentExample());
  EXPECT_EQ(Json::parse(text), expected);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text, PrintModuleJson(DocumentExample()));  // deterministic
}

TEST(JsonPrinterTest, SpanTableUsesTheDocumentedIds) {
  // The documented example: nodes 0 (x: input), 2 (relu1) and 3 (two) carry spans.
  std::vector<NodeSources> table = ModuleSpanTable(DocumentExample());
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].function, "main");
  EXPECT_EQ(table[0].node, 0);
  EXPECT_EQ(table[0].sources, std::vector<std::string>{"input"});
  EXPECT_EQ(table[1].node, 2);
  EXPECT_EQ(table[1].sources, std::vector<std::string>{"relu1"});
  EXPECT_EQ(table[2].node, 3);
  EXPECT_EQ(table[2].sources, std::vector<std::string>{"two"});
}

TEST(JsonPrinterTest, AttributeValuesAndSpans) {
  Var x = MakeVar("x");
  Attrs attrs =
      MakeAttrs({{"i", 2},
                 {"f", 2.0},
                 {"nan", std::numeric_limits<double>::quiet_NaN()},
                 {"b", false},
                 {"s", "NCHW"},
                 {"dt", DataType::kFloat16},
                 {"shape", ShapeValue{{Dim::Static(1), Dim::Symbolic(), Dim::Symbolic("N")}}},
                 {"array", AttrValue::Array{IntArray({1}), "a"}}});
  Span span = MakeSequentialSpan({MakeSpan("conv2"), MakeSpan("relu2")});
  Expr call = MakeCall(GetOp("op"), {x}, attrs, span);
  IRModule module =
      MakeModule({{MakeGlobalVar("f"), MakeFunction({x}, call)}}, MakeAttrs({{"opset", 13}}));
  const Json json = Json::parse(PrintModuleJson(module, /*indent=*/-1));
  EXPECT_EQ(json["attrs"], Json::parse(R"({"opset": 13})"));
  const Json& node = json["functions"][0]["nodes"][1];
  EXPECT_EQ(node["attrs"], Json::parse(R"({"i": 2, "f": 2.0, "nan": "nan", "b": false,
      "s": "NCHW", "dt": {"dtype": "float16"}, "shape": {"shape": [1, "?", "N"]},
      "array": [[1], "a"]})"));
  EXPECT_EQ(node["spans"], Json::parse(R"(["conv2", "relu2"])"));
  EXPECT_TRUE(node["attrs"]["f"].is_number_float());
}

TEST(JsonPrinterTest, CallsOfFunctionsAndSharedNodes) {
  Var x = MakeVar("x");
  Var p = MakeVar("p");
  Function inner = MakeFunction({p}, CallOp("neg", {p}), nullptr, MakeAttrs({{"Primitive", 1}}));
  Expr shared = CallOp("exp", {x});
  Expr body = MakeTuple({MakeCall(inner, {shared}), shared, MakeCall(MakeGlobalVar("g"), {x})});
  IRModule module = MakeModuleFromMain(MakeFunction({x}, body));
  const Json nodes = Json::parse(PrintModuleJson(module))["functions"][0]["nodes"];
  // Post-order as the memoizing visitor walks it: dataflow operands first (exp), then the
  // callee function with its parameter and body, the call, @g, its call, the tuple.
  ASSERT_EQ(nodes.size(), 9u);
  EXPECT_EQ(nodes[1]["op"], "exp");
  EXPECT_EQ(nodes[4]["kind"], "Function");
  EXPECT_EQ(nodes[4]["params"], Json::parse("[2]"));
  EXPECT_EQ(nodes[4]["body"], 3);
  EXPECT_EQ(nodes[4]["attrs"], Json::parse(R"({"Primitive": 1})"));
  EXPECT_EQ(nodes[5]["callee"], 4);
  EXPECT_EQ(nodes[5]["inputs"], Json::parse("[1]"));
  EXPECT_EQ(nodes[6]["kind"], "GlobalVar");
  EXPECT_EQ(nodes[6]["name"], "g");
  EXPECT_EQ(nodes[8]["inputs"], Json::parse("[5, 1, 7]"));
  for (const Json& node : nodes) {
    for (const Json& input : node.value("inputs", Json::array())) EXPECT_LT(input, node["id"]);
  }
}

TEST(JsonPrinterTest, ChainOf20000Nodes) {
  const Json json = Json::parse(PrintModuleJson(testing::ChainModule(20'000), -1));
  const Json& nodes = json["functions"][0]["nodes"];
  ASSERT_EQ(nodes.size(), 20'001u);
  EXPECT_EQ(nodes[20'000]["inputs"], Json::parse("[19999]"));
  EXPECT_EQ(json["functions"][0]["body"], 20'000);
}

}  // namespace
}  // namespace kiln
