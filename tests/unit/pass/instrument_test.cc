// The instrument call order and error rules of the seed (pass_context.h),
// checked by logging every callback of every instrument in each failure case
// (as MLIR's PassManagerTest counts them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/pass/pass_context.h"
#include "tests/unit/pass/pass_test_util.h"

namespace kiln::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class InstrumentTest : public ::testing::Test {
 protected:
  std::shared_ptr<Recorder> Add(const std::string& name) {
    auto recorder = std::make_shared<Recorder>(name, &log);
    context.AddInstrument(recorder);
    return recorder;
  }

  std::vector<std::string> log;
  PassContext context;
  IRModule module = SmallModule();
};

TEST_F(InstrumentTest, NormalRunCallsEveryHookInOrder) {
  Add("A");
  Add("B");
  Pass pipeline = Sequential({NoOpPass("P1"), WrapReluPass("P2")});
  {
    PassContext::Scope scope(context);
    ASSERT_TRUE(scope.status().ok());
    ASSERT_TRUE((*pipeline)(module).ok());
    ASSERT_TRUE(scope.Close().ok());
  }
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter",                                //
                               "A.ShouldRun:Sequential", "B.ShouldRun:Sequential",  //
                               "A.Before:Sequential", "B.Before:Sequential",        //
                               "A.ShouldRun:P1", "B.ShouldRun:P1", "A.Before:P1",   //
                               "B.Before:P1", "A.After:P1", "B.After:P1",           //
                               "A.ShouldRun:P2", "B.ShouldRun:P2", "A.Before:P2",   //
                               "B.Before:P2", "A.After:P2", "B.After:P2",           //
                               "A.After:Sequential", "B.After:Sequential",          //
                               "A.Exit", "B.Exit"));
}

TEST_F(InstrumentTest, EnterFailureExitsEarlierOnesAndNeverEntersLaterOnes) {
  Add("A");
  Add("B")->fail = {"Enter"};
  Add("C");
  {
    PassContext::Scope scope(context);
    EXPECT_EQ(scope.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(scope.status().message()),
                HasSubstr("instrument 'B' failed in EnterPassContext: B failed in Enter"));
    // Not pushed: the thread's current context is still the default one.
    EXPECT_NE(&PassContext::Current(), &context);
    // Instrumentation is disabled: passes run without any callback.
    EXPECT_TRUE(context.instruments().empty());
    ASSERT_TRUE((*NoOpPass("P"))(module, context).ok());
  }
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "A.Exit"));
  EXPECT_EQ(Count(log, "C.Enter"), 0);
  EXPECT_EQ(CountPrefix(log, "C."), 0);
}

TEST_F(InstrumentTest, EnterExceptionBecomesStatus) {
  Add("A");
  auto b = Add("B");
  b->fail = {"Enter"};
  b->throw_instead = true;
  PassContext::Scope scope(context);
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(scope.status().message()), HasSubstr("threw: B threw in Enter"));
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "A.Exit"));
}

TEST_F(InstrumentTest, FirstInstrumentFailingToEnterExitsNobody) {
  Add("A")->fail = {"Enter"};
  Add("B");
  PassContext::Scope scope(context);
  EXPECT_FALSE(scope.status().ok());
  EXPECT_THAT(log, ElementsAre("A.Enter"));
}

TEST_F(InstrumentTest, ExitFailureStopsLaterExitsAndClearsInstruments) {
  Add("A");
  Add("B")->fail = {"Exit"};
  Add("C");
  PassContext::Scope scope(context);
  ASSERT_TRUE(scope.status().ok());
  absl::Status closed = scope.Close();
  EXPECT_THAT(std::string(closed.message()), HasSubstr("instrument 'B' failed in ExitPassContext"));
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "C.Enter", "A.Exit", "B.Exit"));
  EXPECT_TRUE(context.instruments().empty());
  // Closing again (or the destructor) does nothing more.
  EXPECT_TRUE(scope.Close().ok());
  EXPECT_EQ(log.size(), 5u);
}

TEST_F(InstrumentTest, ExitExceptionBecomesStatus) {
  auto a = Add("A");
  a->fail = {"Exit"};
  a->throw_instead = true;
  Add("B");
  PassContext::Scope scope(context);
  absl::Status closed = scope.Close();
  EXPECT_EQ(closed.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "A.Exit"));
}

TEST_F(InstrumentTest, DestructorExitsInstruments) {
  Add("A");
  { PassContext::Scope scope(context); }
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.Exit"));
}

TEST_F(InstrumentTest, ShouldRunFalseSkipsThePassButAsksEveryInstrument) {
  Add("A")->skip = {"P"};
  Add("B");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*WrapReluPass("P"))(module);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->same_as(module));  // not run
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "A.ShouldRun:P", "B.ShouldRun:P"));
}

