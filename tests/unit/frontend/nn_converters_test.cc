// The nn converters as a user meets them: ONNX models built with the
// protobuf API import into the expected graph ops and types, every piece of
// a one-to-many expansion carries the node's name (or `<op_type>_<k>`),
// opset differences are honoured, and bad models fail with errors that name
// the node and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "engine/frontend/onnx/importer.h"
#include "engine/ir/expr_visitor.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxModelBuilder;

const FunctionNode* Main(const IRModule& module) {
  return module->Lookup("main").as<FunctionNode>();
}

std::string TypeOf(const Expr& e) { return TypeToString(e->checked_type); }

struct CallInfo {
  std::string op;
  std::vector<std::string> spans;
  const CallNode* node;
};

// Every call under `expr`, in post-order, with its op name and source names.
std::vector<CallInfo> Calls(const Expr& expr) {
  std::vector<CallInfo> out;
  PostOrderVisit(expr, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      out.push_back({op ? op->name : "?", SpanSourceNames(e->span), call});
    }
  });
  return out;
}

std::vector<std::string> OpNames(const Expr& expr) {
  std::vector<std::string> out;
  for (const CallInfo& c : Calls(expr)) out.push_back(c.op);
  return out;
}

const AttrValue& Attr(const CallNode* call, const char* key) {
  const AttrValue* value = call->attrs ? call->attrs->Find(key) : nullptr;
  EXPECT_NE(value, nullptr) << key;
  static const AttrValue kMissing;
  return value ? *value : kMissing;
}

std::vector<int64_t> Ints(const AttrValue& value) {
  std::vector<int64_t> out;
  for (const AttrValue& v : value.get<AttrValue::Array>()) out.push_back(v.get<int64_t>());
  return out;
}

void StringAttr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value);
}

void FloatsAttr(onnx::NodeProto& node, const std::string& name, std::vector<float> values) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) attr->add_floats(v);
}

void Int64Initializer(OnnxModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                      std::vector<int64_t> values) {
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name(name);
  init->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) init->add_dims(d);
  for (int64_t v : values) init->add_int64_data(v);
}

std::vector<float> Zeros(size_t n) { return std::vector<float>(n, 0.0f); }

std::string ImportError(const OnnxModelBuilder& b) {
  auto module = ImportOnnxModel(b.Bytes());
  return module.ok() ? "imported" : std::string(module.status().message());
}

TEST(NnConvertersTest, GemmExpansionCarriesTheNodeNameOnEveryPiece) {
  OnnxModelBuilder b;
  b.Input("a", {2, 3}).Output("y");
  b.FloatInitializer("w", {4, 3}, Zeros(12));
  b.FloatInitializer("c", {4}, Zeros(4));
  auto& gemm = b.Node("Gemm", {"a", "w", "c"}, {"y"}, "fc1");
  OnnxModelBuilder::IntAttr(gemm, "transB", 1);
  OnnxModelBuilder::FloatAttr(gemm, "alpha", 0.5f);
  OnnxModelBuilder::FloatAttr(gemm, "beta", 2.0f);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const Expr& body = Main(*module)->body;
  EXPECT_EQ(TypeOf(body), "Tensor[(2, 4), float32]");
  // transB = 1 is dense's weight layout; alpha and beta scale; C is added.
  EXPECT_EQ(OpNames(body), (std::vector<std::string>{"nn.dense", "multiply", "multiply", "add"}));
  for (const CallInfo& call : Calls(body)) {
    EXPECT_EQ(call.spans, std::vector<std::string>{"fc1"}) << call.op;
  }
  // The scalar constants the expansion made are the node's too; the
  // initializers keep their own names.
  int scalars = 0;
  PostOrderVisit(body, [&](const Expr& e) {
    const auto* constant = e.as<ConstantNode>();
    if (constant == nullptr) return;
    if (constant->data->shape.empty()) {
      ++scalars;
      EXPECT_EQ(SpanSourceNames(e->span), std::vector<std::string>{"fc1"});
    } else {
      std::vector<std::string> names = SpanSourceNames(e->span);
      ASSERT_EQ(names.size(), 1u);
      EXPECT_TRUE(names[0] == "w" || names[0] == "c") << names[0];
    }
  });
  EXPECT_EQ(scalars, 2);
}

