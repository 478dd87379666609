// FoldConstant beyond the lit test: tuple results, the size limit with its
// diagnostic, fused functions left alone, and integer semantics (values are
// computed by hand).
#include <gtest/gtest.h>

#include "engine/pass/pass_context.h"
#include "engine/transform/fold_constant.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln::transform {
namespace {

using kiln::testing::ParseTyped;
using kiln::testing::RunPass;

// The constant a function returns (its body must have folded to one).
const ConstantNode* ResultConstant(const IRModule& module) {
  const auto* main = module->Lookup("main").as<FunctionNode>();
  return main == nullptr ? nullptr : main->body.as<ConstantNode>();
}

TEST(FoldConstantTest, TupleResultsFoldFieldByField) {
  // cumsum of six ones is [1, 2, 3, 4, 5, 6]; split into 3 gives
  // ([1, 2], [3, 4], [5, 6]); field 1 is [3, 4].
  IRModule module = ParseTyped(R"(
def @main() {
  %0 = broadcast_to(1f, shape=(6)) /* si=ones */;
  %1 = cumsum(%0, axis=0) /* si=range */;
  %2 = split(%1, indices_or_sections=3, axis=0) /* si=split */;
  %2.1
})");
  ASSERT_TRUE(module);
  IRModule folded = RunPass(FoldConstant(), module);
  ASSERT_TRUE(folded);
  const ConstantNode* constant = ResultConstant(folded);
  ASSERT_NE(constant, nullptr) << PrintModule(folded);
  ASSERT_EQ(constant->data->NumElements(), 2);
  EXPECT_EQ(constant->data->data<float>()[0], 3.0f);
  EXPECT_EQ(constant->data->data<float>()[1], 4.0f);
  EXPECT_EQ(SpanSourceNames(constant->span), std::vector<std::string>{"split"});
}

TEST(FoldConstantTest, IntegerDivisionTruncatesAsOnnxDoes) {
  // -7 / 2 = -3 (truncating), 7 / -2 = -3.
  IRModule module = ParseTyped(R"(
def @main() {
  %0 = divide(-7, 2) /* si=a */;
  %1 = divide(7, -2) /* si=b */;
  add(%0, %1) /* si=sum */
})");
  ASSERT_TRUE(module);
  IRModule folded = RunPass(FoldConstant(), module);
  const ConstantNode* constant = ResultConstant(folded);
  ASSERT_NE(constant, nullptr) << PrintModule(folded);
  EXPECT_EQ(constant->data->data<int32_t>()[0], -6);
}

TEST(FoldConstantTest, OversizedResultsStayWithANote) {
  IRModule module = ParseTyped(R"(
def @main() {
  broadcast_to(1f, shape=(4096, 2048)) /* si=big */
})");
  ASSERT_TRUE(module);
  PassContext context;
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_TRUE(folded->same_as(module));
  ASSERT_EQ(context.diagnostics().size(), 1u);
  const PassDiagnostic& note = context.diagnostics()[0];
  EXPECT_EQ(note.pass, "FoldConstant");
  EXPECT_NE(note.message.find("8388608 elements"), std::string::npos) << note.message;
  EXPECT_EQ(SpanSourceNames(note.span), std::vector<std::string>{"big"});
}

TEST(FoldConstantTest, FusedFunctionsAreLeftAlone) {
  IRModule module = ParseTyped(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p0: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
    %1 = add(1f, 2f);
    multiply(%p0, %1)
  };
  %0(%x)
})");
  ASSERT_TRUE(module);
  IRModule folded = RunPass(FoldConstant(), module);
  EXPECT_TRUE(folded.same_as(module));
}

}  // namespace
}  // namespace kiln::transform
