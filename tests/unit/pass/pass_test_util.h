// Shared pieces of the pass-infrastructure tests: a small typed module, a
// registry of trivial passes (the real ones live in engine/transform/ and are
// tested there), and Recorder, an instrument that logs every callback and can
// be told to fail or throw in any of them.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/op/type_inference.h"
#include "engine/parser/parser.h"
#include "engine/pass/instrument.h"
#include "engine/pass/pass.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_registry.h"

namespace kiln::testing {

inline constexpr char kSmallModule[] =
    R"(def @main(%x: Tensor[(2), float32] /* si=x */) -> Tensor[(2), float32] {
  %0 = nn.relu(%x) /* si=relu */;
  add(%0, 1f) /* si=add */
}
)";

inline IRModule Parse(std::string_view text) {
  absl::StatusOr<IRModule> parsed = ParseModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : nullptr;
}

inline IRModule SmallModule() { return Parse(kSmallModule); }

// Module passes that return the input unchanged.
inline Pass NoOpPass(std::string name, int opt_level = 0, std::vector<std::string> required = {}) {
  return CreateModulePass(
      [](const IRModule& module, PassContext&) { return module; },
      PassInfo{std::move(name), opt_level, std::move(required), PassStage::kGraph});
}

// A function pass wrapping each function body in nn.relu (so it changes the
// module), the new call spanned `span` (or without a span when empty).
inline Pass WrapReluPass(std::string name, std::string span = "wrapped", int opt_level = 0,
                         std::vector<std::string> required = {}) {
  return CreateFunctionPass(
      [span](const Function& function, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        Expr body = MakeCall(GetOp("nn.relu"), {function->body}, nullptr,
                             span.empty() ? Span() : MakeSpan(span));
        return MakeFunction(function->params, body, function->ret_type, function->attrs,
                            function->span, function->virtual_device);
      },
      PassInfo{std::move(name), opt_level, std::move(required), PassStage::kGraph});
}

inline Pass FailingPass(std::string name, int opt_level = 0) {
  return CreateModulePass(
      [](const IRModule&, PassContext&) -> absl::StatusOr<IRModule> {
        return absl::InvalidArgumentError("something is wrong");
      },
      PassInfo{std::move(name), opt_level, {}, PassStage::kGraph});
}

inline Pass ThrowingPass(std::string name) {
  return CreateModulePass(
      [](const IRModule&, PassContext&) -> absl::StatusOr<IRModule> {
        throw std::runtime_error("boom");
      },
      PassInfo{std::move(name), 0, {}, PassStage::kGraph});
}

// Real type inference, counting its runs.
inline Pass CountingInferType(std::shared_ptr<std::atomic<int>> runs) {
  return CreateModulePass(
      [runs](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        ++*runs;
        return InferType(module);
      },
      PassInfo{"InferType", 0, {}, PassStage::kGraph});
}

