// ONNX transform, reduce and constant converters as a user meets them: shape
// arithmetic folds at import (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape leaves one reshape call), symbolic batch dims survive it, opset
// differences (attributes that became inputs) are both read, one-to-many
// expansions carry the node's name on every piece, and errors name the node
// and the problem (ConstantOfShape's element limit before any allocation).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>

#include "engine/frontend/onnx/importer.h"
#include "engine/ir/expr_visitor.h"
#include "engine/op/type_relations.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxModelBuilder;

const FunctionNode* Main(const IRModule& module) {
  return module->Lookup("main").as<FunctionNode>();
}

void Int64Initializer(OnnxModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                      std::vector<int64_t> values) {
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name(name);
  init->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) init->add_dims(d);
  for (int64_t v : values) init->add_int64_data(v);
}

void TensorAttr(onnx::NodeProto& node, const std::string& name, int32_t dtype,
                std::vector<int64_t> dims, std::vector<int64_t> int64_values) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::TENSOR);
  auto* t = attr->mutable_t();
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : int64_values) t->add_int64_data(v);
}

// The op names of every call in `expr`, in post-order.
std::vector<std::string> CallOps(const Expr& expr) {
  std::vector<std::string> out;
  PostOrderVisit(expr, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) out.push_back(call->op.as<OpNode>()->name);
  });
  return out;
}

std::string TypeOf(const Expr& expr) { return TypeToString(expr->checked_type); }

std::vector<int64_t> Int64Values(const Expr& expr) {
  const auto* constant = expr.as<ConstantNode>();
  if (constant == nullptr || constant->data->dtype != DataType::kInt64) return {-999};
  const TensorData& data = constant->data;
  return std::vector<int64_t>(data->data<int64_t>(), data->data<int64_t>() + data->NumElements());
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// x.view(x.size(0), -1) as PyTorch exports it.
void AddFlattenByShapeArithmetic(OnnxModelBuilder& b) {
  Int64Initializer(b, "zero", {}, {0});
  Int64Initializer(b, "minus_one", {1}, {-1});
  Int64Initializer(b, "axes0", {1}, {0});
  b.Node("Shape", {"x"}, {"shape"}, "shape");
  b.Node("Gather", {"shape", "zero"}, {"batch"}, "gather");
  b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"}, "unsqueeze");
  auto& concat = b.Node("Concat", {"batch1", "minus_one"}, {"target"}, "concat");
  OnnxModelBuilder::IntAttr(concat, "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"}, "flatten");
}

TEST(TransformConvertersTest, ShapeArithmeticOnAStaticInputFoldsToOneReshape) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3, 4}).Output("y");
  AddFlattenByShapeArithmetic(b);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const Expr& body = Main(*module)->body;
  EXPECT_EQ(CallOps(body), std::vector<std::string>{"reshape"});
  const auto* reshape = body.as<CallNode>();
  EXPECT_EQ(reshape->attrs->Find("newshape")->get<AttrValue::Array>().size(), 2u);
  EXPECT_EQ(*reshape->attrs->Find("newshape"), IntArray({2, 12}));
  EXPECT_TRUE(reshape->args[0].same_as(Main(*module)->params[0]));
  EXPECT_EQ(TypeOf(body), "Tensor[(2, 12), float32]");
  EXPECT_EQ(SpanSourceNames(body->span), std::vector<std::string>{"flatten"});
}

TEST(TransformConvertersTest, ShapeArithmeticKeepsASymbolicBatch) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 3, 4}, onnx::TensorProto::FLOAT, {"N"}).Output("y");
  AddFlattenByShapeArithmetic(b);
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const Expr& body = Main(*module)->body;
  // The target (N, -1) is only partly known; the -1 is computed (12) and N
  // becomes reshape's one inferred extent, so the graph is still one reshape.
  EXPECT_EQ(CallOps(body), std::vector<std::string>{"reshape"});
  EXPECT_EQ(*body.as<CallNode>()->attrs->Find("newshape"), IntArray({-1, 12}));
  EXPECT_EQ(TypeOf(body), "Tensor[(N, 12), float32]");
}

