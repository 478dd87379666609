// DeadCodeElimination: unused let bindings go, chains of them in one run.
// What stays (used bindings, graph form) is in
// tests/lit/transform/dead_code_elimination.kir.
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

}  // namespace
}  // namespace kiln
