// ONNX models the integration tests send, built with ONNX's protobuf API:
// a small residual CNN that compiles in milliseconds, the ResNet-50-sized
// model of the benchmarks for work that must take a while, and broken ones.
#pragma once

#include <string>

namespace kiln::testing {

// input[1,3,8,8] -> Conv(3->4, 3x3, pad 1) "conv" -> Relu "relu" -> Add "residual" (with the
// conv output) -> output. `scale` multiplies every weight (distinct models, distinct compile ids).
std::string SmallModel(float scale = 1.0f);
// ~100 MB, ~1 s to compile (bench/resnet_model.h).
std::string ResNet50Model();
// The small model with a ConvInteger node, which Kiln does not implement.
std::string UnsupportedOpModel();
// Conv whose weight has 5 input channels for a 3-channel input.
std::string ShapeMismatchModel();

}  // namespace kiln::testing