TEST(NnConvertersTest, UnnamedGemmWithTransposedAUsesMatmul) {
  OnnxModelBuilder b;
  b.Input("a", {6, 3}).Input("b", {6, 4}).Output("y");
  auto& gemm = b.Node("Gemm", {"a", "b"}, {"y"});
  OnnxModelBuilder::IntAttr(gemm, "transA", 1);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<CallInfo> calls = Calls(Main(*module)->body);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].op, "nn.matmul");
  EXPECT_EQ(calls[0].spans, std::vector<std::string>{"Gemm_0"});
  EXPECT_TRUE(Attr(calls[0].node, "transpose_a").get<bool>());
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(3, 4), float32]");

  OnnxModelBuilder bad;
  bad.Input("a", {2, 3, 4}).Input("b", {4, 5}).Output("y");
  bad.Node("Gemm", {"a", "b"}, {"y"}, "g");
  EXPECT_EQ(ImportError(bad), "ONNX node 'g' (#0, Gemm): input 0 (A) must be 2-D, got (2, 3, 4)");
}

TEST(NnConvertersTest, MatMulBroadcastsBatchDims) {
  OnnxModelBuilder b;
  b.Input("a", {-1, 3, 4}, onnx::TensorProto::FLOAT, {"batch"}).Input("b", {4, 5}).Output("y");
  b.Node("MatMul", {"a", "b"}, {"y"}, "mm");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(batch, 3, 5), float32]");
}

TEST(NnConvertersTest, ConvResolvesAutoPadAndAddsTheBias) {
  OnnxModelBuilder b;
  b.Input("x", {1, 1, 5, 5}).Output("y");
  b.FloatInitializer("W", {1, 1, 3, 3}, Zeros(9));
  b.FloatInitializer("B", {1}, Zeros(1));
  auto& conv = b.Node("Conv", {"x", "W", "B"}, {"y"}, "conv1");
  StringAttr(conv, "auto_pad", "SAME_LOWER");
  OnnxModelBuilder::IntsAttr(conv, "kernel_shape", {3, 3});
  OnnxModelBuilder::IntsAttr(conv, "strides", {2, 2});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<CallInfo> calls = Calls(Main(*module)->body);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].op, "nn.conv2d");
  // ceil(5 / 2) = 3 outputs need (3 - 1) * 2 + 3 - 5 = 2 padding, one per side.
  EXPECT_EQ(Ints(Attr(calls[0].node, "padding")), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(calls[1].op, "nn.bias_add");
  for (const CallInfo& call : calls) EXPECT_EQ(call.spans, std::vector<std::string>{"conv1"});
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, 3, 3), float32]");
}

TEST(NnConvertersTest, ConvKeepsASymbolicBatch) {
  OnnxModelBuilder b;
  b.Input("x", {-1, 3, 32, 32}, onnx::TensorProto::FLOAT, {"N"}).Output("y");
  b.FloatInitializer("W", {8, 3, 3, 3}, Zeros(8 * 27));
  auto& conv = b.Node("Conv", {"x", "W"}, {"y"}, "stem");
  OnnxModelBuilder::IntsAttr(conv, "strides", {2, 2});
  OnnxModelBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(N, 8, 16, 16), float32]");
}