TEST(TransformConvertersTest, GatherOfAStaticDimOfASymbolicShapeFolds) {
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 3, 4}, onnx::TensorProto::FLOAT, {"N"}).Output("c");
  Int64Initializer(b, "one", {}, {1});
  Int64Initializer(b, "two", {}, {2});
  b.Node("Shape", {"x"}, {"shape"}, "shape");
  b.Node("Gather", {"shape", "one"}, {"d1"}, "d1");
  b.Node("Gather", {"shape", "two"}, {"d2"}, "d2");
  b.Node("Mul", {"d1", "d2"}, {"c"}, "mul");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const Expr& body = Main(*module)->body;
  EXPECT_EQ(Int64Values(body), std::vector<int64_t>{12});
  EXPECT_EQ(SpanSourceNames(body->span), std::vector<std::string>{"mul"});
}

TEST(TransformConvertersTest, ReshapeResolvesZeroAndMinusOne) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3, 4}).Output("y");
  Int64Initializer(b, "shape", {3}, {0, -1, 2});
  b.Node("Reshape", {"x", "shape"}, {"y"}, "r");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(*Main(*module)->body.as<CallNode>()->attrs->Find("newshape"), IntArray({2, 6, 2}));
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(2, 6, 2), float32]");
}

TEST(TransformConvertersTest, ReshapeErrorsNameTheNode) {
  {
    OnnxModelBuilder b(13);
    b.Input("x", {2, 3}).Input("shape", {2}, onnx::TensorProto::INT64).Output("y");
    b.Node("Reshape", {"x", "shape"}, {"y"}, "dynamic");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(Message(module.status()),
              "ONNX node 'dynamic' (#0, Reshape): input 1 (shape) decides the shape of output 0, "
              "but it is known only at run time and the model does not declare a static shape for "
              "that output (declare one, make the input a constant, or give its value at compile "
              "time)");
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {2, 3}).Output("y");
    Int64Initializer(b, "shape", {2}, {4, 2});
    b.Node("Reshape", {"x", "shape"}, {"y"});
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(Message(module.status()),
              "ONNX node 'Reshape_0' (#0, Reshape): cannot reshape (2, 3) (6 elements) to (4, 2) "
              "(8 elements)");
  }
  {
    // Two symbolic dims copied by 0 and a -1: three unknowns, one allowed.
    OnnxModelBuilder b(13);
    b.Input("x", {-1, -1, 6}, onnx::TensorProto::FLOAT, {"B", "L"}).Output("y");
    Int64Initializer(b, "shape", {4}, {0, 0, -1, 3});
    b.Node("Reshape", {"x", "shape"}, {"y"}, "heads");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_FALSE(module.ok());
    EXPECT_NE(Message(module.status()).find("ONNX node 'heads' (#0, Reshape): the target shape"),
              std::string::npos)
        << module.status();
  }
}

TEST(TransformConvertersTest, ReshapeCopiesOneSymbolicDimByZero) {
  // (B, 6) with shape (0, -1, 3): B copied, -1 computed as 2.
  OnnxModelBuilder b(13);
  b.Input("x", {-1, 6}, onnx::TensorProto::FLOAT, {"B"}).Output("y");
  Int64Initializer(b, "shape", {3}, {0, -1, 3});
  b.Node("Reshape", {"x", "shape"}, {"y"}, "r");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(B, 2, 3), float32]");
}

