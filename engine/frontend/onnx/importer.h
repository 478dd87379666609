// ONNX importer: ModelProto bytes -> a typed graph-IR module whose main
// function computes the model's outputs from its inputs. Every expression
// created for ONNX node k carries the node's source name as its span
// (node.name, or `<op_type>_<k>` when the node is unnamed); graph inputs and
// initializers carry their own names.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/module.h"
#include "engine/support/compile_budget.h"

namespace kiln {

struct OnnxImportOptions {
  // Attach source spans (default on). Off skips all span work.
  bool span_filling = true;
  // Initializers become parameters of main (after the graph inputs) instead
  // of Constants.
  bool initializers_as_params = false;
  // Static shapes for graph inputs, replacing symbolic or fixed dims.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // The element count and shapes of sequence graph inputs (a sequence's length is part of its
  // static type in Kiln, as a tensor's shape is): element i of input `name` becomes the tensor
  // parameter `name.i` of main, and the sequence a tuple of them. A sequence graph output is
  // returned as its elements, in order, among main's outputs.
  std::map<std::string, std::vector<std::vector<int64_t>>> input_sequence_shapes;
  // Optional graph inputs that hold no value (an empty optional). Any other optional input holds
  // one, typed by input_shapes or input_sequence_shapes as a plain input would be; an optional
  // graph output is returned as its value's tensors (none when empty).
  std::set<std::string> empty_optional_inputs;
  // Values of graph inputs known at compile time (specialization, as TVM's
  // freeze_params does for chosen inputs). A value is used only where an
  // operator needs one at compile time (a Reshape's shape, TopK's k, Resize's
  // scales, ...); everywhere else the input stays a parameter of main.
  std::map<std::string, TensorData> input_values;
  // Limits, checked before anything is allocated.
  uint64_t max_model_bytes = uint64_t{4} << 30;
  int64_t max_tensor_elements = int64_t{1} << 31;
  int max_graph_nodes = 1'000'000;
  // The compile's budget (not owned; may be null): tensors the import
  // materializes (initializers, Constant nodes, ConstantOfShape, Range) are
  // charged to it before they are allocated, and its cancellation is polled
  // between nodes. Tensor ranks are limited to kMaxTensorRank.
  CompileBudget* budget = nullptr;
};

absl::StatusOr<IRModule> ImportOnnxModel(std::string_view model_bytes,
                                         const OnnxImportOptions& options = {});

// The module attribute listing main's bounded outputs: outputs whose extent along one axis only a
// run decides (NonZero, Compress, Unique, NonMaxSuppression and TopK of a run-time K where the
// model declares no static shape), compiled at their static upper bound. Per bounded output three
// ints: its index among main's outputs, the axis, and the index of the int64 scalar output main
// appends (after the model's outputs) holding how many entries along the axis the run filled; the
// rest of the axis is padding.
inline constexpr std::string_view kBoundedOutputsAttr = "bounded_outputs";

// The ONNX op types the importer converts, sorted.
std::vector<std::string> SupportedOnnxOps();
// The ONNX op types without a converter that the importer expands from their ONNX function
// body (the body's ops must be supported), sorted.
std::vector<std::string> FunctionBodyOnnxOps();

}  // namespace kiln