TEST(NnConvertersTest, ConvErrorsNameTheNodeAndTheProblem) {
  auto conv_model = [](std::vector<int64_t> x_dims, std::vector<int64_t> w_dims,
                       std::vector<std::string> symbols = {}) {
    OnnxModelBuilder b;
    b.Input("x", std::move(x_dims), onnx::TensorProto::FLOAT, std::move(symbols)).Output("y");
    b.Input("w", std::move(w_dims));
    b.Node("Conv", {"x", "w"}, {"y"}, "conv1");
    return b;
  };
  OnnxModelBuilder large = conv_model({1, 1, 5, 5}, {1, 1, 7, 7});
  EXPECT_EQ(ImportError(large),
            "ONNX node 'conv1' (#0, Conv): kernel 7x7 is larger than the padded input 5x5");

  OnnxModelBuilder wrong_kernel = conv_model({1, 1, 5, 5}, {1, 1, 3, 3});
  OnnxModelBuilder::IntsAttr(*wrong_kernel.model().mutable_graph()->mutable_node(0), "kernel_shape",
                             {3, 3, 3});
  EXPECT_EQ(ImportError(wrong_kernel),
            "ONNX node 'conv1' (#0, Conv): attribute 'kernel_shape' has 3 dims, expected 2 for "
            "a 4-D input");

  // SAME padding with stride 2 depends on the input extent, which is symbolic.
  OnnxModelBuilder symbolic = conv_model({1, 1, -1, -1}, {1, 1, 3, 3}, {"", "", "H", "W"});
  auto* node = symbolic.model().mutable_graph()->mutable_node(0);
  StringAttr(*node, "auto_pad", "SAME_UPPER");
  OnnxModelBuilder::IntsAttr(*node, "strides", {2, 2});
  EXPECT_EQ(ImportError(symbolic),
            "ONNX node 'conv1' (#0, Conv): auto_pad SAME_UPPER with stride 2 needs a static "
            "input extent, but spatial dim 0 of (1, 1, H, W) is symbolic; give static shapes "
            "with an input shape override");
  // With stride 1 the padding does not depend on the extent: H and W stay symbolic.
  OnnxModelBuilder stride1 = conv_model({1, 1, -1, -1}, {1, 1, 3, 3});
  StringAttr(*stride1.model().mutable_graph()->mutable_node(0), "auto_pad", "SAME_UPPER");
  auto module = ImportOnnxModel(stride1.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, ?, ?), float32]");

  OnnxModelBuilder rank6;
  rank6.Input("x", {1, 1, 2, 2, 2, 2}).Input("w", {1, 1, 1, 1, 1, 1}).Output("y");
  rank6.Node("Conv", {"x", "w"}, {"y"});
  EXPECT_EQ(ImportError(rank6),
            "ONNX node 'Conv_0' (#0, Conv): Conv on a 6-D input is not supported (expected 3-D "
            "to 5-D: N, C and 1 to 3 spatial dims), got (1, 1, 2, 2, 2, 2)");
}

TEST(NnConvertersTest, ConvTransposeOutputShapeAndAutoPad) {
  // output_shape (10, 8) from a 3x3 input with strides (3, 2): the natural
  // output is 9x7, so one more element at each end becomes output padding.
  OnnxModelBuilder b(11);
  b.Input("x", {1, 1, 3, 3}).Input("w", {1, 2, 3, 3}).Output("y");
  auto& node = b.Node("ConvTranspose", {"x", "w"}, {"y"}, "up");
  OnnxModelBuilder::IntsAttr(node, "output_shape", {10, 8});
  OnnxModelBuilder::IntsAttr(node, "strides", {3, 2});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 2, 10, 8), float32]");
  const auto* call = Main(*module)->body.as<CallNode>();
  EXPECT_EQ(Ints(Attr(call, "output_padding")), (std::vector<int64_t>{1, 1}));

  // SAME_UPPER: output = input * stride = 6; total padding 1 goes at the end.
  OnnxModelBuilder same(11);
  same.Input("x", {1, 1, 3, 3}).Input("w", {1, 2, 3, 3}).Output("y");
  auto& same_node = same.Node("ConvTranspose", {"x", "w"}, {"y"});
  StringAttr(same_node, "auto_pad", "SAME_UPPER");
  OnnxModelBuilder::IntsAttr(same_node, "strides", {2, 2});
  module = ImportOnnxModel(same.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 2, 6, 6), float32]");
  EXPECT_EQ(Ints(Attr(Main(*module)->body.as<CallNode>(), "padding")),
            (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(NnConvertersTest, Pooling) {
  OnnxModelBuilder b(12);
  b.Input("x", {1, 1, 5, 5}).Output("y");
  auto& pool = b.Node("MaxPool", {"x"}, {"y"}, "pool");
  StringAttr(pool, "auto_pad", "SAME_UPPER");
  OnnxModelBuilder::IntsAttr(pool, "kernel_shape", {3, 3});
  OnnxModelBuilder::IntsAttr(pool, "strides", {2, 2});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, 3, 3), float32]");
  EXPECT_EQ(OpNames(Main(*module)->body), std::vector<std::string>{"nn.max_pool2d"});

  OnnxModelBuilder avg(11);
  avg.Input("x", {1, 3, 28, 28}).Output("y");
  auto& avg_node = avg.Node("AveragePool", {"x"}, {"y"});
  OnnxModelBuilder::IntsAttr(avg_node, "kernel_shape", {3, 3});
  OnnxModelBuilder::IntsAttr(avg_node, "pads", {2, 2, 2, 2});
  OnnxModelBuilder::IntAttr(avg_node, "count_include_pad", 1);
  module = ImportOnnxModel(avg.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3, 30, 30), float32]");
  EXPECT_TRUE(Attr(Main(*module)->body.as<CallNode>(), "count_include_pad").get<bool>());

  OnnxModelBuilder global;
  global.Input("x", {-1, 64, 7, 7}, onnx::TensorProto::FLOAT, {"N"}).Output("y");
  global.Node("GlobalAveragePool", {"x"}, {"y"});
  module = ImportOnnxModel(global.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(N, 64, 1, 1), float32]");

  // Indices (values: the ONNX backend tests test_maxpool_with_argmax_*): int64, pooled shape;
  // a symbolic input shape has no static index tables.
  OnnxModelBuilder indices(12);
  indices.Input("x", {1, 1, 5, 5}).Output("y").Output("i");
  auto& with_indices = indices.Node("MaxPool", {"x"}, {"y", "i"}, "pool");
  OnnxModelBuilder::IntsAttr(with_indices, "kernel_shape", {2, 2});
  module = ImportOnnxModel(indices.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body),
            "(Tensor[(1, 1, 4, 4), float32], Tensor[(1, 1, 4, 4), int64])");
  OnnxModelBuilder symbolic(12);
  symbolic.Input("x", {-1, 1, 5, 5}, onnx::TensorProto::FLOAT, {"N"}).Output("y").Output("i");
  OnnxModelBuilder::IntsAttr(symbolic.Node("MaxPool", {"x"}, {"y", "i"}, "pool"), "kernel_shape",
                             {2, 2});
  EXPECT_EQ(ImportError(symbolic),
            "ONNX node 'pool' (#0, MaxPool): output 1 (Indices) needs a static input shape");

  OnnxModelBuilder no_kernel;
  no_kernel.Input("x", {1, 1, 5, 5}).Output("y");
  no_kernel.Node("MaxPool", {"x"}, {"y"}, "pool");
  EXPECT_EQ(ImportError(no_kernel),
            "ONNX node 'pool' (#0, MaxPool): attribute 'kernel_shape' is required");
}