TEST(TransformConvertersTest, ConstantOfShapeChecksTheLimitBeforeAllocating) {
  {
    OnnxModelBuilder b(13);
    b.Output("y");
    Int64Initializer(b, "shape", {2}, {1 << 20, 1 << 20});
    b.Node("ConstantOfShape", {"shape"}, {"y"}, "huge");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(Message(module.status()),
              "ONNX node 'huge' (#0, ConstantOfShape): the filled tensor of shape (1048576, "
              "1048576) would have 1099511627776 elements, more than the limit of 2147483648");
  }
  {
    OnnxModelBuilder b(13);
    b.Output("y");
    Int64Initializer(b, "shape", {3}, {INT64_MAX / 2, 4, 1});
    b.Node("ConstantOfShape", {"shape"}, {"y"}, "overflow");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_FALSE(module.ok());
    EXPECT_NE(Message(module.status()).find("overflows int64"), std::string::npos);
  }
  {
    // A configurable limit.
    OnnxModelBuilder b(13);
    b.Output("y");
    Int64Initializer(b, "shape", {1}, {100});
    b.Node("ConstantOfShape", {"shape"}, {"y"}, "small");
    OnnxImportOptions options;
    options.max_tensor_elements = 99;
    auto module = ImportOnnxModel(b.Bytes(), options);
    ASSERT_FALSE(module.ok());
    EXPECT_NE(Message(module.status()).find("more than the limit of 99"), std::string::npos);
  }
}

TEST(TransformConvertersTest, ConstantsFoldWithTheNodeSpan) {
  OnnxModelBuilder b(13);
  b.Output("filled").Output("ints").Output("shape").Output("size").Output("range");
  b.Input("x", {2, 3, 5});
  Int64Initializer(b, "dims", {2}, {2, 3});
  auto& fill = b.Node("ConstantOfShape", {"dims"}, {"filled"}, "fill");
  TensorAttr(fill, "value", onnx::TensorProto::INT64, {1}, {7});
  auto& ints = b.Node("Constant", {}, {"ints"}, "ints");
  OnnxModelBuilder::IntsAttr(ints, "value_ints", {4, 5, 6});
  auto& shape = b.Node("Shape", {"x"}, {"shape"}, "shape");
  OnnxModelBuilder::IntAttr(shape, "start", -2);
  b.Node("Size", {"x"}, {"size"}, "size");
  Int64Initializer(b, "start", {}, {10});
  Int64Initializer(b, "limit", {}, {1});
  Int64Initializer(b, "delta", {}, {-4});
  b.Node("Range", {"start", "limit", "delta"}, {"range"}, "range");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  ASSERT_NE(outputs, nullptr);
  EXPECT_EQ(Int64Values(outputs->elements[0]), std::vector<int64_t>(6, 7));
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2, 3), int64]");
  EXPECT_EQ(Int64Values(outputs->elements[1]), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(Int64Values(outputs->elements[2]), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(Int64Values(outputs->elements[3]), std::vector<int64_t>{30});
  EXPECT_EQ(Int64Values(outputs->elements[4]), (std::vector<int64_t>{10, 6, 2}));
  const char* names[] = {"fill", "ints", "shape", "size", "range"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(SpanSourceNames(outputs->elements[i]->span), std::vector<std::string>{names[i]});
  }
  EXPECT_TRUE(CallOps(Main(*module)->body).empty());
}

TEST(TransformConvertersTest, ShapeAndSizeOfSymbolicTensorsStayOps) {
  OnnxModelBuilder b(15);
  b.Input("x", {-1, 3, 4}, onnx::TensorProto::FLOAT, {"N"}).Output("s").Output("n");
  auto& shape = b.Node("Shape", {"x"}, {"s"}, "shape");
  OnnxModelBuilder::IntAttr(shape, "end", 2);
  b.Node("Size", {"x"}, {"n"}, "size");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(CallOps(Main(*module)->body),
            (std::vector<std::string>{"shape_of", "strided_slice", "size"}));
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2), int64]");
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(), int64]");
}

