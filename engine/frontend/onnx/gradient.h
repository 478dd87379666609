// The Gradient operator of ai.onnx.preview.training: reverse-mode differentiation of the graph
// at import. Unlike other converters it reads the graph around its node (the nodes between its
// `xs` and `y`), so the importer calls it directly, as it does control flow.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// True for the Gradient op (domain ai.onnx.preview.training).
bool IsGradientOp(const std::string& domain, const std::string& op_type);

// The outputs of the Gradient node `ctx` converts: d sum(y) / d x for each name x of its `xs`,
// through the nodes of `graph` that lead from them to `y` (values named in `zs`, graph inputs
// and initializers are held constant). `value_of` gives the converted value of a name (null
// when none). Differentiates Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh, Exp and
// MatMul of 2-D operands, summing over broadcast axes; another op on the path is an error
// naming it.
absl::StatusOr<std::vector<Expr>> ConvertGradient(
    ConvertContext& ctx, const onnx::GraphProto& graph,
    const std::function<Expr(const std::string&)>& value_of);

}  // namespace kiln::onnx_frontend