TEST(NnConvertersTest, Normalizations) {
  OnnxModelBuilder b(15);
  b.Input("x", {2, 3, 4, 5}).Output("y");
  for (const char* name : {"s", "bias", "mean", "var"}) b.FloatInitializer(name, {3}, Zeros(3));
  auto& bn = b.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"}, "bn");
  OnnxModelBuilder::FloatAttr(bn, "epsilon", 0.01f);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* call = Main(*module)->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->op.as<OpNode>()->name, "nn.batch_norm");
  EXPECT_FLOAT_EQ(static_cast<float>(Attr(call, "epsilon").get<double>()), 0.01f);

  OnnxModelBuilder training(15);
  training.Input("x", {2, 3, 4, 5}).Output("y").Output("m").Output("v");
  for (const char* name : {"s", "bias", "mean", "var"}) {
    training.FloatInitializer(name, {3}, Zeros(3));
  }
  auto& tbn =
      training.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y", "m", "v"}, "bn");
  OnnxModelBuilder::IntAttr(tbn, "training_mode", 1);
  // Training mode (values: tests/unit/driver/training_ops_test.cc): the batch's statistics,
  // no nn.batch_norm, and the two running statistics per channel.
  module = ImportOnnxModel(training.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::string> ops = OpNames(Main(*module)->body);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "nn.batch_norm"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "mean"), 2);
  EXPECT_EQ(TypeOf(Main(*module)->body),
            "(Tensor[(2, 3, 4, 5), float32], Tensor[(3), float32], Tensor[(3), float32])");

  OnnxModelBuilder ln(17);
  ln.Input("x", {2, 5, 8}).Output("y");
  ln.FloatInitializer("g", {8}, Zeros(8));
  ln.Node("LayerNormalization", {"x", "g"}, {"y"});
  module = ImportOnnxModel(ln.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(OpNames(Main(*module)->body), std::vector<std::string>{"nn.layer_norm"});

  // Asking for Mean and InvStdDev expands the node into its ONNX function's
  // steps; the statistics keep the normalized dims as 1s.
  OnnxModelBuilder ln_stats(17);
  ln_stats.Input("x", {2, 5, 8}).Output("y").Output("mean").Output("inv_std");
  ln_stats.FloatInitializer("g", {5, 8}, Zeros(40));
  ln_stats.FloatInitializer("b", {5, 8}, Zeros(40));
  auto& ln_node =
      ln_stats.Node("LayerNormalization", {"x", "g", "b"}, {"y", "mean", "inv_std"}, "ln");
  OnnxModelBuilder::IntAttr(ln_node, "axis", 1);
  module = ImportOnnxModel(ln_stats.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  ASSERT_NE(outputs, nullptr);
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2, 5, 8), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(2, 1, 1), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[2]), "Tensor[(2, 1, 1), float32]");
  EXPECT_EQ(OpNames(outputs->elements[0]),
            (std::vector<std::string>{"mean", "subtract", "multiply", "mean", "add", "rsqrt",
                                      "multiply", "multiply", "add"}));
  for (const CallInfo& call : Calls(Main(*module)->body)) {
    EXPECT_EQ(call.spans, std::vector<std::string>{"ln"}) << call.op;
  }

  OnnxModelBuilder mvn(13);
  mvn.Input("x", {3, 3, 3, 1}).Output("y");
  mvn.Node("MeanVarianceNormalization", {"x"}, {"y"});
  module = ImportOnnxModel(mvn.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(3, 3, 3, 1), float32]");
  EXPECT_EQ(Ints(Attr(Calls(Main(*module)->body)[0].node, "axis")),
            (std::vector<int64_t>{0, 2, 3}));

  OnnxModelBuilder inst(6);
  inst.Input("x", {1, 2, 1, 3}).Output("y");
  inst.FloatInitializer("s", {2}, Zeros(2));
  inst.FloatInitializer("b", {2}, Zeros(2));
  inst.Node("InstanceNormalization", {"x", "s", "b"}, {"y"});
  module = ImportOnnxModel(inst.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(OpNames(Main(*module)->body), std::vector<std::string>{"nn.instance_norm"});
}

