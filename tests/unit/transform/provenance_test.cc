// The provenance property end to end: a small CNN-plus-encoder module whose
// every call has a span goes through every pass of this directory with the
// SpanCoverage instrument in strict mode (a call without a span fails the
// pass) and the verifier checking well-formedness and types after each pass;
// the spans at the end name only sources the input named.
#include <gtest/gtest.h>

#include <set>

#include "engine/pass/configured_instruments.h"
#include "engine/op/type_inference.h"
#include "engine/pass/pipeline.h"
#include "engine/transform/builtin_passes.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

std::set<std::string> SourceNames(const IRModule& module) {
  std::set<std::string> names;
  for (const auto& entry : module->functions) {
    PostOrderVisit(entry.second, [&](const Expr& e) {
      for (const std::string& name : SpanSourceNames(e->span)) names.insert(name);
    });
  }
  return names;
}

TEST(ProvenanceTest, EveryCallKeepsASpanThroughEveryPass) {
  absl::StatusOr<IRModule> input = ParseModule(R"(
def @head(%h: Tensor[(1, 4), float32], Inline=1) -> Tensor[(1, 4), float32] {
  %0 = transpose(%h, axes=[1, 0]) /* si=head/transpose_in */;
  %1 = transpose(%0, axes=[1, 0]) /* si=head/transpose_out */;
  nn.relu(%1) /* si=head/relu */
}

def @unused(%u: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {
  exp(%u) /* si=dead/exp */
}

def @main(%x: Tensor[(1, 3, 8, 8), float32] /* si=input */, %w: Tensor[(4, 3, 3, 3), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32], %m: Tensor[(4), float32], %v: Tensor[(4), float32], %lw: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* si=conv1 */;
  %1 = nn.batch_norm(%0, %g, %b, %m, %v) /* si=bn1 */;
  %2 = nn.relu(%1) /* si=relu1 */;
  %3 = nn.global_avg_pool2d(%2) /* si=pool */;
  %4 = reshape(%3, newshape=[1, 4, 1]) /* si=flatten/a */;
  %5 = reshape(%4, newshape=[1, 4]) /* si=flatten/b */;
  %6 = cast(%5, dtype=float64) /* si=to_f64 */;
  %7 = cast(%6, dtype=float32) /* si=to_f32 */;
  %8 = @head(%7) /* si=call_head0 */;
  %9 = @head(%7) /* si=call_head1 */;
  %10 = add(%8, %9) /* si=merge */;
  %11 = multiply(%10, 1f /* si=one */) /* si=scale */;
  nn.layer_norm(%11, %lw) /* si=ln */
}
)");
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(testing::AllCallsHaveSpans(*input));

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

  absl::StatusOr<Pass> pipeline = ParsePipeline(
      "InferType,Inline,RemoveUnusedFunctions,InferType,SimplifyInference,SimplifyExpr,"
      "EliminateCommonSubexpr,ToANormalForm,DeadCodeElimination,ToGraphNormalForm,SimplifyExpr",
      registry);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  absl::StatusOr<IRModule> output = (**pipeline)(*input);
  ASSERT_TRUE(output.ok()) << output.status();

  EXPECT_TRUE(testing::AllCallsHaveSpans(*output));
  ASSERT_NE(instruments->span_coverage, nullptr);
  for (const SpanCoverage::Result& result : instruments->span_coverage->results()) {
    EXPECT_EQ(result.stats.calls, result.stats.calls_with_span) << result.pass;
  }
  std::set<std::string> before = SourceNames(*input);
  for (const std::string& name : SourceNames(*output)) {
    EXPECT_TRUE(before.count(name)) << name << " is not a source of the input";
  }
  // What the passes did: the helper is inlined and dropped with the unused
  // function; the two identical heads are one; their transposes cancel;
  // the flatten reshapes are one; the cast round trip and the multiply by
  // one are gone; batch_norm is arithmetic, layer_norm stays one op (one kernel).
  EXPECT_EQ((*output)->functions.size(), 1u);
  std::string text = PrintModule(*output);
  for (const char* gone : {"transpose", "cast", "nn.batch_norm", "@head",
                           "si=scale", "let "}) {
    EXPECT_EQ(text.find(gone), std::string::npos) << gone << " in\n" << text;
  }
  EXPECT_NE(text.find("/* si=[head/relu, call_head0, call_head1] */"), std::string::npos)
      << text;
  EXPECT_NE(text.find("/* si=[flatten/b, flatten/a] */"), std::string::npos) << text;
  EXPECT_NE(text.find("nn.layer_norm("), std::string::npos) << text;
}


TEST(ProvenanceTest, DefaultO3PipelineFusesAndKeepsEverySpan) {
  absl::StatusOr<IRModule> input = ParseModule(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32] /* si=input */, %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32], %w2: Tensor[(4, 4, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* si=conv1 */;
  %1 = nn.bias_add(%0, %b) /* si=conv1/bias */;
  %2 = nn.relu(%1) /* si=relu1 */;
  %3 = nn.conv2d(%2, %w2, padding=[1, 1, 1, 1]) /* si=conv2 */;
  %4 = add(%3, %2) /* si=residual */;
  %5 = nn.relu(%4) /* si=relu2 */;
  %6 = nn.global_avg_pool2d(%5) /* si=pool */;
  %7 = reshape(%6, newshape=[1, 4]) /* si=flatten */;
  nn.softmax(%7) /* si=softmax */
}
)");
  ASSERT_TRUE(input.ok()) << input.status();
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
  absl::StatusOr<IRModule> output = (**pipeline)(*input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(testing::AllCallsHaveSpans(*output));
  std::set<std::string> before = SourceNames(*input);
  for (const std::string& name : SourceNames(*output)) {
    EXPECT_TRUE(before.count(name)) << name << " is not a source of the input";
  }
  std::string text = PrintModule(*output);
  // The bias became a broadcast add (CanonicalizeOps) fused into conv1's
  // kernel (the expand_dims of a parameter is a kernel of its own, as in
  // TVM until FoldConstant folds it for constant weights); the residual add
  // and relu join conv2; the opaque softmax is alone.
  for (const char* name : {"name=\"fused_expand_dims\"", "si=[conv1, conv1/bias, relu1]",
                           "name=\"fused_nn_conv2d_add_nn_relu\"", "name=\"fused_nn_softmax\"",
                           "si=[conv2, residual, relu2]"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << " not in\n" << text;
  }
  EXPECT_EQ(text.find("nn.bias_add"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
