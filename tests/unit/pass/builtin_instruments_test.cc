// The built-in instruments: PassTiming, PrintIR, SpanCoverage, Verifier,
// CrashReproducer, Bisect, the observer adapter and the config switches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/pass/bisect.h"
#include "engine/pass/configured_instruments.h"
#include "engine/pass/crash_reproducer.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_event.h"
#include "engine/pass/pass_timing.h"
#include "engine/pass/pipeline.h"
#include "engine/pass/print_ir.h"
#include "engine/pass/span_coverage.h"
#include "engine/pass/verifier.h"
#include "engine/printer/printer.h"
#include "tests/unit/pass/pass_test_util.h"

namespace kiln::testing {
namespace {

// The verifier's type check with the operators' type inference.
absl::StatusOr<IRModule> InferModuleTypes(const IRModule& module) { return InferType(module); }

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A clock that advances 1 ms per reading.
std::function<std::chrono::nanoseconds()> TickingClock() {
  auto now = std::make_shared<int64_t>(0);
  return [now] {
    *now += 1'000'000;
    return std::chrono::nanoseconds(*now);
  };
}

absl::StatusOr<IRModule> RunWith(const Pass& pass, const IRModule& module,
                                 std::vector<std::shared_ptr<PassInstrument>> instruments,
                                 PassContext* context_in = nullptr) {
  PassContext local;
  PassContext& context = context_in ? *context_in : local;
  for (auto& instrument : instruments) context.AddInstrument(instrument);
  PassContext::Scope scope(context);
  if (!scope.status().ok()) return scope.status();
  absl::StatusOr<IRModule> result = (*pass)(module, context);
  absl::Status closed = scope.Close();
  if (!closed.ok()) return closed;
  return result;
}

TEST(PassTimingTest, TreeAndListReports) {
  auto timing = std::make_shared<PassTiming>(TickingClock());
  Pass pipeline = Sequential({NoOpPass("A"), Sequential({NoOpPass("B"), NoOpPass("A")},
                                                        {"Inner", 0, {}, PassStage::kGraph})});
  ASSERT_TRUE(RunWith(pipeline, SmallModule(), {timing}).ok());
  ASSERT_EQ(timing->roots().size(), 1u);
  const PassTiming::Record& root = timing->roots()[0];
  EXPECT_EQ(root.pass, "Sequential");
  ASSERT_EQ(root.children.size(), 2u);
  EXPECT_EQ(root.children[1].pass, "Inner");
  EXPECT_EQ(root.children[1].children.size(), 2u);
  // Each pass reads the clock twice; nested readings add up.
  EXPECT_EQ(root.children[0].duration, std::chrono::milliseconds(1));
  EXPECT_EQ(root.children[1].duration, std::chrono::milliseconds(5));
  EXPECT_EQ(root.duration, std::chrono::milliseconds(9));
  EXPECT_EQ(timing->RenderTree(),
            "==============================================================================\n"
            "  Pass execution timing report (tree)\n"
            "==============================================================================\n"
            "  Total: 9.000 ms\n"
            "\n"
            "      Wall time    Share  Pass\n"
            "       9.000 ms (100.0%)  Sequential\n"
            "       1.000 ms ( 11.1%)    A\n"
            "       5.000 ms ( 55.6%)    Inner\n"
            "       1.000 ms ( 11.1%)      B\n"
            "       1.000 ms ( 11.1%)      A\n");
  EXPECT_EQ(timing->RenderList(),
            "==============================================================================\n"
            "  Pass execution timing report (list)\n"
            "==============================================================================\n"
            "  Total: 9.000 ms\n"
            "\n"
            "      Wall time    Share  Runs  Pass\n"
            "       2.000 ms ( 22.2%)     2  A\n"
            "       1.000 ms ( 11.1%)     1  B\n");
}

TEST(PassTimingTest, FailedPassesAreMarkedAndEnterResets) {
  auto timing = std::make_shared<PassTiming>(TickingClock());
  EXPECT_FALSE(RunWith(Sequential({FailingPass("Bad")}), SmallModule(), {timing}).ok());
  EXPECT_THAT(timing->RenderTree(), HasSubstr("  Bad (failed)\n"));
  ASSERT_TRUE(RunWith(NoOpPass("Fine"), SmallModule(), {timing}).ok());
  ASSERT_EQ(timing->roots().size(), 1u);
  EXPECT_EQ(timing->roots()[0].pass, "Fine");
}

TEST(PrintIRTest, BeforeAndAfterAllSkipContainers) {
  std::ostringstream out;
  PrintIRFilter filter;
  filter.before_all = true;
  filter.after_all = true;
  PrintOptions options;
  options.show_spans = false;
  auto print = std::make_shared<PrintIR>(filter, &out, options);
  ASSERT_TRUE(RunWith(Sequential({WrapReluPass("Wrap")}), SmallModule(), {print}).ok());
  EXPECT_EQ(out.str(),
            "// -----// IR Dump Before Wrap //----- //\n"
            "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
            "  %0 = nn.relu(%x);\n"
            "  add(%0, 1f)\n"
            "}\n"
            "\n"
            "// -----// IR Dump After Wrap //----- //\n"
            "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
            "  %0 = nn.relu(%x);\n"
            "  %1 = add(%0, 1f);\n"
            "  nn.relu(%1)\n"
            "}\n"
            "\n");
}

TEST(PrintIRTest, NamedPassesAndOnlyChanged) {
  std::vector<std::string> titles;
  PrintIRFilter filter;
  filter.after = {"Wrap", "NoOp", "Sequential"};
  filter.before = {"NoOp"};
  auto print = std::make_shared<PrintIR>(
      filter, [&titles](const std::string& title, const IRModule&) { titles.push_back(title); });
  Pass pipeline = Sequential({NoOpPass("NoOp"), WrapReluPass("Wrap"), NoOpPass("Other")});
  ASSERT_TRUE(RunWith(pipeline, SmallModule(), {print}).ok());
  EXPECT_THAT(titles, ElementsAre("IR Dump Before NoOp", "IR Dump After NoOp", "IR Dump After Wrap",
                                  "IR Dump After Sequential"));

  titles.clear();
  filter.only_changed = true;
  print = std::make_shared<PrintIR>(
      filter, [&titles](const std::string& title, const IRModule&) { titles.push_back(title); });
  ASSERT_TRUE(RunWith(pipeline, SmallModule(), {print}).ok());
  // NoOp returned the same module: no after-dump. Before-dumps are not filtered.
  EXPECT_THAT(titles,
              ElementsAre("IR Dump Before NoOp", "IR Dump After Wrap", "IR Dump After Sequential"));
}

TEST(SpanCoverageTest, CountsCallsAndNodes) {
  SpanStats stats = CountSpans(SmallModule());
  EXPECT_EQ(stats.calls, 2);
  EXPECT_EQ(stats.calls_with_span, 2);
  // main, %x, relu, add, 1f (ops are handles, not counted).
  EXPECT_EQ(stats.nodes, 5);
  EXPECT_EQ(stats.nodes_with_span, 3);
}

TEST(SpanCoverageTest, ReportsEachPass) {
  auto coverage = std::make_shared<SpanCoverage>();
  Pass pipeline = Sequential({WrapReluPass("Keep", "kept"), WrapReluPass("Drop", "")});
  ASSERT_TRUE(RunWith(pipeline, SmallModule(), {coverage}).ok());
  ASSERT_EQ(coverage->results().size(), 2u);
  EXPECT_EQ(coverage->Render(),
            "  Keep: calls 3/3 (100.0%), nodes 4/6 (66.7%)\n"
            "  Drop: calls 3/4 (75.0%), nodes 4/7 (57.1%)\n");
}

TEST(SpanCoverageTest, StrictModeFailsThePassWithTheNodeUnderlined) {
  auto coverage = std::make_shared<SpanCoverage>(/*strict=*/true);
  auto reproducer_log = std::make_shared<std::vector<std::string>>();
  Pass pipeline = Sequential({WrapReluPass("Keep", "kept"), WrapReluPass("Drop", "")});
  absl::StatusOr<IRModule> result = RunWith(pipeline, SmallModule(), {coverage});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(result.status().message(),
            "after pass 'Drop': instrument 'SpanCoverage' failed in RunAfterPass: pass 'Drop' "
            "left 1 of 4 calls without a source span; the first:\n"
            "def @main(%x: Tensor[(2), float32] /* si=x */) -> Tensor[(2), float32] {\n"
            "  %0 = nn.relu(%x) /* si=relu */;\n"
            "  %1 = add(%0, 1f) /* si=add */;\n"
            "  %2 = nn.relu(%1) /* si=kept */;\n"
            "  nn.relu(%2)\n"
            "  ^^^^^^^^^^^\n"
            "}\n");
}

TEST(VerifierTest, AcceptsWellFormedModules) {
  EXPECT_TRUE(VerifyModule(SmallModule()).ok());
  IRModule lets = Parse(R"(def @helper(%y: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %y
}

def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %a = nn.relu(%x);
  let %b = add(%a, %a);
  @helper(%b)
}
)");
  absl::Status status = VerifyModule(lets, {InferModuleTypes});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(VerifierTest, UnboundVariable) {
  // A pass that moves a function body into another function without its
  // parameters leaves %x free.
  IRModule module = SmallModule();
  const auto* main = module->functions[0].second.as<FunctionNode>();
  Var other = MakeVar("other", MakeTensorType({2}, DataType::kFloat32));
  IRModule broken = MakeModuleFromMain(MakeFunction({other}, main->body, main->ret_type));
  absl::Status status = VerifyModule(broken);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("variable %x is used but never bound"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("^^"));
}

TEST(VerifierTest, VariableBoundTwiceAndUsedOutsideItsScope) {
  Var x = MakeVar("x", MakeTensorType({2}, DataType::kFloat32));
  Var v = MakeVar("v");
  Expr relu = MakeCall(GetOp("nn.relu"), {x});
  // let %v = relu(%x); let %v = relu(%x); %v  (the same Var node bound twice)
  Expr twice = MakeLet(v, relu, MakeLet(v, relu, v));
  absl::Status status = VerifyModule(MakeModuleFromMain(MakeFunction({x}, twice)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("variable %v is bound twice"));

  // (let %v = relu(%x); %v) + %v: the second use is outside the let.
  Expr escaped = MakeCall(GetOp("add"), {MakeLet(v, relu, v), v});
  status = VerifyModule(MakeModuleFromMain(MakeFunction({x}, escaped)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("variable %v is used outside its scope"));
}

TEST(VerifierTest, UndefinedGlobal) {
  IRModule module = Parse(R"(def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @gone(%x)
}

def @gone(%y: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %y
}
)");
  IRModule without = MakeModule({module->functions[0]});
  EXPECT_THAT(std::string(VerifyModule(without).message()),
              HasSubstr("@gone is not defined in the module"));
}

TEST(VerifierTest, StaleTypesAreFoundOnlyWhenAsked) {
  absl::StatusOr<IRModule> typed = InferType(SmallModule());
  ASSERT_TRUE(typed.ok());
  // Give the relu call a wrong checked type, as a rewrite that forgot to
  // re-type would.
  struct Corrupt : ExprMutator {
    Expr VisitExpr_(const Expr& expr) override {
      Expr rebuilt = ExprMutator::VisitExpr_(expr);
      if (const auto* call = rebuilt.as<CallNode>()) {
        if (call->op.as<OpNode>()->name == "nn.relu") {
          return WithCheckedType(rebuilt, MakeTensorType({3}, DataType::kFloat32));
        }
      }
      return rebuilt;
    }
  } corrupt;
  const auto& [name, function] = (*typed)->functions[0];
  IRModule stale = MakeModule({{name, Downcast<BaseFuncNode>(corrupt.VisitExpr(function))}});
  EXPECT_TRUE(VerifyModule(stale).ok());
  absl::Status status = VerifyModule(stale, {InferModuleTypes});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("a node's checked type is Tensor[(3), float32] but re-inference gives "
                        "Tensor[(2), float32]"));
  EXPECT_TRUE(VerifyModule(*typed, {InferModuleTypes}).ok());
}

TEST(VerifierTest, InstrumentNamesThePass) {
  Pass escape = CreateFunctionPass(
      [](const Function& f, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        Var fresh = MakeVar("fresh", MakeTensorType({2}, DataType::kFloat32));
        return MakeFunction({fresh}, f->body, f->ret_type);
      },
      PassInfo{"Escape", 0, {}, PassStage::kGraph});
  auto verifier = std::make_shared<Verifier>();
  absl::StatusOr<IRModule> result =
      RunWith(Sequential({NoOpPass("Fine"), escape}), SmallModule(), {verifier});
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("pass 'Escape' produced invalid IR: variable %x is used but never bound"));
}

class CrashReproducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory = std::filesystem::path(::testing::TempDir()) /
                ("kiln_reproducer_" +
                 std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(directory);
  }
  static std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::stringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
  }
  std::filesystem::path directory;
  TestRegistry registry;
};

TEST_F(CrashReproducerTest, WritesTheInputOfTheFailingPassAndARunLine) {
  absl::StatusOr<Pass> pipeline = ParsePipeline("Wrap,Fail,NoOp", registry.registry);
  ASSERT_TRUE(pipeline.ok());
  PassContext context;
  context.set_opt_level(3);
  ASSERT_TRUE(context.SetConfigFromAssignment("ir.enable_si_builder=false").ok());
  context.AddDisabledPass("Other");
  CrashReproducerOptions options;
  options.directory = directory.string();
  options.context_flags = ContextFlags(context);
  options.full_pipeline = PrintPipeline(*pipeline);
  auto reproducer = std::make_shared<CrashReproducer>(options);
  absl::StatusOr<IRModule> result = RunWith(*pipeline, SmallModule(), {reproducer}, &context);
  ASSERT_FALSE(result.ok());
  // Written once, for the innermost failure (not again for the Sequential).
  ASSERT_EQ(reproducer->written().size(), 1u);
  std::filesystem::path path = directory / "reproducer_Fail.kir";
  EXPECT_EQ(reproducer->written()[0], path.string());
  std::string text = ReadFile(path);
  EXPECT_EQ(text,
            "// RUN: kiln-opt %s --passes=Fail -O3 --disable-pass=Other "
            "--config=ir.enable_si_builder=false\n"
            "// Reproducer: the IR given to pass 'Fail', which failed with:\n"
            "// pass 'Fail' failed: something is wrong\n"
            "// Full pipeline: Wrap,Fail,NoOp\n"
            "def @main(%x: Tensor[(2), float32] /* si=x */) -> Tensor[(2), float32] {\n"
            "  %0 = nn.relu(%x) /* si=relu */;\n"
            "  %1 = add(%0, 1f) /* si=add */;\n"
            "  nn.relu(%1) /* si=wrapped */\n"
            "}\n");
  // The reproducer is valid IR text.
  EXPECT_TRUE(ParseModule(text).ok());
}