TEST(NnConvertersTest, SoftmaxAxisFollowsTheOpset) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3, 4}).Output("y");
  b.Node("Softmax", {"x"}, {"y"});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Attr(Main(*module)->body.as<CallNode>(), "axis").get<int64_t>(), 2);

  // Opset 11 flattens from axis 1 on; with only 1s after the axis that is one axis.
  OnnxModelBuilder old(11);
  old.Input("x", {2, 3, 1}).Output("y");
  old.Node("LogSoftmax", {"x"}, {"y"});
  module = ImportOnnxModel(old.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* call = Main(*module)->body.as<CallNode>();
  EXPECT_EQ(call->op.as<OpNode>()->name, "nn.log_softmax");
  EXPECT_EQ(Attr(call, "axis").get<int64_t>(), 1);
}

TEST(NnConvertersTest, OldSoftmaxOverSeveralDimsReshapes) {
  OnnxModelBuilder b(11);
  b.Input("x", {-1, 3, 4}, onnx::TensorProto::FLOAT, {"N"}).Output("y");
  b.Node("Softmax", {"x"}, {"y"}, "sm");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(OpNames(Main(*module)->body),
            (std::vector<std::string>{"reshape", "nn.softmax", "reshape"}));
  for (const CallInfo& call : Calls(Main(*module)->body)) {
    EXPECT_EQ(call.spans, std::vector<std::string>{"sm"});
  }
  EXPECT_EQ(Ints(Attr(Calls(Main(*module)->body)[0].node, "newshape")),
            (std::vector<int64_t>{-1, 12}));
}

