// The graph inputs of an uploaded ONNX model (names, element types, dimensions, symbolic ones
// by their names), read with ONNX's own protobuf classes, so the page can ask for the shapes of
// inputs whose dimensions are symbolic before anything is compiled, and a file that is no ONNX
// model is refused at upload with a message saying so.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace kiln::explorer {

// [{"name": "input", "dims": [{"param": "N"}, {"value": 3}, ...]}, ...] for every graph input
// that is no initializer. INVALID_ARGUMENT when `bytes` do not parse as an onnx.ModelProto.
absl::StatusOr<nlohmann::json> OnnxModelInputs(const std::string& bytes);

}  // namespace kiln::explorer
