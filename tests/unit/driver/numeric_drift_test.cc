// The numerics check: a pass that keeps the numbers shows no drift; a pass seeded with a bug (it
// negates one layer, registered only in this test binary) is the first whose drift exceeds the
// tolerance, and the passes before it stay exact. Native code is checked against the same
// reference.
#include "engine/driver/numeric_drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "engine/driver/passes.h"
#include "engine/driver/run_model.h"
#include "engine/ir/expr_mutator.h"
#include "engine/op/op_registry.h"
#include "engine/pass/pass_event.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/transform/expr_builder.h"

namespace kiln::driver {
namespace {

constexpr char kModel[] = R"(
def @main(%x: Tensor[(1, 2, 6, 6), float32] /* si=input */, %w1: Tensor[(4, 2, 3, 3), float32] /* si=w1 */, %w2: Tensor[(4, 4, 1, 1), float32] /* si=w2 */) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]) /* si=conv1 */;
  %1 = nn.relu(%0) /* si=relu1 */;
  %2 = nn.conv2d(%1, %w2) /* si=conv2 */;
  %3 = multiply(%2, 2f) /* si=scale */;
  add(%3, 1f) /* si=bias */
}
)";

// The seeded bug: the convolution of layer "conv2" negated (one sign flipped).
class NegateConv2 : public PostOrderRewriter {
 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    static const OpEntry& conv = OpRegistry::Global().Get("nn.conv2d");
    if (AsCallOf(post, conv) == nullptr) return post;
    std::vector<std::string> layers = SpanSourceNames(pre->span);  // [conv2, scale] once folded
    if (std::find(layers.begin(), layers.end(), "conv2") == layers.end()) return post;
    return MakeTypedCall("negative", {post}, nullptr, post->span);
  }
};

Pass FlipSignForTesting() {
  return CreateRewriterPass([](const Function&, const IRModule&, PassContext&) { return NegateConv2(); },
                            PassInfo{"FlipSignForTesting", 0, {"InferType"}, PassStage::kGraph});
}

// Drift after every graph pass, as a trace with check_numerics reports it.
class DriftRecorder : public PassObserver {
 public:
  explicit DriftRecorder(CompileOptions base) : tracker(0, std::move(base)) {}
  void OnPassEvent(const PassEvent& event) override {
    if (event.kind != PassEvent::Kind::kAfter || event.stage != PassStage::kGraph) return;
    absl::StatusOr<DriftReport> report = tracker.AfterGraphPass(event);
    ASSERT_TRUE(report.ok()) << event.pass << ": " << report.status();
    passes.push_back(event.pass);
    reports.push_back(*report);
    events.push_back(event);
  }
  DriftTracker tracker;
  std::vector<std::string> passes;
  std::vector<DriftReport> reports;
  std::vector<PassEvent> events;
};

CompileOptions Options(const std::string& pipeline) {
  CompileOptions options;
  options.pipeline = pipeline;
  options.codegen = HostCodegenOptions();
  return options;
}

struct Traced {
  std::vector<std::string> passes;
  std::vector<DriftReport> reports;
  CompileResult compiled;
  std::shared_ptr<DriftRecorder> recorder;
};

