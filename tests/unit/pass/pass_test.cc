// Module passes, function passes and Sequential: the enabling rule, required
// passes resolved through the registry, errors naming the pass.
#include "engine/pass/pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/pass/pass_context.h"
#include "engine/printer/printer.h"
#include "tests/unit/pass/pass_test_util.h"

namespace kiln::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Logs the name of each pass that runs.
class RunLog final : public PassInstrument {
 public:
  RunLog() : PassInstrument("RunLog") {}
  absl::Status RunBeforePass(const IRModule&, const PassInvocation& pass) override {
    if (!pass.pass.is_sequential()) ran.push_back(pass.name());
    return absl::OkStatus();
  }
  std::vector<std::string> ran;
};

class PassTest : public ::testing::Test {
 protected:
  PassTest() {
    context.set_pass_registry(&registry.registry);
    context.AddInstrument(run_log);
  }

  absl::StatusOr<IRModule> Run(const Pass& pass) {
    PassContext::Scope scope(context);
    return (*pass)(module, context);
  }

  TestRegistry registry;
  std::shared_ptr<RunLog> run_log = std::make_shared<RunLog>();
  PassContext context;
  IRModule module = SmallModule();
};

TEST_F(PassTest, PassStageNames) {
  EXPECT_STREQ(PassStageName(PassStage::kGraph), "graph");
  EXPECT_STREQ(PassStageName(PassStage::kLoop), "loop");
  EXPECT_STREQ(PassStageName(PassStage::kLlvm), "llvm");
}

TEST_F(PassTest, ModulePassSeesTheContext) {
  int seen_level = -1;
  Pass pass = CreateModulePass(
      [&seen_level](const IRModule& m, PassContext& ctx) -> absl::StatusOr<IRModule> {
        seen_level = ctx.opt_level();
        return m;
      },
      PassInfo{"Look", 0, {}, PassStage::kGraph});
  context.set_opt_level(3);
  ASSERT_TRUE(Run(pass).ok());
  EXPECT_EQ(seen_level, 3);
}

TEST_F(PassTest, FunctionPassKeepsTheModuleWhenNothingChanges) {
  Pass identity = CreateFunctionPass([](const Function& f, const IRModule&,
                                        PassContext&) -> absl::StatusOr<Function> { return f; },
                                     PassInfo{"Identity", 0, {}, PassStage::kGraph});
  absl::StatusOr<IRModule> result = Run(identity);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->same_as(module));
}

TEST_F(PassTest, FunctionPassSkipsPrimitiveAndSkipOptimizationFunctions) {
  IRModule input = Parse(R"(def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @prim(%x)
}

def @prim(%y: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
  nn.relu(%y)
}

def @skipped(%z: Tensor[(2), float32], SkipOptimization=True) -> Tensor[(2), float32] {
  nn.relu(%z)
}

def @off(%w: Tensor[(2), float32], Primitive=0) -> Tensor[(2), float32] {
  nn.relu(%w)
}
)");
  ASSERT_TRUE(input);
  std::vector<std::string> visited;
  Pass pass = CreateFunctionPass(
      [&visited](const Function& f, const IRModule& m, PassContext&) -> absl::StatusOr<Function> {
        for (const auto& [name, function] : m->functions) {
          if (function.same_as(f)) visited.push_back(name->name_hint);
        }
        return f;
      },
      PassInfo{"Visit", 0, {}, PassStage::kGraph});
  module = input;
  ASSERT_TRUE(Run(pass).ok());
  EXPECT_THAT(visited, ElementsAre("main", "off"));
}

TEST_F(PassTest, FunctionPassErrorNamesPassAndFunction) {
  Pass pass = CreateFunctionPass(
      [](const Function&, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        return absl::InvalidArgumentError("bad node");
      },
      PassInfo{"Picky", 0, {}, PassStage::kGraph});
  absl::StatusOr<IRModule> result = Run(pass);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "pass 'Picky' failed: in @main: bad node");
}

TEST_F(PassTest, FunctionPassRewritesEachFunction) {
  absl::StatusOr<IRModule> result = Run(WrapReluPass("Wrap"));
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->same_as(module));
  EXPECT_THAT(PrintModule(*result), HasSubstr("nn.relu(%1) /* si=wrapped */"));
}

TEST_F(PassTest, NullModuleIsAnError) {
  Pass pass = CreateModulePass(
      [](const IRModule&, PassContext&) -> absl::StatusOr<IRModule> { return IRModule(); },
      PassInfo{"Null", 0, {}, PassStage::kGraph});
  EXPECT_EQ(Run(pass).status().message(), "pass 'Null' failed: returned a null module");
}

TEST_F(PassTest, SequentialRunsPassesAtOrBelowTheOptLevel) {
  Pass pipeline =
      Sequential({NoOpPass("L0", 0), NoOpPass("L1", 1), NoOpPass("L2", 2), NoOpPass("L3", 3)});
  context.set_opt_level(2);
  ASSERT_TRUE(Run(pipeline).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("L0", "L1", "L2"));
}

