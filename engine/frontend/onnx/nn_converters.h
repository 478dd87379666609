// Shared by the converters of the nn family, which RegisterNnConverters
// (nn_converters.cc) registers together with the window-op converters of
// nn_window_converters.cc: rejecting outputs a converter does not produce.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/scalar_tensors.h"

namespace kiln::onnx_frontend {

// An error when the node asks for output `index` or later (non-empty output
// names): `names` are the ONNX names of those outputs, `why` says why not.
absl::Status RejectOutputsFrom(const ConvertContext& ctx, int index,
                               const std::vector<std::string>& names, const std::string& why);

// nn.conv{1,2,3}d of `x` and `weight` with the node's Conv attributes (strides, pads, auto_pad,
// dilations, group, kernel_shape); ConvInteger and QLinearConv use it on integer operands.
absl::StatusOr<Expr> ConvFromAttributes(ConvertContext& ctx, const Expr& x, const Expr& weight);

// Pad (opset 11+) whose pads input only a run knows, to the shape the model declares for its
// output, in `mode` (constant with `value`, edge, reflect): run_time_pad.cc.
absl::StatusOr<Expr> PadToDeclaredShape(ConvertContext& ctx, const Expr& input,
                                        const std::string& mode, const Expr& value);

// Conv, ConvTranspose, pooling, Pad, Resize, Upsample, DepthToSpace, SpaceToDepth.
void RegisterWindowConverters(ConverterTable& table);  // nn_window_converters.cc

}  // namespace kiln::onnx_frontend