// A registry of the trivial passes above, for pipelines and required passes.
struct TestRegistry {
  TestRegistry() {
    auto must = [](absl::Status status) { ASSERT_TRUE(status.ok()) << status; };
    must(registry.Register(PassInfo{"InferType", 0, {}, PassStage::kGraph}, "types",
                           [runs = infer_type_runs] { return CountingInferType(runs); }));
    must(registry.Register(PassInfo{"NoOp", 0, {}, PassStage::kGraph}, "does nothing",
                           [] { return NoOpPass("NoOp"); }));
    must(registry.Register(PassInfo{"Wrap", 1, {}, PassStage::kGraph}, "wraps bodies in relu",
                           [] { return WrapReluPass("Wrap", "wrapped", 1); }));
    must(registry.Register(PassInfo{"NeedsTypes", 2, {"InferType"}, PassStage::kGraph},
                           "requires InferType",
                           [] { return NoOpPass("NeedsTypes", 2, {"InferType"}); }));
    must(registry.Register(PassInfo{"WrapNeedsTypes", 0, {"InferType"}, PassStage::kGraph},
                           "wraps, requires InferType", [] {
                             return WrapReluPass("WrapNeedsTypes", "wrapped", 0, {"InferType"});
                           }));
    must(registry.Register(PassInfo{"Fail", 0, {}, PassStage::kGraph}, "always fails",
                           [] { return FailingPass("Fail"); }));
    must(registry.Register(PassInfo{"CycleA", 0, {"CycleB"}, PassStage::kGraph}, "cycle",
                           [] { return NoOpPass("CycleA", 0, {"CycleB"}); }));
    must(registry.Register(PassInfo{"CycleB", 0, {"CycleA"}, PassStage::kGraph}, "cycle",
                           [] { return NoOpPass("CycleB", 0, {"CycleA"}); }));
    must(registry.Register(PassInfo{"NeedsMissing", 0, {"Missing"}, PassStage::kGraph}, "",
                           [] { return NoOpPass("NeedsMissing", 0, {"Missing"}); }));
    PassRegistration fuse;
    fuse.info = PassInfo{"Fuse", 0, {}, PassStage::kGraph};
    fuse.summary = "options of every type";
    fuse.options = {
        {"fuse_opt_level", ConfigType::kInt, int64_t{2}, "how far to fuse"},
        {"aggressive", ConfigType::kBool, false, "fuse more"},
        {"ratio", ConfigType::kFloat, 0.5, "a float"},
        {"label", ConfigType::kString, std::string("x"), "a string"},
    };
    fuse.factory = [](const PassOptions& options) -> absl::StatusOr<Pass> {
      if (options.Get<int64_t>("fuse_opt_level") > 3) {
        return absl::InvalidArgumentError("fuse_opt_level must be at most 3");
      }
      return NoOpPass("Fuse");
    };
    must(registry.Register(std::move(fuse)));
  }

  std::shared_ptr<std::atomic<int>> infer_type_runs = std::make_shared<std::atomic<int>>(0);
  PassRegistry registry;
};

// Logs "<name>.<Hook>[:<pass>]" for every callback into a shared log, and
// fails (or throws) in the hooks named in `fail` ("Enter", "Exit",
// "ShouldRun:P", "Before:P", "After:P", "AfterFailed:P").
class Recorder final : public PassInstrument {
 public:
  Recorder(std::string name, std::vector<std::string>* log) : PassInstrument(name), log_(log) {}

  std::set<std::string> fail;
  bool throw_instead = false;
  std::set<std::string> skip;  // ShouldRun answers false for these passes

  absl::Status EnterPassContext() override { return Hook("Enter", ""); }
  absl::Status ExitPassContext() override { return Hook("Exit", ""); }
  absl::StatusOr<bool> ShouldRun(const IRModule&, const PassInvocation& pass) override {
    absl::Status status = Hook("ShouldRun", pass.name());
    if (!status.ok()) return status;
    return skip.count(pass.name()) == 0;
  }
  absl::Status RunBeforePass(const IRModule&, const PassInvocation& pass) override {
    return Hook("Before", pass.name());
  }
  absl::Status RunAfterPass(const IRModule&, const PassInvocation& pass) override {
    return Hook("After", pass.name());
  }
  absl::Status RunAfterPassFailed(const IRModule&, const PassInvocation& pass,
                                  const absl::Status&) override {
    return Hook("AfterFailed", pass.name());
  }

 private:
  absl::Status Hook(const std::string& hook, const std::string& pass) {
    std::string key = pass.empty() ? hook : absl::StrCat(hook, ":", pass);
    log_->push_back(absl::StrCat(name(), ".", key));
    if (fail.count(key) == 0) return absl::OkStatus();
    if (throw_instead) throw std::runtime_error(absl::StrCat(name(), " threw in ", key));
    return absl::FailedPreconditionError(absl::StrCat(name(), " failed in ", key));
  }

  std::vector<std::string>* log_;
};

// How many log entries are exactly `entry`.
inline int Count(const std::vector<std::string>& log, std::string_view entry) {
  int n = 0;
  for (const std::string& e : log) n += e == entry;
  return n;
}

// How many log entries start with `prefix`.
inline int CountPrefix(const std::vector<std::string>& log, std::string_view prefix) {
  int n = 0;
  for (const std::string& e : log) n += e.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace kiln::testing
