#include "tests/integration/test_models.h"

#include <onnx/onnx_pb.h>

#include <vector>

#include "bench/resnet_model.h"

namespace kiln::testing {
namespace {

void AddTensorInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                   const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape();  // a scalar's shape is present and empty
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

void AddInitializer(onnx::GraphProto* graph, const std::string& name,
                    const std::vector<int64_t>& dims, float scale) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(scale * static_cast<float>(i % 7 - 3) / 8);
}

onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

void SetInts(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

// An empty opset-13 model whose graph is `name`.
onnx::ModelProto NewModel(const std::string& name) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name(name);
  return model;
}

onnx::ModelProto SmallModelProto(float scale, int weight_in_channels) {
  onnx::ModelProto model = NewModel("small");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "input", {1, 3, 8, 8});
  AddInitializer(graph, "w", {3, weight_in_channels, 3, 3}, scale);
  AddInitializer(graph, "b", {3}, scale);
  onnx::NodeProto* conv = AddNode(graph, "Conv", "conv", {"input", "w", "b"}, "c");
  SetInts(conv, "pads", {1, 1, 1, 1});
  AddNode(graph, "Relu", "relu", {"c"}, "r");
  AddNode(graph, "Add", "residual", {"r", "input"}, "output");
  AddTensorInfo(graph->mutable_output(), "output", {1, 3, 8, 8});
  return model;
}

}  // namespace

std::string ClassifierModel() {
  onnx::ModelProto model = NewModel("classifier");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "input", {1, 512});
  AddInitializer(graph, "w0", {512, 512}, 0.05f);
  AddInitializer(graph, "w1", {256, 512}, 0.05f);  // not 512: its own kernel, no shared one
  onnx::NodeProto* dense0 = AddNode(graph, "Gemm", "dense0", {"input", "w0"}, "d0");
  onnx::AttributeProto* trans = dense0->add_attribute();
  trans->set_name("transB");
  trans->set_type(onnx::AttributeProto::INT);
  trans->set_i(1);
  AddNode(graph, "Relu", "relu0", {"d0"}, "r0");
  *AddNode(graph, "Gemm", "dense1", {"r0", "w1"}, "output")->add_attribute() = *trans;
  AddTensorInfo(graph->mutable_output(), "output", {1, 256});
  return model.SerializeAsString();
}

std::string BranchModel() {
  onnx::ModelProto model = NewModel("branch");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "cond", {1});
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  AddTensorInfo(graph->mutable_input(), "input", {1, 64});
  onnx::NodeProto* node = AddNode(graph, "If", "branch", {"cond"}, "output");
  auto branch = [&](const std::string& attr_name, const std::string& op,
                    const std::string& layer) {
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(attr_name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = attr->mutable_g();
    body->set_name(attr_name);
    AddNode(body, op, layer, {"input"}, layer + "_out");
    AddTensorInfo(body->mutable_output(), layer + "_out", {1, 64});
  };
  branch("then_branch", "Relu", "then_relu");
  branch("else_branch", "Neg", "else_neg");
  AddTensorInfo(graph->mutable_output(), "output", {1, 64});
  return model.SerializeAsString();
}

std::string LoopModel() {
  onnx::ModelProto model = NewModel("loop");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "trips", {});
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  AddTensorInfo(graph->mutable_input(), "input", {1, 64});
  onnx::NodeProto* node = AddNode(graph, "Loop", "repeat", {"trips", "", "input"}, "output");
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  body->set_name("body");
  for (const char* name : {"i", "cond_in", "carried"}) body->add_input()->set_name(name);
  AddNode(body, "Identity", "keep_going", {"cond_in"}, "cond_out");
  AddNode(body, "Tanh", "step_tanh", {"carried"}, "next");
  body->add_output()->set_name("cond_out");
  AddTensorInfo(body->mutable_output(), "next", {1, 64});
  AddTensorInfo(graph->mutable_output(), "output", {1, 64});
  return model.SerializeAsString();
}

std::string NonZeroModel() {
  onnx::ModelProto model = NewModel("nonzero");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "x", {3, 4});
  AddNode(graph, "NonZero", "nonzero", {"x"}, "nz");
  AddNode(graph, "Transpose", "transpose", {"nz"}, "y");
  graph->add_output()->set_name("y");
  return model.SerializeAsString();
}

std::string BatchRowSumModel() {
  onnx::ModelProto model = NewModel("batch_row_sum");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "x", {0, 2});
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("N");
  for (auto [name, value] : {std::pair<const char*, float>{"two", 2}, {"one", 1}}) {
    onnx::TensorProto* constant = graph->add_initializer();
    constant->set_name(name);
    constant->set_data_type(onnx::TensorProto::FLOAT);
    constant->add_float_data(value);
  }
  onnx::TensorProto* axes = graph->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(1);
  AddNode(graph, "Mul", "double", {"x", "two"}, "twice");
  AddNode(graph, "Add", "shift", {"twice", "one"}, "shifted");
  onnx::NodeProto* sum = AddNode(graph, "ReduceSum", "row_sum", {"shifted", "axes"}, "y");
  onnx::AttributeProto* keepdims = sum->add_attribute();
  keepdims->set_name("keepdims");
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  graph->add_output()->set_name("y");
  return model.SerializeAsString();
}