TEST_F(CrashReproducerTest, KeepsTheOptionsOfTheFailingPass) {
  ASSERT_TRUE(registry.registry
                  .Register(PassRegistration{PassInfo{"FailWithOptions", 0, {}, PassStage::kGraph},
                                             "",
                                             {{"level", ConfigType::kInt, int64_t{0}, ""}},
                                             [](const PassOptions&) -> absl::StatusOr<Pass> {
                                               return FailingPass("FailWithOptions");
                                             }})
                  .ok());
  absl::StatusOr<Pass> pipeline = ParsePipeline("FailWithOptions{level=4}", registry.registry);
  ASSERT_TRUE(pipeline.ok());
  CrashReproducerOptions options;
  options.directory = directory.string();
  auto reproducer = std::make_shared<CrashReproducer>(options);
  ASSERT_FALSE(RunWith(*pipeline, SmallModule(), {reproducer}).ok());
  EXPECT_THAT(ReadFile(directory / "reproducer_FailWithOptions.kir"),
              HasSubstr("// RUN: kiln-opt %s '--passes=FailWithOptions{level=4}'\n"));
}

TEST_F(CrashReproducerTest, UnwritableDirectoryIsANote) {
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "file") << "x";
  CrashReproducerOptions options;
  options.directory = (directory / "file" / "sub").string();
  auto reproducer = std::make_shared<CrashReproducer>(options);
  absl::StatusOr<IRModule> result = RunWith(FailingPass("Bad"), SmallModule(), {reproducer});
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("something is wrong\nnote: instrument 'CrashReproducer' failed in "
                        "RunAfterPassFailed: cannot create reproducer directory"));
}

