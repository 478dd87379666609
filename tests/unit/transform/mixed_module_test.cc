// A module holding both a graph Function and a loop PrimFunc goes through the graph-side code
// that walks module functions (type inference, the verifier, span coverage, structural
// equality and hashing, the module passes, the whole default pipeline) without crashing, and
// every one of them leaves the PrimFunc as it was.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/ir/structural_equal.h"
#include "engine/loop/prim_func.h"
#include "engine/op/type_inference.h"
#include "engine/parser/parser.h"
#include "engine/pass/configured_instruments.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/pipeline.h"
#include "engine/pass/span_coverage.h"
#include "engine/pass/verifier.h"
#include "engine/transform/builtin_passes.h"
#include "engine/transform/inline.h"
#include "engine/transform/remove_unused_functions.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

// out[i] = max(in[i], 0), with the PrimFunc's own span.
loop::PrimFunc ReluKernel() {
  loop::Buffer in = loop::MakeBuffer("A", DataType::kFloat32, {4});
  loop::Buffer out = loop::MakeBuffer("B", DataType::kFloat32, {4});
  loop::Var i = loop::MakeVar("i");
  return loop::MakePrimFunc(
      {in, out},
      loop::MakeFor(i, loop::IntImm(0), loop::IntImm(4), loop::ForKind::kSerial,
                    loop::MakeBufferStore(
                        out, loop::Max(loop::MakeBufferLoad(in, {i}), loop::FloatImm(0)), {i})),
      nullptr, MakeSpan("kernel_source"));
}

IRModule MixedModule(const loop::PrimFunc& kernel) {
  absl::StatusOr<IRModule> graph = ParseModule(R"(
def @main(%x: Tensor[(4), float32] /* si=input */) {
  %0 = add(%x, %x) /* si=add1 */;
  nn.relu(%0) /* si=relu1 */
}
)");
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  return WithFunction(*graph, MakeGlobalVar("fused_relu"), kernel);
}

TEST(MixedModuleTest, TypeInferenceTypesTheGraphAndKeepsThePrimFunc) {
  loop::PrimFunc kernel = ReluKernel();
  absl::StatusOr<IRModule> typed = InferType(MixedModule(kernel));
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_TRUE((*typed)->Lookup("main").as<FunctionNode>()->body->checked_type);
  EXPECT_TRUE((*typed)->Lookup("fused_relu").same_as(kernel));
  VerifierOptions options;
  options.infer_types = [](const IRModule& module) { return InferType(module); };
  EXPECT_TRUE(VerifyModule(*typed, options).ok());
}

TEST(MixedModuleTest, SpanCoverageCountsOnlyGraphNodes) {
  IRModule module = MixedModule(ReluKernel());
  SpanStats stats = CountSpans(module);
  EXPECT_EQ(stats.calls, 2);
  EXPECT_EQ(stats.calls_with_span, 2);
  EXPECT_FALSE(FirstCallWithoutSpan(module));
  // A PrimFunc contributes its own span's source.
  EXPECT_EQ(module->SourceNames(),
            (std::vector<std::string>{"input", "add1", "relu1", "kernel_source"}));
}

TEST(MixedModuleTest, PrimFuncsCompareByIdentity) {
  loop::PrimFunc kernel = ReluKernel();
  IRModule module = MixedModule(kernel);
  EXPECT_TRUE(StructuralEqual(module, MixedModule(kernel)));
  EXPECT_EQ(StructuralHash(module), StructuralHash(MixedModule(kernel)));
  // An identical but distinct PrimFunc is a different function for now.
  IRModule other = MixedModule(ReluKernel());
  std::optional<StructuralMismatch> mismatch = FindFirstMismatch(module, other);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->reason.find("identity"), std::string::npos) << mismatch->reason;
  EXPECT_EQ(mismatch->path, "@fused_relu");
}

TEST(MixedModuleTest, ModulePassesKeepThePrimFunc) {
  loop::PrimFunc kernel = ReluKernel();
  IRModule module = MixedModule(kernel);
  // Nothing in main reaches fused_relu, yet it is kept: calls inside loop IR are not walked.
  IRModule pruned = testing::RunPass(transform::RemoveUnusedFunctions(), module);
  ASSERT_TRUE(pruned);
  EXPECT_TRUE(pruned->Lookup("fused_relu").same_as(kernel));
  IRModule inlined = testing::RunPass(transform::Inline(), module);
  ASSERT_TRUE(inlined);
  EXPECT_TRUE(inlined->Lookup("fused_relu").same_as(kernel));
}

TEST(MixedModuleTest, DefaultPipelineWithEveryCheckRuns) {
  loop::PrimFunc kernel = ReluKernel();
  PassRegistry registry;
  RegisterBuiltinPasses(registry);
  PassContext context;
  context.set_opt_level(3);
  context.set_pass_registry(&registry);
  ASSERT_TRUE(context.SetConfig(kConfigSpanCoverage, std::string("strict")).ok());
  ASSERT_TRUE(context.SetConfig(kConfigVerifyEach, true).ok());
  ASSERT_TRUE(context.SetConfig(kConfigVerifyTypes, true).ok());
  absl::StatusOr<ConfiguredInstruments> instruments = AddConfiguredInstruments(
      context, nullptr, [](const IRModule& module) { return InferType(module); });
  ASSERT_TRUE(instruments.ok()) << instruments.status();
  PassContext::Scope scope(context);
  ASSERT_TRUE(scope.status().ok()) << scope.status();

  absl::StatusOr<Pass> pipeline = ParsePipeline(DefaultPipeline(3), registry);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  IRModule input = MixedModule(kernel);
  absl::StatusOr<IRModule> output = (**pipeline)(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE((*output)->Lookup("fused_relu").same_as(kernel));
  // The graph function went through the pipeline: add and relu are fused into one kernel.
  std::string text = PrintModule(*output);
  EXPECT_NE(text.find("Primitive=1"), std::string::npos) << text;
  EXPECT_NE(text.find("#[T.prim_func]\ndef @fused_relu"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
