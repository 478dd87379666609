// Figures for the ONNX frontend (issue 3): import time of a ResNet-50-sized
// model (about 25M parameters, ~175 nodes) built here with the ONNX protobuf
// API, per node and for the weights separately, and what span filling costs
// in time and memory.
//
// Times are medians of repeated runs, each also given as a ratio to a
// baseline measured in the same process: parsing the same bytes into an
// onnx::ModelProto, the floor any importer pays.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bench/heap_counter.h"
#include "engine/frontend/onnx/importer.h"


namespace {

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

  std::string Weight(const std::vector<int64_t>& dims) {
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
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>((rng_() % 2001) - 1000) * 1e-4f;
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
    std::string scale = Weight({channels}), bias = Weight({channels});
    std::string mean = Weight({channels}), var = Weight({channels});
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

double MedianSeconds(int runs, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Peak heap growth while importing (the model bytes themselves excluded).
int64_t ImportPeakBytes(const std::string& bytes, const kiln::OnnxImportOptions& options) {
  int64_t base = kiln::bench::HeapBytes();
  kiln::bench::ResetHeapPeak();
  auto module = kiln::ImportOnnxModel(bytes, options);
  if (!module.ok()) std::abort();
  return kiln::bench::HeapPeakBytes() - base;
}

}  // namespace

int main() {
  ResNetBuilder full_builder(true);
  std::string full = full_builder.Build();
  ResNetBuilder graph_builder(false);
  std::string graph_only = graph_builder.Build();
  const int runs = 9;

  kiln::OnnxImportOptions spans_on;
  kiln::OnnxImportOptions spans_off;
  spans_off.span_filling = false;
  for (const std::string* bytes : {&full, &graph_only}) {
    auto check = kiln::ImportOnnxModel(*bytes, spans_on);
    if (!check.ok()) {
      std::fprintf(stderr, "import failed: %s\n", std::string(check.status().message()).c_str());
      return 1;
    }
  }

  double parse = MedianSeconds(runs, [&] {
    onnx::ModelProto model;
    model.ParseFromString(full);
  });
  // On and off alternate within each round, so load from other processes
  // hits both alike.
  std::vector<double> on_times, off_times, graph_on_times, graph_off_times;
  auto time_once = [](const std::string& bytes, const kiln::OnnxImportOptions& options) {
    auto start = std::chrono::steady_clock::now();
    auto module = kiln::ImportOnnxModel(bytes, options);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!module.ok()) std::abort();
    return t;
  };
  for (int round = 0; round < runs; ++round) {
    on_times.push_back(time_once(full, spans_on));
    off_times.push_back(time_once(full, spans_off));
    for (int k = 0; k < 20; ++k) {
      graph_on_times.push_back(time_once(graph_only, spans_on));
      graph_off_times.push_back(time_once(graph_only, spans_off));
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double with_spans = median(on_times), without_spans = median(off_times);
  double graph_time = median(graph_on_times), graph_no_spans = median(graph_off_times);
  int64_t mem_on = ImportPeakBytes(full, spans_on);
  int64_t mem_off = ImportPeakBytes(full, spans_off);

  int nodes = full_builder.nodes();
  std::printf("ONNX import, ResNet-50-sized model: %d nodes, %.1fM parameters, %.1f MB\n", nodes,
              full_builder.parameters() / 1e6, full.size() / 1e6);
  std::printf("  baseline ModelProto parse:   %7.2f ms\n", parse * 1e3);
  std::printf("  import (spans on):           %7.2f ms  %5.2fx baseline  (target <= 100 ms)\n",
              with_spans * 1e3, with_spans / parse);
  std::printf("  import (spans off):          %7.2f ms  %5.2fx baseline\n", without_spans * 1e3,
              without_spans / parse);
  std::printf("  graph only (no weights):     %7.2f ms  = %.1f us per node\n", graph_time * 1e3,
              graph_time * 1e6 / nodes);
  std::printf("  weights (full - graph only): %7.2f ms\n", (with_spans - graph_time) * 1e3);
  std::printf("  span filling time overhead:  %+6.2f%% of import (graph only: %+6.2f%%)  (target <= 5%%)\n",
              (with_spans / without_spans - 1) * 100, (graph_time / graph_no_spans - 1) * 100);
  std::printf("  peak import memory: %.1f MB spans on, %.1f MB off: %+6.3f%%  (target <= 1%%)\n",
              mem_on / 1e6, mem_off / 1e6, (double(mem_on) / double(mem_off) - 1) * 100);
  return 0;
}