TEST(BisectTest, RunsOnlyTheFirstNPassesThatAreNotRequired) {
  std::ostringstream log;
  auto bisect = std::make_shared<Bisect>(2, &log);
  auto ran = std::make_shared<std::vector<std::string>>();
  auto probe = [ran](std::string name) {
    return CreateModulePass(
        [ran, name](const IRModule& m, PassContext&) -> absl::StatusOr<IRModule> {
          ran->push_back(name);
          return m;
        },
        PassInfo{name, 0, {}, PassStage::kGraph});
  };
  PassContext context;
  context.AddRequiredPass("R");
  Pass pipeline = Sequential({probe("A"), probe("R"), probe("B"), probe("C"), probe("D")});
  ASSERT_TRUE(RunWith(pipeline, SmallModule(), {bisect}, &context).ok());
  EXPECT_THAT(*ran, ElementsAre("A", "R", "B"));
  EXPECT_EQ(log.str(),
            "BISECT: running pass (1) A\n"
            "BISECT: running pass (2) B\n"
            "BISECT: NOT running pass (3) C\n"
            "BISECT: NOT running pass (4) D\n");
  ASSERT_EQ(bisect->decisions().size(), 4u);
}

class EventLog final : public PassObserver {
 public:
  void OnPassEvent(const PassEvent& event) override { events.push_back(event); }
  std::vector<PassEvent> events;
};

