// Textual pipelines and the pass registry: parsing with checked names and
// typed options, errors with positions, printing back (round trip), and the
// default pipelines.
#include "engine/pass/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "engine/pass/pass_context.h"
#include "engine/support/request_limits.h"
#include "tests/unit/pass/pass_test_util.h"

namespace kiln::testing {
namespace {

using ::testing::HasSubstr;

class PipelineTest : public ::testing::Test {
 protected:
  absl::StatusOr<Pass> ParseText(std::string_view text) {
    return ParsePipeline(text, registry.registry);
  }
  std::string RoundTrip(std::string_view text) {
    absl::StatusOr<Pass> pass = ParseText(text);
    EXPECT_TRUE(pass.ok()) << pass.status();
    return pass.ok() ? PrintPipeline(*pass) : "";
  }
  std::string ErrorOf(std::string_view text) {
    absl::StatusOr<Pass> pass = ParseText(text);
    EXPECT_FALSE(pass.ok());
    return std::string(pass.status().message());
  }

  TestRegistry registry;
};

TEST_F(PipelineTest, CanonicalPipelinesRoundTripExactly) {
  for (const char* text : {
           "NoOp",
           "InferType,Wrap,NoOp",
           "Fuse{fuse_opt_level=2}",
           "Fuse{fuse_opt_level=3,aggressive=true,ratio=0.25,label=abc}",
           "Fuse{label=\"a b,c\"}",
           "NoOp,Sequential(InferType,Sequential(Wrap)),Fuse",
           "Sequential()",
           "",
       }) {
    EXPECT_EQ(RoundTrip(text), text);
  }
}

TEST_F(PipelineTest, WhitespaceAndValueSpellingsAreNormalized) {
  EXPECT_EQ(RoundTrip(" InferType ,\n  Fuse { aggressive = 1 , fuse_opt_level=03 } "),
            "InferType,Fuse{aggressive=true,fuse_opt_level=3}");
  EXPECT_EQ(RoundTrip("Fuse{ratio=1}"), "Fuse{ratio=1}");
}

TEST_F(PipelineTest, ParsedPassesCarryTheirInfoAndOptions) {
  absl::StatusOr<Pass> pipeline = ParseText("NeedsTypes,Fuse{fuse_opt_level=1}");
  ASSERT_TRUE(pipeline.ok());
  const auto* sequential = dynamic_cast<const SequentialNode*>(pipeline->get());
  ASSERT_NE(sequential, nullptr);
  ASSERT_EQ(sequential->passes().size(), 2u);
  EXPECT_EQ(sequential->passes()[0]->info().opt_level, 2);
  EXPECT_EQ(sequential->passes()[0]->info().required, std::vector<std::string>{"InferType"});
  const auto* fuse = dynamic_cast<const RegisteredPassNode*>(sequential->passes()[1].get());
  ASSERT_NE(fuse, nullptr);
  ASSERT_EQ(fuse->options().size(), 1u);
  EXPECT_EQ(std::get<int64_t>(fuse->options()[0].second), 1);
}

TEST_F(PipelineTest, ParsedPipelineRuns) {
  absl::StatusOr<Pass> pipeline = ParseText("Wrap,NeedsTypes");
  ASSERT_TRUE(pipeline.ok());
  PassContext context;
  context.set_pass_registry(&registry.registry);
  absl::StatusOr<IRModule> result = (**pipeline)(SmallModule(), context);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*registry.infer_type_runs, 1);
}

TEST_F(PipelineTest, UnknownPassListsValidNamesWithPosition) {
  EXPECT_EQ(ErrorOf("NoOp,\n  Wrp"),
            "pipeline:2:3: error: unknown pass 'Wrp'; valid passes: CycleA, CycleB, Fail, Fuse, "
            "InferType, NeedsMissing, NeedsTypes, NoOp, Wrap, WrapNeedsTypes\n  Wrp\n  ^");
}

TEST_F(PipelineTest, UnknownOptionListsValidOptions) {
  EXPECT_EQ(ErrorOf("Fuse{depth=2}"),
            "pipeline:1:6: error: pass 'Fuse' has no option 'depth'; valid options: "
            "fuse_opt_level, aggressive, ratio, label\nFuse{depth=2}\n     ^");
  EXPECT_THAT(ErrorOf("NoOp{x=1}"), HasSubstr("valid options: none"));
}

TEST_F(PipelineTest, OptionValueOfWrongType) {
  EXPECT_EQ(ErrorOf("Fuse{fuse_opt_level=high}"),
            "pipeline:1:21: error: option 'fuse_opt_level' of pass 'Fuse': 'high' is not a "
            "int\nFuse{fuse_opt_level=high}\n                    ^");
  EXPECT_THAT(ErrorOf("Fuse{aggressive=maybe}"), HasSubstr("is not a bool"));
}

TEST_F(PipelineTest, FactoryErrorsArePositioned) {
  EXPECT_THAT(ErrorOf("NoOp, Fuse{fuse_opt_level=9}"),
              HasSubstr("pipeline:1:7: error: creating pass 'Fuse': fuse_opt_level must be at "
                        "most 3"));
}

TEST_F(PipelineTest, SyntaxErrors) {
  EXPECT_THAT(ErrorOf("NoOp Wrap"), HasSubstr("1:6: error: expected ',' between passes"));
  EXPECT_THAT(ErrorOf("NoOp,"), HasSubstr("1:6: error: expected a pass name"));
  EXPECT_THAT(ErrorOf("Fuse{fuse_opt_level}"), HasSubstr("expected '=' after 'fuse_opt_level'"));
  EXPECT_THAT(ErrorOf("Fuse{fuse_opt_level=1"), HasSubstr("expected ',' or '}' after an option"));
  EXPECT_THAT(ErrorOf("Fuse{label=\"abc}"), HasSubstr("1:12: error: unterminated string"));
  EXPECT_THAT(ErrorOf("Fuse{aggressive=1,aggressive=0}"),
              HasSubstr("option 'aggressive' is given twice"));
  EXPECT_THAT(ErrorOf("Sequential(NoOp"), HasSubstr("expected ',' or ')'"));
  EXPECT_THAT(ErrorOf("NoOp(Wrap)"), HasSubstr("only Sequential(...) takes a list of passes"));
}

TEST_F(PipelineTest, NestingIsBoundedBeforeItCanExhaustTheStack) {
  auto nested = [](int depth) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += "Sequential(";
    text += "NoOp";
    for (int i = 0; i < depth; ++i) text += ")";
    return text;
  };
  EXPECT_TRUE(ParseText(nested(kMaxPipelineNesting)).ok());
  EXPECT_THAT(ErrorOf(nested(kMaxPipelineNesting + 1)),
              HasSubstr("nests deeper than the limit of 64 levels"));
  // 200,000 levels (2.4 MB) once overflowed the stack; it is refused as text.
  std::string bomb;
  for (int i = 0; i < 200000; ++i) bomb += "Sequential(";
  EXPECT_THAT(ErrorOf(bomb), HasSubstr("limit of 64 levels"));
}