TEST_F(PassTest, EnablingRuleDisabledThenRequiredThenOptLevel) {
  context.set_opt_level(1);
  context.AddRequiredPass("L3");
  context.AddDisabledPass("L0");
  // Both disabled and required: disabled wins (it is checked first).
  context.AddRequiredPass("L2");
  context.AddDisabledPass("L2");
  Pass pipeline =
      Sequential({NoOpPass("L0", 0), NoOpPass("L1", 1), NoOpPass("L2", 2), NoOpPass("L3", 3)});
  ASSERT_TRUE(Run(pipeline).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("L1", "L3"));
  EXPECT_FALSE(context.PassEnabled(PassInfo{"L2", 0, {}, PassStage::kGraph}));
  EXPECT_TRUE(context.PassEnabled(PassInfo{"L3", 9, {}, PassStage::kGraph}));
}

TEST_F(PassTest, NestedSequentialIsGatedByItsOwnInfo) {
  Pass inner = Sequential({NoOpPass("B", 0)}, PassInfo{"Inner", 3, {}, PassStage::kGraph});
  ASSERT_TRUE(Run(Sequential({NoOpPass("A"), inner})).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("A"));
}

TEST_F(PassTest, RequiredPassRunsFirstThroughTheRegistry) {
  Pass pipeline = Sequential({NoOpPass("NeedsTypes", 0, {"InferType"})});
  ASSERT_TRUE(Run(pipeline).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("InferType", "NeedsTypes"));
}

TEST_F(PassTest, RequiredPassIsNotRerunOnAnUnchangedModule) {
  Pass pipeline = Sequential({NoOpPass("InferTypeAlias"), NoOpPass("N1", 0, {"InferType"}),
                              NoOpPass("N2", 0, {"InferType"})});
  ASSERT_TRUE(Run(pipeline).ok());
  // N1 pulls InferType in (it types the module: a change); N2 finds it ran
  // on the current module.
  EXPECT_THAT(run_log->ran, ElementsAre("InferTypeAlias", "InferType", "N1", "N2"));
  EXPECT_EQ(*registry.infer_type_runs, 1);
}

TEST_F(PassTest, RequiredPassListedInThePipelineIsNotRunTwice) {
  absl::StatusOr<Pass> infer = registry.registry.Create("InferType");
  ASSERT_TRUE(infer.ok());
  Pass pipeline = Sequential({*infer, NoOpPass("N1", 0, {"InferType"})});
  ASSERT_TRUE(Run(pipeline).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("InferType", "N1"));
}

TEST_F(PassTest, RequiredPassRerunsAfterTheModuleChanged) {
  Pass pipeline = Sequential(
      {NoOpPass("N1", 0, {"InferType"}), WrapReluPass("Change"), NoOpPass("N2", 0, {"InferType"})});
  ASSERT_TRUE(Run(pipeline).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("InferType", "N1", "Change", "InferType", "N2"));
  EXPECT_EQ(*registry.infer_type_runs, 2);
}

TEST_F(PassTest, RequiredPassesRunEvenWhenTheirLevelIsTooHigh) {
  context.set_opt_level(0);
  ASSERT_TRUE(registry.registry
                  .Register(PassInfo{"High", 3, {}, PassStage::kGraph}, "",
                            [] { return NoOpPass("High", 3); })
                  .ok());
  ASSERT_TRUE(Run(Sequential({NoOpPass("N", 0, {"High"})})).ok());
  EXPECT_THAT(run_log->ran, ElementsAre("High", "N"));
}

TEST_F(PassTest, UnknownRequiredPassIsAnError) {
  absl::StatusOr<IRModule> result = Run(Sequential({NoOpPass("N", 0, {"Missing"})}));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("pass 'N' requires pass 'Missing': unknown pass 'Missing'; valid "
                        "passes: CycleA, CycleB,"));
}

TEST_F(PassTest, RequiredPassCycleIsAnError) {
  absl::StatusOr<IRModule> result = Run(Sequential({NoOpPass("CycleA", 0, {"CycleB"})}));
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("required passes form a cycle: CycleA -> CycleB -> CycleA"));
}

TEST_F(PassTest, SequentialStopsAtTheFirstFailure) {
  absl::StatusOr<IRModule> result =
      Run(Sequential({NoOpPass("A"), FailingPass("Bad"), NoOpPass("C")}));
  EXPECT_EQ(result.status().message(), "pass 'Bad' failed: something is wrong");
  EXPECT_THAT(run_log->ran, ElementsAre("A", "Bad"));
}

TEST_F(PassTest, RunWithoutContextUsesTheCurrentOne) {
  // No scope: the thread's default context (opt level 2).
  std::vector<std::string> ran;
  Pass probe = CreateModulePass(
      [&ran](const IRModule& m, PassContext& ctx) -> absl::StatusOr<IRModule> {
        ran.push_back(absl::StrCat("level ", ctx.opt_level()));
        return m;
      },
      PassInfo{"Probe", 0, {}, PassStage::kGraph});
  ASSERT_TRUE((*Sequential({probe, NoOpPass("Skipped", 3)}))(module).ok());
  EXPECT_THAT(ran, ElementsAre("level 2"));
}

}  // namespace
}  // namespace kiln::testing
