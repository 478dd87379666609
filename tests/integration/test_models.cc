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

onnx::ModelProto SmallModelProto(float scale, int weight_in_channels) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("small");
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

std::string SmallModel(float scale) { return SmallModelProto(scale, 3).SerializeAsString(); }

std::string ResNet50Model() { return bench::ResNetBuilder(true).Build(); }

std::string UnsupportedOpModel() {
  onnx::ModelProto model = SmallModelProto(1.0f, 3);
  onnx::GraphProto* graph = model.mutable_graph();
  // Relu -> ConvInteger's place: an op of the ONNX standard Kiln lacks.
  onnx::NodeProto* node = graph->mutable_node(1);
  node->set_op_type("ConvInteger");
  node->set_name("quantized");
  return model.SerializeAsString();
}

std::string ShapeMismatchModel() { return SmallModelProto(1.0f, 5).SerializeAsString(); }

}  // namespace kiln::testing