TEST_F(PipelineTest, PassesBuiltInCodePrintByName) {
  Pass pipeline = Sequential(
      {NoOpPass("Mine"), Sequential({NoOpPass("Inner")}, {"Named", 0, {}, PassStage::kGraph})});
  EXPECT_EQ(PrintPipeline(pipeline), "Mine,Sequential(Inner)");
  EXPECT_EQ(PrintPipeline(NoOpPass("Alone")), "Alone");
}

TEST_F(PipelineTest, RegistryRejectsBadRegistrations) {
  PassRegistry local;
  EXPECT_FALSE(
      local.Register(PassInfo{"", 0, {}, PassStage::kGraph}, "", [] { return NoOpPass(""); }).ok());
  EXPECT_FALSE(local.Register(PassInfo{"X", 0, {}, PassStage::kGraph}, "", nullptr).ok());
  ASSERT_TRUE(
      local.Register(PassInfo{"X", 0, {}, PassStage::kGraph}, "", [] { return NoOpPass("X"); })
          .ok());
  EXPECT_EQ(
      local.Register(PassInfo{"X", 0, {}, PassStage::kGraph}, "", [] { return NoOpPass("X"); })
          .code(),
      absl::StatusCode::kAlreadyExists);
  PassRegistration bad_option;
  bad_option.info = PassInfo{"Y", 0, {}, PassStage::kGraph};
  bad_option.options = {{"n", ConfigType::kInt, true, ""}};
  bad_option.factory = [](const PassOptions&) -> absl::StatusOr<Pass> { return NoOpPass("Y"); };
  EXPECT_FALSE(local.Register(std::move(bad_option)).ok());
  // A factory whose pass disagrees with the registered info.
  ASSERT_TRUE(local
                  .Register(PassInfo{"Liar", 1, {}, PassStage::kGraph}, "",
                            [] { return NoOpPass("Liar", 2); })
                  .ok());
  EXPECT_EQ(local.Create("Liar").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(local.List().size(), 2u);
  EXPECT_EQ(local.ValidNames(), "Liar, X");
}

TEST_F(PipelineTest, DefaultPipelinesParseAgainstTheirPassNames) {
  // The real passes live in engine/transform; here each name in the default
  // pipelines gets a stub so the text itself is checked.
  PassRegistry stubs;
  for (int level = 0; level <= 3; ++level) {
    for (absl::string_view entry : absl::StrSplit(DefaultPipeline(level), ',')) {
      std::string name(entry.substr(0, entry.find('{')));
      if (stubs.Find(name) != nullptr) continue;
      PassRegistration registration;
      registration.info = PassInfo{name, 0, {}, PassStage::kGraph};
      if (name == "FuseOps") {
        registration.options = {{"fuse_opt_level", ConfigType::kInt, int64_t{-1}, ""}};
      }
      registration.factory = [name](const PassOptions&) -> absl::StatusOr<Pass> {
        return NoOpPass(name);
      };
      ASSERT_TRUE(stubs.Register(std::move(registration)).ok());
    }
  }
  for (int level = 0; level <= 3; ++level) {
    absl::StatusOr<Pass> pipeline = ParsePipeline(DefaultPipeline(level), stubs);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    EXPECT_EQ(PrintPipeline(*pipeline), DefaultPipeline(level));
  }
  EXPECT_EQ(DefaultPipeline(7), DefaultPipeline(3));
  EXPECT_EQ(DefaultPipeline(-1), DefaultPipeline(0));
}

}  // namespace
}  // namespace kiln::testing