TEST_F(InstrumentTest, ShouldRunFailureReturnsAtOnce) {
  Add("A");
  Add("B")->fail = {"ShouldRun:P"};
  Add("C");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*WrapReluPass("P"))(module);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("instrument 'B' failed in ShouldRun: B failed in ShouldRun:P"));
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "C.Enter", "A.ShouldRun:P", "B.ShouldRun:P"));
  ASSERT_TRUE(scope.Close().ok());
  EXPECT_EQ(CountPrefix(log, "C.ShouldRun"), 0);
  EXPECT_EQ(Count(log, "A.Exit") + Count(log, "B.Exit") + Count(log, "C.Exit"), 3);
}

TEST_F(InstrumentTest, RequiredPassesAreNotAskedShouldRun) {
  Add("A")->skip = {"P"};
  context.AddRequiredPass("P");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*WrapReluPass("P"))(module);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->same_as(module));  // ran despite the instrument
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.Before:P", "A.After:P"));
}

TEST_F(InstrumentTest, PassesRequiredByOtherPassesAreNotAskedShouldRun) {
  TestRegistry registry;
  context.set_pass_registry(&registry.registry);
  Add("A")->skip = {"InferType"};
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result =
      (*Sequential({NoOpPass("NeedsTypes", 0, {"InferType"})}))(module);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*registry.infer_type_runs, 1);
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.ShouldRun:Sequential", "A.Before:Sequential",
                               "A.Before:InferType", "A.After:InferType", "A.ShouldRun:NeedsTypes",
                               "A.Before:NeedsTypes", "A.After:NeedsTypes", "A.After:Sequential"));
}

TEST_F(InstrumentTest, BeforePassFailureStopsLaterInstrumentsAndThePass) {
  Add("A");
  Add("B")->fail = {"Before:P"};
  Add("C");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*WrapReluPass("P"))(module);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("instrument 'B' failed in RunBeforePass"));
  ASSERT_TRUE(scope.Close().ok());
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "C.Enter",                    //
                               "A.ShouldRun:P", "B.ShouldRun:P", "C.ShouldRun:P",  //
                               "A.Before:P", "B.Before:P",                         //
                               "A.Exit", "B.Exit", "C.Exit"));
  EXPECT_EQ(CountPrefix(log, "C.Before"), 0);
  EXPECT_EQ(CountPrefix(log, "A.After"), 0);  // neither After nor AfterFailed
}

TEST_F(InstrumentTest, BeforePassExceptionBecomesStatus) {
  auto a = Add("A");
  a->fail = {"Before:P"};
  a->throw_instead = true;
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*NoOpPass("P"))(module);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("threw: A threw in Before:P"));
}

TEST_F(InstrumentTest, AfterPassFailureStopsLaterInstrumentsAndNamesThePass) {
  Add("A");
  Add("B")->fail = {"After:P"};
  Add("C");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*WrapReluPass("P"))(module);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("after pass 'P': instrument 'B' failed in RunAfterPass"));
  ASSERT_TRUE(scope.Close().ok());
  EXPECT_THAT(log, ElementsAre("A.Enter", "B.Enter", "C.Enter",                    //
                               "A.ShouldRun:P", "B.ShouldRun:P", "C.ShouldRun:P",  //
                               "A.Before:P", "B.Before:P", "C.Before:P",           //
                               "A.After:P", "B.After:P",                           //
                               "A.Exit", "B.Exit", "C.Exit"));
}

TEST_F(InstrumentTest, AfterPassFailureInsideSequentialFailsTheSequential) {
  Add("A")->fail = {"After:P1"};
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*Sequential({NoOpPass("P1"), NoOpPass("P2")}))(module);
  EXPECT_FALSE(result.ok());
  // P2 never runs; the container reports the failure to instruments.
  EXPECT_THAT(
      log, ElementsAre("A.Enter", "A.ShouldRun:Sequential", "A.Before:Sequential", "A.ShouldRun:P1",
                       "A.Before:P1", "A.After:P1", "A.AfterFailed:Sequential"));
}

TEST_F(InstrumentTest, FailedPassCallsAfterFailedOnEveryInstrument) {
  Add("A");
  Add("B");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result =
      (*Sequential({NoOpPass("P1"), FailingPass("Bad"), NoOpPass("P3")}))(module);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "pass 'Bad' failed: something is wrong");
  ASSERT_TRUE(scope.Close().ok());
  EXPECT_EQ(Count(log, "A.AfterFailed:Bad"), 1);
  EXPECT_EQ(Count(log, "B.AfterFailed:Bad"), 1);
  EXPECT_EQ(Count(log, "A.AfterFailed:Sequential"), 1);
  EXPECT_EQ(Count(log, "B.AfterFailed:Sequential"), 1);
  EXPECT_EQ(CountPrefix(log, "A.After:"), 1);  // P1 only
  EXPECT_EQ(CountPrefix(log, "A.ShouldRun:P3"), 0);
  EXPECT_EQ(Count(log, "A.Exit"), 1);
  EXPECT_EQ(Count(log, "B.Exit"), 1);
  // Order: the failing pass first, then its container.
  auto at = [&](std::string_view entry) {
    return std::find(log.begin(), log.end(), entry) - log.begin();
  };
  EXPECT_LT(at("B.AfterFailed:Bad"), at("A.AfterFailed:Sequential"));
}

