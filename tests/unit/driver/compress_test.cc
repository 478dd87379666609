// Compress whose condition is known at import (here an initializer): a gather of the selected
// positions with a static extent, along an axis or over the flattened input. Expected values
// picked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using testing::OnnxModelBuilder;
using ::testing::ElementsAre;

std::vector<double> Compress(std::vector<int32_t> condition, bool with_axis) {
  OnnxModelBuilder b;
  b.Input("x", {3, 2}).Output("y");
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name("condition");
  init->set_data_type(onnx::TensorProto::BOOL);
  init->add_dims(static_cast<int64_t>(condition.size()));
  for (int32_t v : condition) init->add_int32_data(v);
  onnx::NodeProto& node = b.Node("Compress", {"x", "condition"}, {"y"}, "compress");
  if (with_axis) OnnxModelBuilder::IntAttr(node, "axis", 0);
  auto out = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 2},
                                                               {1, 2, 3, 4, 5, 6})});
  return out.empty() ? std::vector<double>{} : out[0];
}

TEST(CompressTest, AKnownConditionGathersTheSelectedPositions) {
  EXPECT_THAT(Compress({1, 0, 1}, true), ElementsAre(1, 2, 5, 6));     // rows 0 and 2
  EXPECT_THAT(Compress({0, 1, 1, 0, 1}, false), ElementsAre(2, 3, 5));  // flattened, shorter
}

}  // namespace
}  // namespace kiln::driver