TEST(TransformConvertersTest, ReductionsReadAxesFromAttributesAndInputs) {
  {
    OnnxModelBuilder b(13);  // ReduceSum takes axes as an input from opset 13
    b.Input("x", {2, 3, 4}).Output("y");
    Int64Initializer(b, "axes", {1}, {1});
    auto& sum = b.Node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
    OnnxModelBuilder::IntAttr(sum, "keepdims", 0);
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(2, 4), float32]");
  }
  {
    OnnxModelBuilder b(13);  // ... and ReduceMean still as an attribute
    b.Input("x", {2, 3, 4}).Output("y");
    auto& mean = b.Node("ReduceMean", {"x"}, {"y"}, "mean");
    OnnxModelBuilder::IntsAttr(mean, "axes", {-1});
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(2, 3, 1), float32]");
  }
  {
    // Empty axes with noop_with_empty_axes: no reduction, the input itself.
    OnnxModelBuilder b(13);
    b.Input("x", {3, 2}).Output("y");
    Int64Initializer(b, "axes", {0}, {});
    auto& sum = b.Node("ReduceSum", {"x", "axes"}, {"y"}, "noop");
    OnnxModelBuilder::IntAttr(sum, "noop_with_empty_axes", 1);
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_TRUE(Main(*module)->body.same_as(Main(*module)->params[0]));
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {2, 3}).Output("y");
    auto& arg = b.Node("ArgMax", {"x"}, {"y"}, "argmax");
    OnnxModelBuilder::IntAttr(arg, "axis", 1);
    OnnxModelBuilder::IntAttr(arg, "select_last_index", 1);
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(2, 1), int64]");
  }
}

TEST(TransformConvertersTest, ReduceExpansionsCarryTheNodeNameOnEveryPiece) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3, 4}).Output("lse").Output("l2");
  auto& lse = b.Node("ReduceLogSumExp", {"x"}, {"lse"}, "lse");
  OnnxModelBuilder::IntsAttr(lse, "axes", {1});
  OnnxModelBuilder::IntAttr(lse, "keepdims", 0);
  auto& l2 = b.Node("ReduceL2", {"x"}, {"l2"}, "l2");
  OnnxModelBuilder::IntsAttr(l2, "axes", {0, 2});
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2, 4), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(1, 3, 1), float32]");
  EXPECT_EQ(CallOps(outputs->elements[0]),
            (std::vector<std::string>{"max", "subtract", "exp", "sum", "log", "max", "add"}));
  EXPECT_EQ(CallOps(outputs->elements[1]), (std::vector<std::string>{"multiply", "sum", "sqrt"}));
  for (int i = 0; i < 2; ++i) {
    PostOrderVisit(outputs->elements[i], [&](const Expr& e) {
      if (e.as<CallNode>()) {
        EXPECT_EQ(SpanSourceNames(e->span), std::vector<std::string>{i == 0 ? "lse" : "l2"});
      }
    });
  }
}