TEST(NnConvertersTest, DropoutIsTheIdentityWithAnAllTrueMask) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("y").Output("mask");
  b.Node("Dropout", {"x"}, {"y", "mask"}, "drop");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  ASSERT_NE(outputs, nullptr);
  EXPECT_TRUE(outputs->elements[0].same_as(Main(*module)->params[0]));
  const auto* mask = outputs->elements[1].as<ConstantNode>();
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->data->dtype, DataType::kBool);
  EXPECT_EQ(mask->data->bytes, std::string(12, '\1'));
  EXPECT_EQ(SpanSourceNames(outputs->elements[1]->span), std::vector<std::string>{"drop"});

  // Opset 7's mask has the input's dtype; a symbolic shape computes it.
  OnnxModelBuilder old(7);
  old.Input("x", {-1, 4}).Output("y").Output("mask");
  old.Node("Dropout", {"x"}, {"y", "mask"});
  module = ImportOnnxModel(old.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body.as<TupleNode>()->elements[1]), "Tensor[(?, 4), float32]");

  // Training mode known only at run time: the mask is drawn at compile time, for a static shape
  // (random_ops_test.cc runs it).
  OnnxModelBuilder training(13);
  training.Input("x", {3, 4}).Input("r", {}).Input("t", {}, onnx::TensorProto::BOOL).Output("y");
  training.Node("Dropout", {"x", "r", "t"}, {"y"}, "drop");
  module = ImportOnnxModel(training.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_FALSE(Main(*module)->body.same_as(Main(*module)->params[0]));
  OnnxModelBuilder symbolic(13);
  symbolic.Input("x", {-1, 4}).Input("r", {}).Input("t", {}, onnx::TensorProto::BOOL).Output("y");
  symbolic.Node("Dropout", {"x", "r", "t"}, {"y"}, "drop");
  EXPECT_EQ(ImportError(symbolic),
            "ONNX node 'drop' (#0, Dropout): input 0 has a symbolic shape; random values are "
            "drawn at compile time for a static shape");

  // Training with a constant ratio of 0 drops nothing: the output is the input. Any other
  // ratio drops elements.
  for (float ratio : {0.0f, 0.5f}) {
    OnnxModelBuilder zero(13);
    zero.Input("x", {3, 4}).Output("y");
    zero.FloatInitializer("r", {}, {ratio});
    onnx::TensorProto* t = zero.model().mutable_graph()->add_initializer();
    t->set_name("t");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(1);
    zero.Node("Dropout", {"x", "r", "t"}, {"y"}, "drop");
    module = ImportOnnxModel(zero.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(Main(*module)->body.same_as(Main(*module)->params[0]), ratio == 0.0f);
  }
}

TEST(NnConvertersTest, PadFromAttributesAndFromInputs) {
  OnnxModelBuilder b(13);
  b.Input("x", {1, 3, 4, 5}).Output("y");
  Int64Initializer(b, "pads", {8}, {0, 0, 1, 2, 0, 0, 3, 4});
  auto& pad = b.Node("Pad", {"x", "pads"}, {"y"}, "pad");
  StringAttr(pad, "mode", "reflect");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3, 8, 11), float32]");
  EXPECT_EQ(Attr(Main(*module)->body.as<CallNode>(), "pad_mode").get<std::string>(), "reflect");

  OnnxModelBuilder old(2);
  old.Input("x", {1, 3, 4, 5}).Output("y");
  auto& old_pad = old.Node("Pad", {"x"}, {"y"});
  OnnxModelBuilder::IntsAttr(old_pad, "pads", {0, 0, 3, 1, 0, 0, 4, 2});
  OnnxModelBuilder::FloatAttr(old_pad, "value", 2.0f);
  module = ImportOnnxModel(old.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3, 11, 8), float32]");
  const auto* value = Main(*module)->body.as<CallNode>()->args[1].as<ConstantNode>();
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(*value->data->data<float>(), 2.0f);

  OnnxModelBuilder dynamic(13);
  dynamic.Input("x", {1, 3}).Input("pads", {4}, onnx::TensorProto::INT64).Output("y");
  dynamic.Node("Pad", {"x", "pads"}, {"y"}, "pad");
  // Pads known only at run time need the output's shape declared (run_time_pad.cc).
  EXPECT_EQ(ImportError(dynamic),
            "ONNX node 'pad' (#0, Pad): input 1 (pads) decides the shape of output 0, but it is "
            "known only at run time and the model does not declare a static shape for that output "
            "(declare one, make the input a constant, or give its value at compile time)");
}

