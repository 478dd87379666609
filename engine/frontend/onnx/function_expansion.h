// ONNX operators their schema defines by a function body (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss, ...) and that have no converter of their own: ONNX's own body
// builder (static, or built from the node's attributes and input types) and expansion helper
// turn the node into the nodes of its body, which the importer converts one by one, each with
// the span of the node it came from.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/type.h"

namespace kiln::onnx_frontend {

// True when the default-domain `op_type` at `opset` has a function body.
bool HasFunctionBody(const std::string& op_type, int64_t opset);

// The default-domain op types with a function body at their latest version, sorted.
std::vector<std::string> FunctionBodyOpTypes();

struct ExpandedNode {
  onnx::GraphProto body;  // the body's nodes, over the node's inputs and outputs
  int64_t opset = 0;      // the default-domain opset the body's nodes are written for
};

// The body of `node`: internal values renamed "Func_<prefix><name>" (so `prefix` must be
// unique per expansion), attribute references resolved from the node. `input_types` are the
// Kiln types of the node's inputs (an undefined Type for a missing optional input), which a
// context-dependent body may depend on.
absl::StatusOr<ExpandedNode> ExpandFunctionNode(const onnx::NodeProto& node, int64_t opset,
                                                const std::vector<Type>& input_types,
                                                const std::string& prefix);

}  // namespace kiln::onnx_frontend
