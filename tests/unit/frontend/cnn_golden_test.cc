// Golden print of a small CNN built with the ONNX protobuf API: what a user
// sees from `kiln-opt model.onnx` (spans on every node, unnamed nodes named
// `<op_type>_<k>`, initializers as metadata constants, a symbolic batch).
// KILN_UPDATE_GOLDENS=1 (tests/update_goldens.sh) rewrites the golden; review
// the diff by eye before committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/frontend/onnx/importer.h"
#include "engine/printer/printer.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln {
namespace {

using testing::OnnxModelBuilder;

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = scale * static_cast<float>(i % 7) - scale * 3;
  return values;
}

std::string SmallCnnBytes() {
  OnnxModelBuilder b(13);
  b.Input("image", {-1, 3, 8, 8}, onnx::TensorProto::FLOAT, {"N"}).Output("logits");
  b.FloatInitializer("stem.weight", {4, 3, 3, 3}, Ramp(108, 0.1f));
  for (const char* name : {"bn.scale", "bn.bias", "bn.mean", "bn.var"}) {
    b.FloatInitializer(name, {4}, {1.0f, 0.5f, 0.25f, 2.0f});
  }
  b.FloatInitializer("head.weight", {8, 4, 1, 1}, Ramp(32, 0.2f));
  b.FloatInitializer("fc.weight", {10, 8}, Ramp(80, 0.05f));
  b.FloatInitializer("fc.bias", {10}, Ramp(10, 0.01f));

  auto& stem = b.Node("Conv", {"image", "stem.weight"}, {"c1"}, "stem/conv");
  OnnxModelBuilder::IntsAttr(stem, "kernel_shape", {3, 3});
  OnnxModelBuilder::IntsAttr(stem, "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"n1"});
  b.Node("Relu", {"n1"}, {"r1"});
  auto& pool = b.Node("MaxPool", {"r1"}, {"p1"}, "stem/pool");
  OnnxModelBuilder::IntsAttr(pool, "kernel_shape", {2, 2});
  OnnxModelBuilder::IntsAttr(pool, "strides", {2, 2});
  b.Node("Conv", {"p1", "head.weight"}, {"c2"}, "head/conv");
  b.Node("GlobalAveragePool", {"c2"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  auto& fc = b.Node("Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}, "fc");
  OnnxModelBuilder::IntAttr(fc, "transB", 1);
  return b.Bytes();
}

TEST(OnnxCnnGoldenTest, SmallCnnPrintsAsTheGolden) {
  auto module = ImportOnnxModel(SmallCnnBytes());
  ASSERT_TRUE(module.ok()) << module.status();
  // With the metadata table, so the golden also parses back (every .kir under
  // tests/ must roundtrip).
  PrintOptions options;
  options.show_metadata = true;
  std::string text = PrintModule(*module, options);
  const std::string path = std::string(KILN_SOURCE_DIR) + "/tests/golden/frontend/small_cnn.kir";
  if (std::getenv("KILN_UPDATE_GOLDENS") != nullptr) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "golden rewritten: " << path;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "missing golden " << path << "; run tests/update_goldens.sh";
  std::stringstream golden;
  golden << file.rdbuf();
  EXPECT_EQ(text, golden.str());
}

}  // namespace
}  // namespace kiln