std::string ColumnSumModel() {
  onnx::ModelProto model = NewModel("column_sum");
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "x", {0, 2});
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("S");
  onnx::TensorProto* axes = graph->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  AddNode(graph, "Relu", "relu", {"x"}, "positive");
  onnx::NodeProto* sum = AddNode(graph, "ReduceSum", "column_sum", {"positive", "axes"}, "y");
  onnx::AttributeProto* keepdims = sum->add_attribute();
  keepdims->set_name("keepdims");
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  graph->add_output()->set_name("y");
  return model.SerializeAsString();
}

std::string SequenceInputModel() {
  onnx::ModelProto model = NewModel("sequence_input");
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("s");
  input->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorProto* position = graph->add_initializer();
  position->set_name("one");
  position->set_data_type(onnx::TensorProto::INT64);
  position->add_int64_data(1);
  AddNode(graph, "SequenceAt", "at", {"s", "one"}, "y");
  graph->add_output()->set_name("y");
  return model.SerializeAsString();
}

std::string SmallModel(float scale) { return SmallModelProto(scale, 3).SerializeAsString(); }

std::string ResNet50Model() { return bench::ResNetBuilder(true).Build(); }

std::string UnsupportedOpModel() {
  onnx::ModelProto model = SmallModelProto(1.0f, 3);
  onnx::GraphProto* graph = model.mutable_graph();
  // Relu -> Multinomial's place: an op of the ONNX standard Kiln lacks.
  onnx::NodeProto* node = graph->mutable_node(1);
  node->set_op_type("Multinomial");
  node->set_name("sample");
  return model.SerializeAsString();
}

std::string ShapeMismatchModel() { return SmallModelProto(1.0f, 5).SerializeAsString(); }

namespace {

onnx::ModelProto EmptyModel() { return NewModel("attack"); }

void AddInt64Initializer(onnx::GraphProto* graph, const std::string& name,
                         std::vector<int64_t> dims, std::vector<int64_t> values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t v : values) tensor->add_int64_data(v);
}

// ConstantOfShape(`shape`) with float value 1: the node "fill" -> `output`.
void AddFill(onnx::GraphProto* graph, std::vector<int64_t> shape, const std::string& output) {
  AddInt64Initializer(graph, "shape", {static_cast<int64_t>(shape.size())}, shape);
  onnx::NodeProto* fill = AddNode(graph, "ConstantOfShape", "fill", {"shape"}, output);
  onnx::AttributeProto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(1.0f);
}

void AddReduceMax(onnx::GraphProto* graph, const std::string& input, int elem_type) {
  onnx::NodeProto* max = AddNode(graph, "ReduceMax", "max", {input}, "output");
  onnx::AttributeProto* keepdims = max->add_attribute();
  keepdims->set_name("keepdims");
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  onnx::ValueInfoProto* out = graph->add_output();
  out->set_name("output");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

}  // namespace

std::string ConstantOfShapeModel(int64_t elements) {
  onnx::ModelProto model = EmptyModel();
  AddFill(model.mutable_graph(), {elements}, "filled");
  AddReduceMax(model.mutable_graph(), "filled", onnx::TensorProto::FLOAT);
  return model.SerializeAsString();
}

std::string RangeModel(int64_t limit) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto* graph = model.mutable_graph();
  AddInt64Initializer(graph, "start", {}, {0});
  AddInt64Initializer(graph, "limit", {}, {limit});
  AddInt64Initializer(graph, "delta", {}, {1});
  AddNode(graph, "Range", "range", {"start", "limit", "delta"}, "values");
  AddReduceMax(graph, "values", onnx::TensorProto::INT64);
  return model.SerializeAsString();
}

std::string HighRankInputModel(int rank) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInfo(graph->mutable_input(), "input", std::vector<int64_t>(rank, 1));
  AddNode(graph, "Relu", "relu", {"input"}, "output");
  AddTensorInfo(graph->mutable_output(), "output", std::vector<int64_t>(rank, 1));
  return model.SerializeAsString();
}

std::string RepeatedFoldingModel(int64_t elements, int adds) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto* graph = model.mutable_graph();
  AddFill(graph, {elements}, "v0");
  for (int k = 1; k <= adds; ++k) {
    std::string previous = "v" + std::to_string(k - 1);
    AddNode(graph, "Add", "add_" + std::to_string(k), {previous, previous},
            k == adds ? "output" : "v" + std::to_string(k));
  }
  AddTensorInfo(graph->mutable_output(), "output", {elements});
  return model.SerializeAsString();
}

std::string SlowFoldingModel(int64_t n) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto* graph = model.mutable_graph();
  AddFill(graph, {n, n}, "filled");
  AddNode(graph, "MatMul", "square", {"filled", "filled"}, "output");
  AddTensorInfo(graph->mutable_output(), "output", {n, n});
  return model.SerializeAsString();
}

}  // namespace kiln::testing