TEST(NnConvertersTest, PReluSlopes) {
  // Opset 6 (as PyTorch exported it): a slope per channel along axis 1.
  OnnxModelBuilder b(6);
  b.Input("x", {2, 3, 4}).Output("y");
  b.FloatInitializer("slope", {3}, {0.1f, 0.2f, 0.3f});
  b.Node("PRelu", {"x", "slope"}, {"y"}, "act");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(OpNames(Main(*module)->body), (std::vector<std::string>{"less", "multiply", "where"}));
  for (const CallInfo& call : Calls(Main(*module)->body)) {
    EXPECT_EQ(call.spans, std::vector<std::string>{"act"});
  }

  // Opset 16: numpy broadcasting, one way only.
  OnnxModelBuilder bad(16);
  bad.Input("x", {3, 4}).Input("slope", {2, 3, 4}).Output("y");
  bad.Node("PRelu", {"x", "slope"}, {"y"}, "act");
  EXPECT_EQ(ImportError(bad),
            "ONNX node 'act' (#0, PRelu): slope of shape (2, 3, 4) does not broadcast to the "
            "input's shape (3, 4)");
}

TEST(NnConvertersTest, ResizeAndUpsample) {
  OnnxModelBuilder b(13);
  b.Input("x", {1, 1, 2, 2}).Output("y");
  b.FloatInitializer("scales", {4}, {1.0f, 1.0f, 2.0f, 3.0f});
  auto& resize = b.Node("Resize", {"x", "", "scales"}, {"y"}, "up");
  StringAttr(resize, "mode", "linear");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, 4, 6), float32]");
  const auto* call = Main(*module)->body.as<CallNode>();
  EXPECT_EQ(call->op.as<OpNode>()->name, "image.resize2d");
  EXPECT_EQ(Attr(call, "method").get<std::string>(), "linear");
  EXPECT_EQ(Attr(call, "coordinate_transformation_mode").get<std::string>(), "half_pixel");

  OnnxModelBuilder sizes(13);
  sizes.Input("x", {1, 1, 4, 4}).Output("y");
  Int64Initializer(sizes, "sizes", {4}, {1, 1, 9, 10});
  sizes.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  module = ImportOnnxModel(sizes.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, 9, 10), float32]");

  // Upsample (opset 9): scales from an input, asymmetric coordinates, floor.
  OnnxModelBuilder up(9);
  up.Input("x", {1, 1, 2, 2}).Output("y");
  up.FloatInitializer("scales", {4}, {1.0f, 1.0f, 2.0f, 3.0f});
  up.Node("Upsample", {"x", "scales"}, {"y"});
  module = ImportOnnxModel(up.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  call = Main(*module)->body.as<CallNode>();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 1, 4, 6), float32]");
  EXPECT_EQ(Attr(call, "coordinate_transformation_mode").get<std::string>(), "asymmetric");
  EXPECT_EQ(Attr(call, "rounding_method").get<std::string>(), "floor");

  // Upsample (opset 7): scales as an attribute.
  OnnxModelBuilder up7(7);
  up7.Input("x", {1, 3, 2, 2}).Output("y");
  FloatsAttr(up7.Node("Upsample", {"x"}, {"y"}), "scales", {1.0f, 1.0f, 2.0f, 2.0f});
  module = ImportOnnxModel(up7.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3, 4, 4), float32]");

  OnnxModelBuilder channels(13);
  channels.Input("x", {1, 2, 2, 2}).Output("y");
  channels.FloatInitializer("scales", {4}, {1.0f, 2.0f, 2.0f, 2.0f});
  channels.Node("Resize", {"x", "", "scales"}, {"y"}, "up");
  EXPECT_EQ(ImportError(channels),
            "ONNX node 'up' (#0, Resize): resizing dim 1 (channels) is not supported; only the "
            "spatial dims may change");
}

TEST(NnConvertersTest, ClipBoundsFromAttributesConstantsAndInputs) {
  OnnxModelBuilder old(6);
  old.Input("x", {3}).Output("y");
  auto& clip = old.Node("Clip", {"x"}, {"y"});
  OnnxModelBuilder::FloatAttr(clip, "min", -0.5f);
  OnnxModelBuilder::FloatAttr(clip, "max", 0.5f);
  auto module = ImportOnnxModel(old.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* call = Main(*module)->body.as<CallNode>();
  EXPECT_EQ(call->op.as<OpNode>()->name, "clip");
  EXPECT_EQ(Attr(call, "a_min").get<double>(), -0.5);

  // Opset 13: a constant max becomes the attribute, a computed min a maximum.
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Input("lo", {}).Output("y");
  b.FloatInitializer("hi", {}, {6.0f});
  b.Node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(OpNames(Main(*module)->body), (std::vector<std::string>{"clip", "maximum"}));
  EXPECT_EQ(Attr(Calls(Main(*module)->body)[0].node, "a_max").get<double>(), 6.0);
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(3, 4), float32]");
}