TEST(TransformConvertersTest, SplitSliceSqueezeUnsqueezeAcrossOpsets) {
  {
    OnnxModelBuilder b(13);  // split sizes as an input
    b.Input("x", {2, 6}).Output("a").Output("b");
    Int64Initializer(b, "split", {2}, {2, 4});
    auto& split = b.Node("Split", {"x", "split"}, {"a", "b"}, "split");
    OnnxModelBuilder::IntAttr(split, "axis", 1);
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    const auto* outputs = Main(*module)->body.as<TupleNode>();
    EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2, 2), float32]");
    EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(2, 4), float32]");
  }
  {
    OnnxModelBuilder b(11);  // equal parts, one per output
    b.Input("x", {6}).Output("a").Output("b").Output("c");
    b.Node("Split", {"x"}, {"a", "b", "c"}, "split");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body.as<TupleNode>()->elements[2]), "Tensor[(2), float32]");
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {20, 10, 5}).Output("y");
    Int64Initializer(b, "starts", {3}, {20, 10, 4});
    Int64Initializer(b, "ends", {3}, {0, 0, 1});
    Int64Initializer(b, "axes", {3}, {0, 1, 2});
    Int64Initializer(b, "steps", {3}, {-1, -3, -2});
    b.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(19, 3, 2), float32]");
  }
  {
    OnnxModelBuilder b(9);  // Slice bounds as attributes before opset 10
    b.Input("x", {4, 6}).Output("y");
    auto& slice = b.Node("Slice", {"x"}, {"y"}, "slice");
    OnnxModelBuilder::IntsAttr(slice, "starts", {1});
    OnnxModelBuilder::IntsAttr(slice, "ends", {1000});
    OnnxModelBuilder::IntsAttr(slice, "axes", {1});
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(4, 5), float32]");
  }
  {
    // Unsqueeze positions refer to the output: (3, 4) with axes (3, 0) -> (1, 3, 4, 1).
    OnnxModelBuilder b(11);
    b.Input("x", {3, 4}).Output("y");
    auto& unsqueeze = b.Node("Unsqueeze", {"x"}, {"y"}, "unsqueeze");
    OnnxModelBuilder::IntsAttr(unsqueeze, "axes", {3, 0});
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3, 4, 1), float32]");
    EXPECT_EQ(CallOps(Main(*module)->body),
              (std::vector<std::string>{"expand_dims", "expand_dims"}));
  }
  {
    OnnxModelBuilder b(13);  // Squeeze axes as an input
    b.Input("x", {1, 3, 1}).Output("y");
    Int64Initializer(b, "axes", {1}, {-1});
    b.Node("Squeeze", {"x", "axes"}, {"y"}, "squeeze");
    auto module = ImportOnnxModel(b.Bytes());
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(TypeOf(Main(*module)->body), "Tensor[(1, 3), float32]");
  }
}

TEST(TransformConvertersTest, ExpandFlattenTileConcatTranspose) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 1}).Input("z", {-1, 2, 3}, onnx::TensorProto::FLOAT, {"N"});
  b.Output("expanded").Output("flat").Output("tiled").Output("joined").Output("t");
  Int64Initializer(b, "target", {3}, {2, 1, 4});
  b.Node("Expand", {"x", "target"}, {"expanded"}, "expand");
  b.Node("Flatten", {"z"}, {"flat"}, "flatten");
  Int64Initializer(b, "repeats", {2}, {2, 3});
  b.Node("Tile", {"x", "repeats"}, {"tiled"}, "tile");
  auto& concat = b.Node("Concat", {"x", "x", "x"}, {"joined"}, "concat");
  OnnxModelBuilder::IntAttr(concat, "axis", -1);
  b.Node("Transpose", {"z"}, {"t"}, "transpose");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  // Expand broadcasts both ways: (3, 1) with (2, 1, 4) gives (2, 3, 4).
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(N, 6), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[2]), "Tensor[(6, 3), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[3]), "Tensor[(3, 3), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[4]), "Tensor[(3, 2, N), float32]");
}

