// PassContext: typed config options checked against the one registry, and
// the thread-local stack of current contexts.
#include "engine/pass/pass_context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "engine/pass/pass_config.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

TEST(PassContextTest, Defaults) {
  PassContext context;
  EXPECT_EQ(context.opt_level(), 2);
  EXPECT_TRUE(context.required_passes().empty());
  EXPECT_TRUE(context.disabled_passes().empty());
  EXPECT_TRUE(context.config().empty());
  EXPECT_TRUE(context.GetConfig<bool>(kConfigEnableSIBuilder));
  EXPECT_EQ(context.GetConfig<int64_t>(kConfigMaxPassIndex), -1);
  EXPECT_EQ(context.GetConfig<std::string>(kConfigSpanCoverage), "off");
}

TEST(PassContextTest, SetTypedConfig) {
  PassContext context;
  ASSERT_TRUE(context.SetConfig(kConfigEnableSIBuilder, false).ok());
  EXPECT_FALSE(context.GetConfig<bool>(kConfigEnableSIBuilder));
  ASSERT_TRUE(context.SetConfigFromString(kConfigMaxPassIndex, "7").ok());
  EXPECT_EQ(context.GetConfig<int64_t>(kConfigMaxPassIndex), 7);
  ASSERT_TRUE(context.SetConfigFromAssignment("pass.span_coverage=strict").ok());
  EXPECT_EQ(context.GetConfig<std::string>(kConfigSpanCoverage), "strict");
  EXPECT_EQ(context.config().size(), 3u);
}

TEST(PassContextTest, UnknownKeyListsValidKeys) {
  PassContext context;
  absl::Status status = context.SetConfigFromAssignment("ir.enable_si_bulder=true");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "unknown config option 'ir.enable_si_bulder'; valid options: ir.enable_si_builder, "
            "lower.min_parallel_work, lower.share_kernels, pass.max_pass_index, pass.span_coverage, pass.verify_each, "
            "pass.verify_types, te.keep_schedule_record");
  EXPECT_FALSE(context.SetConfig("nope", true).ok());
}

TEST(PassContextTest, WrongTypeNamesTheExpectedType) {
  PassContext context;
  absl::Status status = context.SetConfig(kConfigEnableSIBuilder, int64_t{1});
  EXPECT_EQ(status.message(),
            "config option 'ir.enable_si_builder': expected a bool, got a int (1)");
  status = context.SetConfigFromString(kConfigMaxPassIndex, "three");
  EXPECT_EQ(status.message(), "config option 'pass.max_pass_index': 'three' is not a int");
  status = context.SetConfigFromString(kConfigVerifyEach, "yes");
  EXPECT_THAT(std::string(status.message()), HasSubstr("expected true, false, 1 or 0"));
  EXPECT_FALSE(context.SetConfigFromAssignment("=1").ok());
  EXPECT_FALSE(context.SetConfigFromAssignment("pass.verify_each").ok());
  EXPECT_TRUE(context.config().empty());
}

TEST(PassContextTest, CustomConfigRegistryWithFloats) {
  PassConfigRegistry registry;
  ASSERT_TRUE(registry.Register({"t.ratio", ConfigType::kFloat, 0.5, "a ratio"}).ok());
  EXPECT_FALSE(registry.Register({"t.ratio", ConfigType::kFloat, 0.5, ""}).ok());
  EXPECT_FALSE(registry.Register({"t.bad", ConfigType::kInt, 0.5, ""}).ok());
  PassContext context;
  context.set_config_registry(&registry);
  EXPECT_EQ(context.GetConfig<double>("t.ratio"), 0.5);
  // An int is a fine float.
  ASSERT_TRUE(context.SetConfig("t.ratio", int64_t{2}).ok());
  EXPECT_EQ(context.GetConfig<double>("t.ratio"), 2.0);
  ASSERT_TRUE(context.SetConfigFromString("t.ratio", "0.25").ok());
  EXPECT_EQ(context.GetConfig<double>("t.ratio"), 0.25);
  EXPECT_THAT(std::string(context.SetConfig(kConfigVerifyEach, true).message()),
              HasSubstr("valid options: t.ratio"));
}

TEST(PassContextTest, RequiredAndDisabledListsHoldEachNameOnce) {
  PassContext context;
  context.AddRequiredPass("A");
  context.AddRequiredPass("A");
  context.AddDisabledPass("B");
  EXPECT_EQ(context.required_passes().size(), 1u);
  EXPECT_TRUE(context.IsRequired("A"));
  EXPECT_TRUE(context.IsDisabled("B"));
  EXPECT_FALSE(context.IsDisabled("A"));
}

TEST(PassContextTest, ScopesNest) {
  PassContext& outside = PassContext::Current();
  PassContext a, b;
  {
    PassContext::Scope scope_a(a);
    EXPECT_EQ(&PassContext::Current(), &a);
    {
      PassContext::Scope scope_b(b);
      EXPECT_EQ(&PassContext::Current(), &b);
    }
    EXPECT_EQ(&PassContext::Current(), &a);
  }
  EXPECT_EQ(&PassContext::Current(), &outside);
}

TEST(PassContextTest, EachThreadHasItsOwnCurrentContext) {
  PassContext main_context;
  main_context.set_opt_level(3);
  PassContext::Scope scope(main_context);
  int seen_in_thread = -1;
  PassContext* thread_default = nullptr;
  std::thread worker([&] {
    // The worker does not see the main thread's scope.
    seen_in_thread = PassContext::Current().opt_level();
    thread_default = &PassContext::Current();
    PassContext mine;
    mine.set_opt_level(0);
    PassContext::Scope worker_scope(mine);
    EXPECT_EQ(PassContext::Current().opt_level(), 0);
  });
  worker.join();
  EXPECT_EQ(seen_in_thread, 2);
  EXPECT_NE(thread_default, &PassContext::Current());
  EXPECT_EQ(PassContext::Current().opt_level(), 3);
}

TEST(ConfigValueTest, ParseAndFormat) {
  EXPECT_EQ(std::get<bool>(*ParseConfigValue("1", ConfigType::kBool)), true);
  EXPECT_EQ(std::get<int64_t>(*ParseConfigValue("-4", ConfigType::kInt)), -4);
  EXPECT_EQ(std::get<double>(*ParseConfigValue("1e-3", ConfigType::kFloat)), 1e-3);
  EXPECT_EQ(std::get<std::string>(*ParseConfigValue("\"a b\"", ConfigType::kString)), "a b");
  EXPECT_FALSE(ParseConfigValue("inf", ConfigType::kFloat).ok());
  EXPECT_EQ(FormatConfigValue(ConfigValue(0.1)), "0.1");
  EXPECT_EQ(FormatConfigValue(ConfigValue(2.0)), "2");
  EXPECT_EQ(FormatConfigValue(ConfigValue(false)), "false");
  EXPECT_EQ(FormatConfigValue(ConfigValue(std::string("plain"))), "plain");
  EXPECT_EQ(FormatConfigValue(ConfigValue(std::string("a,\"b\""))), "\"a,\\\"b\\\"\"");
}

}  // namespace
}  // namespace kiln