TEST(NnConvertersTest, ActivationExpansions) {
  struct Case {
    const char* op_type;
    std::vector<std::string> ops;
  };
  const Case cases[] = {
      {"HardSigmoid", {"multiply", "add", "clip"}},
      {"HardSwish", {"multiply", "add", "clip", "multiply"}},
      {"Selu", {"greater", "multiply", "exp", "multiply", "subtract", "where"}},
      {"Celu", {"divide", "exp", "subtract", "multiply", "minimum", "maximum", "add"}},
      {"ThresholdedRelu", {"greater", "where"}},
      {"Softsign", {"abs", "add", "divide"}},
      {"Shrink", {"greater", "subtract", "where", "less", "add", "where"}},
  };
  for (const Case& c : cases) {
    OnnxModelBuilder b(14);
    b.Input("x", {2, 3}, onnx::TensorProto::FLOAT16).Output("y");
    b.Node(c.op_type, {"x"}, {"y"});
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << c.op_type << ": " << module.status();
    const Expr& body = Main(*module)->body;
    EXPECT_EQ(TypeOf(body), "Tensor[(2, 3), float16]") << c.op_type;
    std::vector<std::string> ops = OpNames(body);
    std::vector<std::string> expected = c.ops;
    std::sort(ops.begin(), ops.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(ops, expected) << c.op_type;
    for (const CallInfo& call : Calls(body)) {
      EXPECT_EQ(call.spans, std::vector<std::string>{std::string(c.op_type) + "_0"}) << c.op_type;
    }
  }
  // Scalars for float16 inputs are float16 constants: HardSigmoid's beta 0.5.
  OnnxModelBuilder b(14);
  b.Input("x", {2}, onnx::TensorProto::FLOAT16).Output("y");
  b.Node("HardSigmoid", {"x"}, {"y"});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* add = Calls(Main(*module)->body)[1].node;
  const auto* beta = add->args[1].as<ConstantNode>();
  ASSERT_NE(beta, nullptr);
  EXPECT_EQ(*beta->data->data<uint16_t>(), 0x3800);  // 0.5 in binary16
}

TEST(NnConvertersTest, DepthToSpaceAndSpaceToDepth) {
  OnnxModelBuilder b(13);
  b.Input("x", {1, 8, 2, 3}).Output("y");
  auto& d2s = b.Node("DepthToSpace", {"x"}, {"y"});
  OnnxModelBuilder::IntAttr(d2s, "blocksize", 2);
  StringAttr(d2s, "mode", "CRD");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 2, 4, 6), float32]");
  EXPECT_EQ(Attr(Main(*module)->body.as<CallNode>(), "mode").get<std::string>(), "CRD");

  OnnxModelBuilder s2d(13);
  s2d.Input("x", {1, 1, 4, 6}).Output("y");
  OnnxModelBuilder::IntAttr(s2d.Node("SpaceToDepth", {"x"}, {"y"}), "blocksize", 2);
  module = ImportOnnxModel(s2d.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 4, 2, 3), float32]");
}

TEST(NnConvertersTest, EveryNnOpTypeIsSupported) {
  std::vector<std::string> supported = SupportedOnnxOps();
  for (const char* op : {"Conv",
                         "ConvTranspose",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "MatMul",
                         "Gemm",
                         "BatchNormalization",
                         "InstanceNormalization",
                         "LayerNormalization",
                         "MeanVarianceNormalization",
                         "LRN",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "Dropout",
                         "Pad",
                         "PRelu",
                         "DepthToSpace",
                         "SpaceToDepth",
                         "Resize",
                         "Upsample",
                         "HardSigmoid",
                         "HardSwish",
                         "Selu",
                         "Celu",
                         "ThresholdedRelu",
                         "Softsign",
                         "Shrink",
                         "Clip"}) {
    EXPECT_NE(std::find(supported.begin(), supported.end(), op), supported.end()) << op;
  }
}

}  // namespace
}  // namespace kiln
