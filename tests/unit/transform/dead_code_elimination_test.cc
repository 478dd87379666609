// DeadCodeElimination: unused let bindings go, chains of them in one run;
// bindings with effects and used bindings stay.
#include "engine/transform/dead_code_elimination.h"

#include <gtest/gtest.h>

#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::EqualWithSpans;
using testing::ParseTyped;
using testing::RunPass;

IRModule Dce(std::string_view text) {
  return RunPass(transform::DeadCodeElimination(), ParseTyped(text));
}

TEST(DeadCodeEliminationTest, UnusedBindingsAndWhatOnlyTheyUseAreRemoved) {
  IRModule out = Dce(R"(
def @main(%x: Tensor[(4), float32]) {
  let %a = exp(%x) /* si=a */;
  let %b = negative(%a) /* si=b */;
  let %c = add(%b, %b) /* si=c */;
  let %d = sqrt(%x) /* si=d */;
  let %e = multiply(%d, %d) /* si=e */;
  %e
}
)");
  // %c is unused; then %b was used only by %c, and %a only by %b.
  IRModule expected = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  let %d = sqrt(%x) /* si=d */;
  let %e = multiply(%d, %d) /* si=e */;
  %e
}
)");
  EXPECT_TRUE(EqualWithSpans(out, expected));
}

TEST(DeadCodeEliminationTest, BindingsUsedInNestedScopesStay) {
  IRModule in = ParseTyped(R"(
def @main(%x: Tensor[(4), float32], %c: Tensor[(), bool]) {
  let %a = exp(%x) /* si=a */;
  let %f = fn (%p: Tensor[(4), float32]) {
    add(%p, %a) /* si=inner */
  };
  %0 = if (%c) {
    %f(%x) /* si=call */
  } else {
    %x
  };
  %0
}
)");
  EXPECT_TRUE(RunPass(transform::DeadCodeElimination(), in).same_as(in));
}

TEST(DeadCodeEliminationTest, GraphFormHasNothingToRemove) {
  IRModule in = ParseTyped(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x) /* si=e */;
  add(%0, %0) /* si=a */
}
)");
  EXPECT_TRUE(RunPass(transform::DeadCodeElimination(), in).same_as(in));
}

}  // namespace
}  // namespace kiln
