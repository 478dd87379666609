// A fused chain in which every op reads the previous value twice (y = y + y, forty times): fully
// inlined its expression would double at every step (2^40 loads, a compile that never ends).
// The default schedule stores a stage once its inlined size passes kMaxInlinedSize, so the
// chain compiles at once and computes x * 2^40 (exact in float32: a power of two).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;

TEST(InlineBoundTest, ADoublingChainCompilesAndComputesExactly) {
  OnnxModelBuilder b;
  b.Input("x0", {4}).Output("x40");
  for (int k = 0; k < 40; ++k) {
    std::string in = "x" + std::to_string(k), out = "x" + std::to_string(k + 1);
    b.Node("Add", {in, in}, {out}, "add" + std::to_string(k));
  }
  auto out = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {4},
                                                               {1, -0.5, 0.25, 3})});
  ASSERT_EQ(out.size(), 1u);
  const double scale = std::ldexp(1.0, 40);
  EXPECT_THAT(out[0], ::testing::ElementsAre(scale, -0.5 * scale, 0.25 * scale, 3 * scale));
}

}  // namespace
}  // namespace kiln::driver