TEST(TransformConvertersTest, IndexingConverters) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Input("idx", {2, 2}, onnx::TensorProto::INT64);
  b.Output("gathered").Output("values").Output("indices").Output("hot").Output("tri");
  b.Output("cum").Output("nz").Output("uniq");
  Int64Initializer(b, "k", {1}, {2});
  Int64Initializer(b, "depth", {}, {5});
  b.FloatInitializer("off_on", {2}, {0.0f, 1.0f});
  Int64Initializer(b, "axis", {}, {1});
  auto& gather = b.Node("Gather", {"x", "idx"}, {"gathered"}, "gather");
  OnnxModelBuilder::IntAttr(gather, "axis", 1);
  b.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  b.Node("OneHot", {"idx", "depth", "off_on"}, {"hot"}, "onehot");
  b.Node("Trilu", {"x"}, {"tri"}, "trilu");
  b.Node("CumSum", {"x", "axis"}, {"cum"}, "cumsum");
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Unique", {"x"}, {"uniq"}, "unique");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  EXPECT_EQ(TypeOf(outputs->elements[0]), "Tensor[(3, 2, 2), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(3, 2), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[2]), "Tensor[(3, 2), int64]");
  EXPECT_EQ(TypeOf(outputs->elements[3]), "Tensor[(2, 2, 5), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[4]), "Tensor[(3, 4), float32]");
  EXPECT_EQ(TypeOf(outputs->elements[5]), "Tensor[(3, 4), float32]");
  // Undeclared data-dependent extents are bounded outputs: NonZero one column per element of x,
  // Unique (without an axis, of the flattened input) one entry per element; main appends their
  // run-time lengths and the module lists (output, axis, length output) for each.
  EXPECT_EQ(TypeOf(outputs->elements[6]), "Tensor[(2, 12), int64]");
  EXPECT_EQ(TypeOf(outputs->elements[7]), "Tensor[(12), float32]");
  ASSERT_EQ(outputs->elements.size(), 10u);
  EXPECT_EQ(TypeOf(outputs->elements[8]), "Tensor[(), int64]");
  EXPECT_EQ(TypeOf(outputs->elements[9]), "Tensor[(), int64]");
  const AttrValue* bounded = (*module)->attrs->Find(kBoundedOutputsAttr);
  ASSERT_NE(bounded, nullptr);
  EXPECT_EQ(*bounded, IntArray({6, 1, 8, 7, 0, 9}));
}

TEST(TransformConvertersTest, EveryCreatedExpressionCarriesItsNodeName) {
  OnnxModelBuilder b(13);
  b.Input("x", {4, 6}).Output("values").Output("wide");
  Int64Initializer(b, "k", {1}, {2});
  Int64Initializer(b, "axes", {2}, {0, 3});
  b.Node("Split", {"x"}, {"a", "b"}, "split");
  b.Node("TopK", {"a", "k"}, {"values", "indices"}, "topk");
  b.Node("Unsqueeze", {"b", "axes"}, {"wide"}, "unsqueeze");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* outputs = Main(*module)->body.as<TupleNode>();
  ASSERT_NE(outputs, nullptr);
  EXPECT_EQ(TypeOf(outputs->elements[1]), "Tensor[(1, 2, 6, 1), float32]");
  std::map<std::string, int> per_node;
  const Expr& body = Main(*module)->body;
  PostOrderVisit(body, [&](const Expr& e) {
    // The output tuple is the importer's and merges the names of its producers.
    if (e.as<VarNode>() || e.as<OpNode>() || e.same_as(body)) return;
    std::vector<std::string> names = SpanSourceNames(e->span);
    ASSERT_EQ(names.size(), 1u) << ObjectKindName(e->kind());
    ++per_node[names[0]];
  });
  // split: the call and its two items; topk: the call and item 0 (k is read
  // at import); unsqueeze: one expand_dims per run of new axes.
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"split", 3}, {"topk", 2}, {"unsqueeze", 2}}));
}

TEST(TransformConvertersTest, IntegerArithmeticOnConstantsFolds) {
  OnnxModelBuilder b(13);
  b.Output("y");
  Int64Initializer(b, "a", {2}, {6, 8});
  Int64Initializer(b, "b", {}, {2});
  b.Node("Div", {"a", "b"}, {"q"}, "div");
  b.Node("Sub", {"q", "b"}, {"y"}, "sub");
  auto module = ImportOnnxModel(b.Bytes());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Int64Values(Main(*module)->body), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(SpanSourceNames(Main(*module)->body->span), std::vector<std::string>{"sub"});
}

