// InferType, ToGraphNormalForm, Inline and RemoveUnusedFunctions on small
// modules; and the pass table: every builtin pass is registered once with
// the opt level and required passes its factory declares.
#include <gtest/gtest.h>

#include "engine/pass/pass_registry.h"
#include "engine/transform/builtin_passes.h"
#include "engine/transform/infer_type.h"
#include "engine/transform/inline.h"
#include "engine/transform/remove_unused_functions.h"
#include "engine/transform/to_a_normal_form.h"
#include "engine/transform/to_graph_normal_form.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::AllCallsHaveSpans;
using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

TEST(InferTypePassTest, TypesAModuleAndIsANoOpOnATypedOne) {
  absl::StatusOr<IRModule> parsed = ParseModule(R"(
def @main(%x: Tensor[(4), float32]) {
  exp(%x) /* si=e */
}
)");
  ASSERT_TRUE(parsed.ok());
  IRModule typed = RunPass(transform::InferType(), *parsed);
  ASSERT_TRUE(typed);
  EXPECT_TRUE(typed->Lookup("main").as<FunctionNode>()->body->checked_type);
  EXPECT_TRUE(RunPass(transform::InferType(), typed).same_as(typed));
}

TEST(ToGraphNormalFormTest, LetsBecomeSharedNodes) {
  IRModule out = RunPass(transform::ToGraphNormalForm(), ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  let %a = exp(%x) /* si=e */;
  %0 = {
    let %b = negative(%a) /* si=n */;
    add(%b, %a) /* si=inner */
  };
  let %c = multiply(%0, %0) /* si=m */;
  %c
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=e */;
  %1 = negative(%0) /* si=n */;
  %2 = add(%1, %0) /* si=inner */;
  multiply(%2, %2) /* si=m */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(ToANormalFormTest, ValuesAreBoundInTheInnermostScopeOfAllTheirUses) {
  IRModule out = RunPass(transform::ToANormalForm(), ParseTyped(R"(
def @main(%x: Tensor[(4), float32], %c: Tensor[(), bool]) {
  %0 = exp(%x) /* si=e */;
  %1 = if (%c) {
    %2 = negative(%0) /* si=n */;
    add(%2, %0) /* si=a */
  } else {
    %0
  } /* si=branch */;
  multiply(%1, %1) /* si=m */
}
)"));
  // exp is used in both branches: bound before the if; negative and add only
  // in the then-branch: bound there. Each new let carries its value's span.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32], %c: Tensor[(), bool]) {
  let %v0 = exp(%x) /* si=e */ /* let_si=e */;
  %0 = if (%c) {
    let %v2 = negative(%v0) /* si=n */ /* let_si=n */;
    let %v3 = add(%v2, %v0) /* si=a */ /* let_si=a */;
    %v3
  } else {
    %v0
  } /* si=branch */;
  let %v1 = %0 /* let_si=branch */;
  let %v4 = multiply(%v1, %v1) /* si=m */ /* let_si=m */;
  %v4
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
  // Already in A-normal form: the same again.
  EXPECT_TRUE(EqualWithSpans(RunPass(transform::ToANormalForm(), out), out));
}

TEST(ToANormalFormTest, ExistingLetsKeepTheirVariablesAndSpans) {
  IRModule out = RunPass(transform::ToANormalForm(), ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  let %a = add(exp(%x) /* si=e */, 1f) /* si=add */ /* let_si=bind_a */;
  negative(%a) /* si=n */
}
)"));
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  let %v0 = exp(%x) /* si=e */ /* let_si=e */;
  let %a = add(%v0, 1f) /* si=add */ /* let_si=bind_a */;
  let %v1 = negative(%a) /* si=n */ /* let_si=n */;
  %v1
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(InlineTest, CallsOfMarkedFunctionsAreExpandedAndTheFunctionsDropped) {
  IRModule out = RunPass(transform::Inline(), ParseTyped(R"(
def @f(%p: Tensor[(4), float32], Inline=1) -> Tensor[(4), float32] {
  let %t = exp(%p) /* si=f_exp */;
  add(%t, 1f)
}

def @g(%q: Tensor[(4), float32]) -> Tensor[(4), float32] {
  negative(%q) /* si=g_neg */
}

def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %0 = @f(%x) /* si=call1 */;
  %1 = @f(%0) /* si=call2 */;
  @g(%1) /* si=call_g */
}
)"));
  // Each copy binds its own %t; every node of a copy carries its own span,
  // then the call's (the add, its constant and the let had none: the call's).
  IRModule expected = ParseTyped(R"(
def @g(%q: Tensor[(4), float32]) -> Tensor[(4), float32] {
  negative(%q) /* si=g_neg */
}

def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %0 = {
    let %t = exp(%x) /* si=[f_exp, call1] */ /* let_si=call1 */;
    add(%t, 1f /* si=call1 */) /* si=call1 */
  };
  %1 = {
    let %t1 = exp(%0) /* si=[f_exp, call2] */ /* let_si=call2 */;
    add(%t1, 1f /* si=call2 */) /* si=call2 */
  };
  @g(%1) /* si=call_g */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
  EXPECT_TRUE(AllCallsHaveSpans(out));
}

TEST(RemoveUnusedFunctionsTest, KeepsWhatMainReaches) {
  IRModule out = RunPass(transform::RemoveUnusedFunctions(), ParseTyped(R"(
def @leaf(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {
  exp(%a) /* si=leaf */
}

def @unused(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @leaf(%a) /* si=unused_call */
}

def @mid(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @leaf(%a) /* si=mid_call */
}

def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @mid(%x) /* si=main_call */
}
)"));
  IRModule expected = ParseTyped(R"(
def @leaf(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {
  exp(%a) /* si=leaf */
}

def @mid(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @leaf(%a) /* si=mid_call */
}

def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @mid(%x) /* si=main_call */
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(BuiltinPassesTest, EveryPassIsRegisteredWithItsFactoryInfo) {
  PassRegistry registry;
  RegisterBuiltinPasses(registry);
  struct Expected {
    const char* name;
    int opt_level;
    std::vector<std::string> required;
  };
  const Expected expected[] = {
      {"DeadCodeElimination", 1, {}},
      {"EliminateCommonSubexpr", 3, {"InferType"}},
      {"InferType", 0, {}},
      {"Inline", 1, {}},
      {"RemoveUnusedFunctions", 1, {}},
      {"SimplifyExpr", 2, {"InferType"}},
      {"SimplifyInference", 0, {"InferType"}},
      {"ToANormalForm", 0, {}},
      {"ToGraphNormalForm", 0, {}},
  };
  for (const Expected& e : expected) {
    const PassRegistration* entry = registry.Find(e.name);
    ASSERT_NE(entry, nullptr) << e.name;
    EXPECT_EQ(entry->info.opt_level, e.opt_level) << e.name;
    EXPECT_EQ(entry->info.required, e.required) << e.name;
    EXPECT_FALSE(entry->summary.empty()) << e.name;
    absl::StatusOr<Pass> pass = registry.Create(e.name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    EXPECT_EQ((*pass)->info().name, e.name);
  }
}

}  // namespace
}  // namespace kiln
