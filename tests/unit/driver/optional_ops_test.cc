// Optionals (optional_converters.cc and the importer's optional graph inputs): a tuple of zero
// or one value known at import. Expected values follow from the inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

// A model whose input "o" is optional(tensor(float)), outputs OptionalHasElement(o) and, when
// `get`, OptionalGetElement(o).
std::string OptionalInputModel(bool get) {
  OnnxModelBuilder b(16);
  onnx::ValueInfoProto* o = b.model().mutable_graph()->add_input();
  o->set_name("o");
  o->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  b.Output("has");
  b.Node("OptionalHasElement", {"o"}, {"has"}, "has");
  if (get) {
    b.Output("value");
    b.Node("OptionalGetElement", {"o"}, {"value"}, "get");
  }
  return b.Bytes();
}

TEST(OptionalOpsTest, APresentOptionalInputIsItsValue) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.import.input_shapes["o"] = {2};
  absl::StatusOr<CompileResult> compiled = CompileOnnx(OptionalInputModel(true), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (bool native : {false, true}) {
    ModelTensors tensors = MakeModelTensors(*compiled);
    ASSERT_EQ(tensors.inputs.size(), 1u);
    tensors.inputs[0] = loop::HostTensor::FromDoubles(DataType::kFloat32, {2}, {4, 5});
    std::vector<loop::HostTensor*> in = {&tensors.inputs[0]}, out;
    for (auto& t : tensors.outputs) out.push_back(&t);
    absl::Status ran = native ? RunNative(*compiled, in, out) : RunModel(*compiled, in, out);
    ASSERT_TRUE(ran.ok()) << ran;
    EXPECT_THAT(tensors.outputs[0].ToDoubles(), ElementsAre(1));
    EXPECT_THAT(tensors.outputs[1].ToDoubles(), ElementsAre(4, 5));
  }
}

TEST(OptionalOpsTest, AnEmptyOptionalInputHasNoElementAndNoParameter) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.import.empty_optional_inputs = {"o"};
  absl::StatusOr<CompileResult> compiled = CompileOnnx(OptionalInputModel(false), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ModelTensors tensors = MakeModelTensors(*compiled);
  EXPECT_TRUE(tensors.inputs.empty());
  ASSERT_TRUE(RunNative(*compiled, {}, {&tensors.outputs[0]}).ok());
  EXPECT_THAT(tensors.outputs[0].ToDoubles(), ElementsAre(0));
  // Reading the value of an empty optional is an error naming the node.
  CompileFailure failure;
  ASSERT_FALSE(CompileOnnx(OptionalInputModel(true), options, &failure).ok());
  EXPECT_THAT(failure.status.message(),
              HasSubstr("ONNX node 'get' (#1, OptionalGetElement): input 0 is an empty optional"));
}

// Optional(SequenceConstruct(a, b)) as the graph's output: returned as the sequence's tensors.
TEST(OptionalOpsTest, AnOptionalOutputIsItsValuesTensors) {
  OnnxModelBuilder b(16);
  b.Input("a", {2}).Input("b", {1});
  onnx::ValueInfoProto* out = b.model().mutable_graph()->add_output();
  out->set_name("o");
  out->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()
      ->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  b.Node("SequenceConstruct", {"a", "b"}, {"s"}, "construct");
  b.Node("Optional", {"s"}, {"o"}, "optional");
  auto outs = RunAll(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {2}, {1, 2}),
                                 loop::HostTensor::FromDoubles(DataType::kFloat32, {1}, {3})});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_THAT(outs[0], ElementsAre(1, 2));
  EXPECT_THAT(outs[1], ElementsAre(3));
}

}  // namespace
}  // namespace kiln::driver