TEST_F(InstrumentTest, AfterFailedHookFailureIsAppendedAndOthersStillCalled) {
  Add("A")->fail = {"AfterFailed:Bad"};
  Add("B");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*FailingPass("Bad"))(module);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);  // the pass's code
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("pass 'Bad' failed: something is wrong\nnote: instrument 'A' failed in "
                        "RunAfterPassFailed"));
  EXPECT_EQ(Count(log, "B.AfterFailed:Bad"), 1);
}

TEST_F(InstrumentTest, ThrowingPassIsAFailedPass) {
  Add("A");
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> result = (*ThrowingPass("Thrower"))(module);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(result.status().message(), "pass 'Thrower' failed: threw: boom");
  EXPECT_EQ(Count(log, "A.AfterFailed:Thrower"), 1);
  EXPECT_EQ(context.depth(), 0);
}

TEST_F(InstrumentTest, OverrideExitsOldInstrumentsAndEntersNewOnes) {
  Add("A");
  PassContext::Scope scope(context);
  auto b = std::make_shared<Recorder>("B", &log);
  auto c = std::make_shared<Recorder>("C", &log);
  ASSERT_TRUE(context.OverrideInstruments({b, c}).ok());
  ASSERT_TRUE((*NoOpPass("P"))(module).ok());
  ASSERT_TRUE(scope.Close().ok());
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.Exit", "B.Enter", "C.Enter",       //
                               "B.ShouldRun:P", "C.ShouldRun:P", "B.Before:P",  //
                               "C.Before:P", "B.After:P", "C.After:P", "B.Exit", "C.Exit"));
}

TEST_F(InstrumentTest, OverrideOfTheDefaultContextWorksWithoutScope) {
  // The seed's example: no context created; instruments go on the current one.
  PassContext& current = PassContext::Current();
  auto a = std::make_shared<Recorder>("A", &log);
  ASSERT_TRUE(current.OverrideInstruments({a}).ok());
  ASSERT_TRUE((*NoOpPass("P"))(module).ok());
  ASSERT_TRUE(current.OverrideInstruments({}).ok());
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.ShouldRun:P", "A.Before:P", "A.After:P", "A.Exit"));
}

TEST_F(InstrumentTest, OverrideWithFailingOldExitStillInstallsNewOnes) {
  Add("A")->fail = {"Exit"};
  PassContext::Scope scope(context);
  auto b = std::make_shared<Recorder>("B", &log);
  absl::Status status = context.OverrideInstruments({b});
  EXPECT_THAT(std::string(status.message()), HasSubstr("instrument 'A' failed in ExitPassContext"));
  ASSERT_EQ(context.instruments().size(), 1u);
  EXPECT_EQ(context.instruments()[0], b);
  EXPECT_THAT(log, ElementsAre("A.Enter", "A.Exit", "B.Enter"));
}

TEST_F(InstrumentTest, OverrideWithFailingNewEnterFollowsTheEnterRule) {
  PassContext::Scope scope(context);
  auto b = std::make_shared<Recorder>("B", &log);
  auto c = std::make_shared<Recorder>("C", &log);
  auto d = std::make_shared<Recorder>("D", &log);
  c->fail = {"Enter"};
  absl::Status status = context.OverrideInstruments({b, c, d});
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(context.instruments().empty());
  EXPECT_THAT(log, ElementsAre("B.Enter", "C.Enter", "B.Exit"));
}

TEST_F(InstrumentTest, NestedPassesReportTheirDepth) {
  struct DepthRecorder : PassInstrument {
    DepthRecorder() : PassInstrument("Depth") {}
    absl::Status RunBeforePass(const IRModule&, const PassInvocation& pass) override {
      seen.push_back(absl::StrCat(pass.name(), "@", pass.depth));
      return absl::OkStatus();
    }
    std::vector<std::string> seen;
  };
  auto depth = std::make_shared<DepthRecorder>();
  context.AddInstrument(depth);
  PassContext::Scope scope(context);
  Pass pipeline = Sequential({NoOpPass("A"), Sequential({NoOpPass("B")}, {"Inner", 0, {}, {}})});
  ASSERT_TRUE((*pipeline)(module).ok());
  EXPECT_THAT(depth->seen, ElementsAre("Sequential@0", "A@1", "Inner@1", "B@2"));
}

}  // namespace
}  // namespace kiln::testing
