// A small helper for tests: builds ONNX models with the real protobuf API.
#pragma once

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace kiln::testing {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("kiln-test");
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  // dims: >= 0 static, -1 unnamed symbolic; names in `symbols` by position.
  OnnxModelBuilder& Input(const std::string& name, std::vector<int64_t> dims,
                          int32_t elem_type = onnx::TensorProto::FLOAT,
                          std::vector<std::string> symbols = {}) {
    auto* input = model_.mutable_graph()->add_input();
    input->set_name(name);
    auto* tensor = input->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* shape = tensor->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* dim = shape->add_dim();
      if (i < symbols.size() && !symbols[i].empty()) {
        dim->set_dim_param(symbols[i]);
      } else if (dims[i] >= 0) {
        dim->set_dim_value(dims[i]);
      }
    }
    return *this;
  }

  OnnxModelBuilder& Output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  // An output whose type the model declares (static dims).
  OnnxModelBuilder& Output(const std::string& name, std::vector<int64_t> dims,
                           int32_t elem_type = onnx::TensorProto::FLOAT) {
    auto* output = model_.mutable_graph()->add_output();
    output->set_name(name);
    auto* tensor = output->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* shape = tensor->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    return *this;
  }

  onnx::TensorProto& FloatInitializer(const std::string& name, std::vector<int64_t> dims,
                                      std::vector<float> values) {
    auto* init = model_.mutable_graph()->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) init->add_dims(d);
    for (float v : values) init->add_float_data(v);
    return *init;
  }

  onnx::TensorProto& Int64Initializer(const std::string& name, std::vector<int64_t> dims,
                                      std::vector<int64_t> values) {
    auto* init = model_.mutable_graph()->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) init->add_dims(d);
    for (int64_t v : values) init->add_int64_data(v);
    return *init;
  }

  onnx::NodeProto& Node(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "") {
    auto* node = model_.mutable_graph()->add_node();
    node->set_op_type(op_type);
    node->set_name(name);
    for (const auto& in : inputs) node->add_input(in);
    for (const auto& out : outputs) node->add_output(out);
    return *node;
  }

  static void FloatAttr(onnx::NodeProto& node, const std::string& name, float value) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(value);
  }
  static void IntAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
  }
  static void IntsAttr(onnx::NodeProto& node, const std::string& name,
                       std::vector<int64_t> values) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) attr->add_ints(v);
  }

  static void FloatsAttr(onnx::NodeProto& node, const std::string& name,
                         std::vector<float> values) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOATS);
    for (float v : values) attr->add_floats(v);
  }
  static void StringAttr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(value);
  }
  static void StringsAttr(onnx::NodeProto& node, const std::string& name,
                          std::vector<std::string> values) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& v : values) attr->add_strings(v);
  }

  onnx::ModelProto& model() { return model_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace kiln::testing