Traced Trace(const std::string& pipeline) {
  CompileOptions options = Options(pipeline);
  auto recorder = std::make_shared<DriftRecorder>(options);
  ObserverOptions observe;
  observe.include_ir_before = true;
  observe.include_ir_after = true;
  observe.include_sequential = false;
  options.instruments.push_back(std::make_shared<ObserverInstrument>(recorder.get(), observe));
  absl::StatusOr<CompileResult> compiled = CompileGraphText(kModel, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return {recorder->passes, recorder->reports,
          compiled.ok() ? *std::move(compiled) : CompileResult(), recorder};
}

TEST(NumericDriftTest, TheDefaultPipelineKeepsTheNumbers) {
  Traced traced = Trace(DefaultGraphPipeline(3, 8));
  ASSERT_GT(traced.reports.size(), 10u);
  for (size_t i = 0; i < traced.reports.size(); ++i) {
    EXPECT_EQ(traced.reports[i].backend, "interp");
    EXPECT_LT(traced.reports[i].max_rel_error, 1e-5) << traced.passes[i];
  }
  // The native code, checked against the same reference (fused, vectorized: not bit-exact).
  DriftTracker tracker(0, Options(""));
  absl::StatusOr<DriftReport> native = tracker.AfterNative(traced.compiled);
  ASSERT_TRUE(native.ok()) << native.status();
  EXPECT_EQ(native->backend, "native");
  EXPECT_LT(native->max_rel_error, 1e-5);
}

// Compiles kModel with `options` checking every graph and loop pass: each report must be from
// `backend` and within 1e-5, and at least 5 loop passes (Simplify, FlattenBuffer, VectorizeLoop,
// ... of the default loop pipeline) must have been checked.
void ExpectEveryPassChecked(CompileOptions options, const std::string& backend,
                            DriftBackend asked = DriftBackend::kAuto) {
  std::vector<PassDrift> drifts;
  std::shared_ptr<DriftTracker> tracker = CheckEveryPass(
      &options, 0, {}, 1e-5, 1e-6, /*loop_passes=*/true,
      [&](const PassDrift& drift) { drifts.push_back(drift); }, asked);
  absl::StatusOr<CompileResult> compiled = CompileGraphText(kModel, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  int loop = 0;
  for (const PassDrift& drift : drifts) {
    ASSERT_TRUE(drift.report.ok()) << drift.stage << " " << drift.pass << ": " << drift.report.status();
    EXPECT_EQ(drift.report->backend, backend) << drift.pass;
    EXPECT_LT(drift.report->max_rel_error, 1e-5) << drift.pass;
    loop += drift.stage == "loop";
  }
  EXPECT_GE(loop, 5);
}

// Every loop pass too: its loop module runs in place of the lowered one (same constants and
// signature), interpreted, against the same reference.
TEST(NumericDriftTest, LoopPassesAreCheckedToo) {
  ExpectEveryPassChecked(Options(DefaultGraphPipeline(3, 8)), "interp");
}

// Asked for, native code runs every module of the check, the reference too.
TEST(NumericDriftTest, TheNativeBackendRunsEveryModuleAsNativeCode) {
  ExpectEveryPassChecked(Options(DefaultGraphPipeline(3, 8)), "native", DriftBackend::kNative);
}

// Asked for, the interpreter does not hand a model over its budget to native code.
TEST(NumericDriftTest, TheInterpreterBackendRefusesAModelOverItsBudget) {
  CompileOptions base = Options("");
  base.limits.max_interpreter_steps = 1000;
  absl::StatusOr<CompileResult> imported = CompileGraphText(kModel, Options("InferType"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::unique_ptr<DriftChecker>> checker =
      DriftChecker::Create(imported->imported, 0, base, {}, DriftBackend::kInterpreter);
  ASSERT_FALSE(checker.ok());
  EXPECT_EQ(checker.status().code(), absl::StatusCode::kResourceExhausted) << checker.status();
  DriftBackend parsed;
  EXPECT_TRUE(ParseDriftBackend("native", &parsed));
  EXPECT_EQ(parsed, DriftBackend::kNative);
  EXPECT_FALSE(ParseDriftBackend("jit", &parsed));
}

// A model too big for the interpreter's step budget is checked with native code throughout, and
// the reports say so.
TEST(NumericDriftTest, OverTheInterpreterBudgetTheCheckRunsNativeCode) {
  CompileOptions base = Options("");
  base.limits.max_interpreter_steps = 1000;  // the demo model needs thousands of steps
  absl::StatusOr<CompileResult> imported = CompileGraphText(kModel, Options("InferType"));
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::unique_ptr<DriftChecker>> checker =
      DriftChecker::Create(imported->imported, 0, base);
  ASSERT_TRUE(checker.ok()) << checker.status();
  absl::StatusOr<DriftReport> report = (*checker)->CheckGraphModule(imported->optimized);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->backend, "native");
  EXPECT_LT(report->max_rel_error, 1e-6);
}

// Over the budget, every loop pass is checked too: each loop module compiled as it stands.
TEST(NumericDriftTest, OverTheInterpreterBudgetLoopPassesRunAsNativeCode) {
  CompileOptions options = Options(DefaultGraphPipeline(3, 8));
  options.limits.max_interpreter_steps = 1000;  // the compile itself only generates code
  ExpectEveryPassChecked(options, "native");
}

TEST(NumericDriftTest, ASeededSignFlipIsTheFirstPassOverTheTolerance) {
  static const bool registered = [] {
    return PassRegistry::Global()
        .Register(FlipSignForTesting()->info(), "test only: negate layer conv2", FlipSignForTesting)
        .ok();
  }();
  ASSERT_TRUE(registered);
  RegisteredPasses();
  std::string pipeline = absl::StrReplaceAll(DefaultGraphPipeline(3, 8),
                                             {{"FoldScaleAxis,", "FoldScaleAxis,FlipSignForTesting,"}});
  Traced traced = Trace(pipeline);
  size_t first_over = traced.reports.size();
  for (size_t i = 0; i < traced.reports.size(); ++i) {
    if (traced.reports[i].max_rel_error > 1e-4) {
      first_over = i;
      break;
    }
  }
  ASSERT_LT(first_over, traced.reports.size());
  EXPECT_EQ(traced.passes[first_over], "FlipSignForTesting");
  for (size_t i = 0; i < first_over; ++i) EXPECT_LT(traced.reports[i].max_rel_error, 1e-5) << traced.passes[i];
  // y = 2 * conv2 + 1 against y' = -2 * conv2 + 1: the absolute error is 4 |conv2| somewhere > 0.
  EXPECT_GT(traced.reports[first_over].max_abs_error, 1e-3);

  // Attributed to its layer: the first layer over the tolerance is conv2 (folded with the scale
  // by then), conv1 and relu1 before it are exact.
  absl::StatusOr<std::vector<LayerDrift>> layers =
      traced.recorder->tracker.Attribute(traced.recorder->events[first_over], 1e-4, 1e-6);
  ASSERT_TRUE(layers.ok()) << layers.status();
  ASSERT_FALSE(layers->empty());
  const std::vector<std::string>& first_layer = layers->front().layers;
  EXPECT_NE(std::find(first_layer.begin(), first_layer.end(), "conv2"), first_layer.end())
      << absl::StrJoin(first_layer, ",");
  for (const LayerDrift& layer : *layers) {
    for (const char* exact : {"conv1", "relu1"}) {
      EXPECT_EQ(std::find(layer.layers.begin(), layer.layers.end(), exact), layer.layers.end());
    }
  }
}

}  // namespace
}  // namespace kiln::driver
