// OnnxModelInputs over onnx.ModelProto.
#include "clients/web/gateway/model_inputs.h"

#include <set>

#include "onnx/onnx_pb.h"

namespace kiln::explorer {

absl::StatusOr<nlohmann::json> OnnxModelInputs(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    return absl::InvalidArgumentError(
        "not an ONNX model: the file does not parse as an onnx.ModelProto with a graph");
  }
  std::set<std::string> initializers;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) initializers.insert(tensor.name());
  nlohmann::json inputs = nlohmann::json::array();
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    nlohmann::json dims = nlohmann::json::array();
    if (input.type().has_tensor_type() && input.type().tensor_type().has_shape()) {
      for (const onnx::TensorShapeProto::Dimension& dim : input.type().tensor_type().shape().dim()) {
        if (dim.has_dim_value()) {
          dims.push_back({{"value", dim.dim_value()}});
        } else {
          dims.push_back({{"param", dim.dim_param()}});
        }
      }
    }
    inputs.push_back({{"name", input.name()},
                      {"tensor", input.type().has_tensor_type()},
                      {"dims", std::move(dims)}});
  }
  return inputs;
}

}  // namespace kiln::explorer