TEST(TransformConvertersTest, ValidationErrorsNameTheProblem) {
  auto import_error = [](OnnxModelBuilder& b) {
    auto module = ImportOnnxModel(b.Bytes());
    return module.ok() ? std::string("ok") : Message(module.status());
  };
  {
    OnnxModelBuilder b(13);
    b.Input("x", {2, 3}).Output("y");
    auto& t = b.Node("Transpose", {"x"}, {"y"}, "t");
    OnnxModelBuilder::IntsAttr(t, "perm", {0, 2});
    EXPECT_EQ(import_error(b),
              "ONNX node 't' (#0, Transpose): axis 2 is out of range for rank 2 (expected -2 to "
              "1)");
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {2, 3}).Output("y");
    Int64Initializer(b, "i", {}, {5});
    auto& g = b.Node("Gather", {"x", "i"}, {"y"}, "g");
    OnnxModelBuilder::IntAttr(g, "axis", 2);
    EXPECT_EQ(import_error(b),
              "ONNX node 'g' (#0, Gather): axis 2 is out of range for rank 2 (expected -2 to 1)");
  }
  {
    // Folding checks indices it evaluates.
    OnnxModelBuilder b(13);
    b.Output("y");
    Int64Initializer(b, "data", {3}, {1, 2, 3});
    Int64Initializer(b, "i", {}, {3});
    b.Node("Gather", {"data", "i"}, {"y"}, "g");
    EXPECT_EQ(import_error(b),
              "ONNX node 'g' (#0, Gather): index 3 is out of range for axis 0 of extent 3");
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {6}).Output("a").Output("b");
    Int64Initializer(b, "split", {2}, {2, 3});
    b.Node("Split", {"x", "split"}, {"a", "b"}, "s");
    EXPECT_EQ(import_error(b),
              "ONNX node 's' (#0, Split): split sizes add up to 5, but axis 0 has extent 6");
  }
  {
    OnnxModelBuilder b(16);
    b.Input("x", {4}).Input("i", {1}, onnx::TensorProto::INT64).Input("u", {1}).Output("y");
    auto& s = b.Node("ScatterElements", {"x", "i", "u"}, {"y"}, "s");
    auto* attr = s.add_attribute();
    attr->set_name("reduction");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s("average");
    EXPECT_EQ(import_error(b),
              "ONNX node 's' (#0, ScatterElements): attribute 'reduction' is 'average', expected "
              "none, add, mul, max or min");
  }
  {
    OnnxModelBuilder b(13);
    b.Input("x", {3}).Input("n", {}, onnx::TensorProto::INT64).Output("y");
    b.Node("Tile", {"x", "n"}, {"y"}, "tile");
    EXPECT_EQ(import_error(b),
              "ONNX node 'tile' (#0, Tile): input 1 (repeats) decides the shape of output 0, but "
              "it is known only at run time and the model does not declare a static shape for "
              "that output (declare one, make the input a constant, or give its value at compile "
              "time)");
  }
}

TEST(TransformConvertersTest, EveryCoveredOpTypeIsSupported) {
  std::vector<std::string> supported = SupportedOnnxOps();
  for (const char* op : {"ReduceSum",       "ReduceMean",      "ReduceMax",      "ReduceMin",
                         "ReduceProd",      "ReduceL1",        "ReduceL2",       "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare", "ArgMax",         "ArgMin",
                         "Reshape",         "Transpose",       "Concat",         "Split",
                         "Slice",           "Gather",          "GatherElements", "GatherND",
                         "Squeeze",         "Unsqueeze",       "Expand",         "Tile",
                         "Flatten",         "CumSum",          "OneHot",         "TopK",
                         "ScatterElements", "Scatter",         "ScatterND",      "Trilu",
                         "Range",           "NonZero",         "Unique",         "Compress",
                         "EyeLike",         "Shape",           "Size",           "Constant",
                         "ConstantOfShape", "CastLike",        "ReverseSequence"}) {
    EXPECT_NE(std::find(supported.begin(), supported.end(), op), supported.end()) << op;
  }
}

}  // namespace
}  // namespace kiln
