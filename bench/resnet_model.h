// A ResNet-50-sized ONNX model built with the protobuf API for benchmarks:
// 53 convolutions with batch norms, 16 bottleneck blocks, ~25.6M parameters,
// 175 nodes (deterministic weights).
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::bench {

class ResNetBuilder {
 public:
  // With `weights` false, weights are graph inputs (no data): the graph alone.
  explicit ResNetBuilder(bool weights) : weights_(weights) {
    model_.set_ir_version(8);
    auto* import = model_.add_opset_import();
    import->set_version(13);
    graph_ = model_.mutable_graph();
    graph_->set_name("resnet50");
    AddInput("input", {1, 3, 224, 224});
  }

  std::string Build() {
    std::string x = Conv("input", 3, 64, 7, 2, 3);
    x = Relu(BatchNorm(x, 64));
    x = MaxPool(x);
    int channels = 64;
    const int blocks[] = {3, 4, 6, 3};
    for (int stage = 0; stage < 4; ++stage) {
      int width = 64 << stage;
      for (int b = 0; b < blocks[stage]; ++b) {
        int stride = (b == 0 && stage > 0) ? 2 : 1;
        x = Bottleneck(x, channels, width, stride, b == 0);
        channels = width * 4;
      }
    }
    x = Node("GlobalAveragePool", {x});
    auto& flatten = *graph_->add_node();
    flatten.set_op_type("Flatten");
    flatten.add_input(x);
    flatten.add_output("flat");
    std::string w = Weight({1000, 2048});
    std::string bias = Weight({1000});
    auto& gemm = *graph_->add_node();
    gemm.set_op_type("Gemm");
    gemm.set_name("fc");
    gemm.add_input("flat");
    gemm.add_input(w);
    gemm.add_input(bias);
    gemm.add_output("logits");
    auto* trans_b = gemm.add_attribute();
    trans_b->set_name("transB");
    trans_b->set_type(onnx::AttributeProto::INT);
    trans_b->set_i(1);
    graph_->add_output()->set_name("logits");
    return model_.SerializeAsString();
  }

  int64_t parameters() const { return parameters_; }
  int nodes() const { return graph_->node_size(); }

 private:
  void AddInput(const std::string& name, const std::vector<int64_t>& dims) {
    auto* input = graph_->add_input();
    input->set_name(name);
    auto* tensor = input->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  }

  // Values uniform in [lo, hi]; by default He-uniform for the weight's fan-in (dims[1:]), so
  // activations keep their scale through 50 layers and the logits are finite numbers that
  // another runtime's can be compared with.
  std::string Weight(const std::vector<int64_t>& dims, double lo = 0, double hi = 0) {
    if (lo == hi) {
      int64_t fan_in = 1;
      for (size_t i = 1; i < dims.size(); ++i) fan_in *= dims[i];
      hi = std::sqrt(6.0 / static_cast<double>(fan_in));
      lo = -hi;
    }
    std::string name = "w" + std::to_string(counter_++);
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    parameters_ += n;
    if (!weights_) {
      AddInput(name, dims);
      return name;
    }
    auto* init = graph_->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) init->add_dims(d);
    std::vector<float> values(n);
    for (int64_t i = 0; i < n; ++i) {
      values[i] = static_cast<float>(lo + (hi - lo) * static_cast<double>(rng_() % 2001) / 2000.0);
    }
    init->set_raw_data(values.data(), values.size() * sizeof(float));
    return name;
  }

  std::string Node(const std::string& op, const std::vector<std::string>& inputs) {
    auto* node = graph_->add_node();
    node->set_op_type(op);
    node->set_name(op + "_" + std::to_string(counter_));
    for (const auto& in : inputs) node->add_input(in);
    std::string out = "t" + std::to_string(counter_++);
    node->add_output(out);
    return out;
  }

  static void Ints(onnx::NodeProto* node, const char* name, std::vector<int64_t> values) {
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) attr->add_ints(v);
  }

  std::string Conv(const std::string& x, int in, int out, int k, int stride, int pad) {
    std::string w = Weight({out, in, k, k});
    std::string y = Node("Conv", {x, w});
    auto* node = graph_->mutable_node(graph_->node_size() - 1);
    Ints(node, "kernel_shape", {k, k});
    Ints(node, "strides", {stride, stride});
    Ints(node, "pads", {pad, pad, pad, pad});
    return y;
  }

  std::string BatchNorm(const std::string& x, int channels) {
    // Inference statistics of a trained network: positive variances, scales near one.
    std::string scale = Weight({channels}, 0.5, 1.0), bias = Weight({channels}, -0.1, 0.1);
    std::string mean = Weight({channels}, -0.1, 0.1), var = Weight({channels}, 0.5, 1.5);
    return Node("BatchNormalization", {x, scale, bias, mean, var});
  }

  std::string Relu(const std::string& x) { return Node("Relu", {x}); }

  std::string MaxPool(const std::string& x) {
    std::string y = Node("MaxPool", {x});
    auto* node = graph_->mutable_node(graph_->node_size() - 1);
    Ints(node, "kernel_shape", {3, 3});
    Ints(node, "strides", {2, 2});
    Ints(node, "pads", {1, 1, 1, 1});
    return y;
  }

  std::string Bottleneck(const std::string& x, int in, int width, int stride, bool downsample) {
    std::string y = Relu(BatchNorm(Conv(x, in, width, 1, 1, 0), width));
    y = Relu(BatchNorm(Conv(y, width, width, 3, stride, 1), width));
    y = BatchNorm(Conv(y, width, width * 4, 1, 1, 0), width * 4);
    std::string shortcut = downsample ? BatchNorm(Conv(x, in, width * 4, 1, stride, 0), width * 4) : x;
    return Relu(Node("Add", {y, shortcut}));
  }

  bool weights_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  int counter_ = 0;
  int64_t parameters_ = 0;
  std::mt19937 rng_{42};
};

}  // namespace kiln::bench