TEST(ObserverTest, EventsCarryIndexDepthChangeAndIR) {
  EventLog log;
  ObserverOptions options;
  options.report_before = true;
  options.include_ir_after = true;
  options.include_span_stats = true;
  auto observer = std::make_shared<ObserverInstrument>(&log, options, TickingClock());
  ASSERT_TRUE(
      RunWith(Sequential({NoOpPass("Same"), WrapReluPass("Wrap")}), SmallModule(), {observer})
          .ok());
  std::vector<std::string> lines;
  for (const PassEvent& event : log.events) {
    lines.push_back(absl::StrCat(PassEventKindName(event.kind), " ", event.index, " ", event.pass,
                                 " depth=", event.depth, " changed=", event.changed,
                                 " ms=", event.duration_ms, " ir=", event.ir_after.defined()));
  }
  EXPECT_THAT(lines, ElementsAre("before 0 Sequential depth=0 changed=0 ms=0 ir=0",
                                 "before 1 Same depth=1 changed=0 ms=0 ir=0",
                                 "after 1 Same depth=1 changed=0 ms=1 ir=1",
                                 "before 2 Wrap depth=1 changed=0 ms=0 ir=0",
                                 "after 2 Wrap depth=1 changed=1 ms=1 ir=1",
                                 "after 0 Sequential depth=0 changed=1 ms=5 ir=1"));
  ASSERT_TRUE(log.events[4].spans.has_value());
  EXPECT_EQ(log.events[4].spans->calls, 3);
}

TEST(ObserverTest, JsonLine) {
  PassEvent event;
  event.kind = PassEvent::Kind::kAfter;
  event.index = 3;
  event.pass = "FoldConstant";
  event.depth = 1;
  event.duration_ms = 1.23456;
  event.changed = true;
  EXPECT_EQ(PassEventToJson(event),
            R"({"index":3,"event":"after","pass":"FoldConstant","stage":"graph","depth":1,)"
            R"("duration_ms":1.235,"changed":true})");
  EXPECT_EQ(PassEventToJson(event, /*include_duration=*/false),
            R"({"index":3,"event":"after","pass":"FoldConstant","stage":"graph","depth":1,)"
            R"("changed":true})");
  event.ir_after = SmallModule();
  std::string json = PassEventToJson(event, false);
  EXPECT_THAT(json, HasSubstr(R"("ir":{)"));
  EXPECT_THAT(json, Not(HasSubstr("\n")));
  event.kind = PassEvent::Kind::kFailed;
  event.error = "bad";
  EXPECT_THAT(PassEventToJson(event, false), HasSubstr(R"("error":"bad")"));
}

TEST(ConfiguredInstrumentsTest, ConfigTurnsInstrumentsOn) {
  PassContext context;
  absl::StatusOr<ConfiguredInstruments> none = AddConfiguredInstruments(context);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(context.instruments().empty());

  ASSERT_TRUE(context.SetConfigFromAssignment("pass.max_pass_index=1").ok());
  ASSERT_TRUE(context.SetConfigFromAssignment("pass.verify_each=true").ok());
  ASSERT_TRUE(context.SetConfigFromAssignment("pass.span_coverage=report").ok());
  absl::StatusOr<ConfiguredInstruments> added = AddConfiguredInstruments(context);
  ASSERT_TRUE(added.ok());
  EXPECT_NE(added->bisect, nullptr);
  EXPECT_NE(added->verifier, nullptr);
  EXPECT_NE(added->span_coverage, nullptr);
  EXPECT_EQ(context.instruments().size(), 3u);

  PassContext bad;
  ASSERT_TRUE(bad.SetConfigFromAssignment("pass.span_coverage=loud").ok());
  EXPECT_THAT(std::string(AddConfiguredInstruments(bad).status().message()),
              HasSubstr("expected off, report or strict"));

  PassContext types_without_inference;
  ASSERT_TRUE(types_without_inference.SetConfigFromAssignment("pass.verify_each=true").ok());
  ASSERT_TRUE(types_without_inference.SetConfigFromAssignment("pass.verify_types=true").ok());
  EXPECT_THAT(std::string(AddConfiguredInstruments(types_without_inference).status().message()),
              HasSubstr("'pass.verify_types' needs a type inference"));
  EXPECT_TRUE(
      AddConfiguredInstruments(types_without_inference, nullptr, InferModuleTypes).ok());
}

}  // namespace
}  // namespace kiln::testing
