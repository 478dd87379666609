// Compile ids: what build farms cache by. Equal compiles share an id however
// the request is spelled; anything that changes the compile changes it.
#include <gtest/gtest.h>

#include "service/compile_request.h"

namespace kiln::service {
namespace {

v1::CompileRequest Base() {
  v1::CompileRequest request;
  request.set_onnx("model bytes");
  request.set_name("resnet");
  (*request.mutable_pass_options()->mutable_config())["a.key"] = "1";
  (*request.mutable_pass_options()->mutable_config())["b.key"] = "2";
  return request;
}

TEST(CompileIdTest, IsAHexSha256) {
  std::string id = CompileId(Base());
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(CompileIdTest, IgnoresTheNameTheArtifactsAndTheConfigOrder) {
  v1::CompileRequest other = Base();
  other.set_name("another name");
  other.add_artifacts(v1::LOOP_IR);
  EXPECT_EQ(CompileId(other), CompileId(Base()));
  v1::CompileRequest reordered;
  reordered.set_onnx("model bytes");
  (*reordered.mutable_pass_options()->mutable_config())["b.key"] = "2";
  (*reordered.mutable_pass_options()->mutable_config())["a.key"] = "1";
  EXPECT_EQ(CompileId(reordered), CompileId(Base()));
}

TEST(CompileIdTest, ChangesWithAnythingThatChangesTheCompile) {
  const std::string base = CompileId(Base());
  v1::CompileRequest model = Base();
  model.set_onnx("model bytes!");
  EXPECT_NE(CompileId(model), base);
  v1::CompileRequest text = Base();
  text.set_graph_ir_text("model bytes");  // same bytes, other kind of model
  EXPECT_NE(CompileId(text), base);
  v1::CompileRequest level = Base();
  level.mutable_pass_options()->set_opt_level(1);
  EXPECT_NE(CompileId(level), base);
  v1::CompileRequest config = Base();
  (*config.mutable_pass_options()->mutable_config())["a.key"] = "3";
  EXPECT_NE(CompileId(config), base);
  v1::CompileRequest shape = Base();
  v1::InputShape* input = shape.add_input_shapes();
  input->set_name("x");
  input->add_dims(4);
  EXPECT_NE(CompileId(shape), base);
  v1::CompileRequest target = Base();
  target.mutable_target()->set_cpu("znver4");
  EXPECT_NE(CompileId(target), base);
  // Fetching weights ahead changes the machine code: set, even to the default, it is part of
  // the id (unset and -1 compile alike, but a client that says so asked for it).
  v1::CompileRequest prefetch = Base();
  prefetch.mutable_target()->set_weight_prefetch_footprint_bytes(0);
  EXPECT_NE(CompileId(prefetch), base);
  v1::CompileRequest never = Base();
  never.mutable_target()->set_weight_prefetch_footprint_bytes(-1);
  EXPECT_NE(CompileId(never), CompileId(prefetch));
}

TEST(CompileOptionsTest, TheTargetsWeightPrefetchFootprintReachesCodeGeneration) {
  auto unset = ToCompileOptions(Base());
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_EQ(unset->codegen->weight_prefetch_footprint_bytes,
            codegen::CodegenOptions().weight_prefetch_footprint_bytes);
  v1::CompileRequest never = Base();
  never.mutable_target()->set_weight_prefetch_footprint_bytes(-1);
  auto options = ToCompileOptions(never);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->codegen->weight_prefetch_footprint_bytes, -1);
}

TEST(CompileOptionsTest, OutOfRangeValuesNameTheirField) {
  v1::CompileRequest request = Base();
  request.mutable_pass_options()->set_opt_level(4);
  auto options = ToCompileOptions(request);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(std::string(options.status().message()).find("pass_options.opt_level"), std::string::npos);
  v1::CompileRequest shape = Base();
  v1::InputShape* input = shape.add_input_shapes();
  input->set_name("x");
  input->add_dims(-2);
  options = ToCompileOptions(shape);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(std::string(options.status().message()).find("input_shapes['x']"), std::string::npos);
}

}  // namespace
}  // namespace kiln::service
