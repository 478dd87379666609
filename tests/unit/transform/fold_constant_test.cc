// FoldConstant beyond the lit test: tuple results, integer semantics (values
// are computed by hand), the compile budget and cancellation. The size limit
// with its note and fused functions left alone are lit cases
// (tests/lit/transform/fold_constant.kir).
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

TEST(FoldConstantTest, ShapeOfAHugeParameterFoldsFromItsTypeAlone) {
  // 8 GiB of parameter: its shape and size fold without its data being made
  // (FoldConstant once zero-filled it to run shape_of on it).
  IRModule module = ParseTyped(R"(
def @main(%x: Tensor[(2, 1000000000), float32]) {
  %0 = shape_of(%x) /* si=shape */;
  %1 = size(%x) /* si=count */;
  (%0, %1)
})");
  ASSERT_TRUE(module);
  PassContext context;
  context.set_budget(std::make_shared<CompileBudget>(CompileLimits{int64_t{1} << 20, 1000}));
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_TRUE(folded.ok()) << folded.status();
  const auto* tuple = (*folded)->Lookup("main").as<FunctionNode>()->body.as<TupleNode>();
  ASSERT_NE(tuple, nullptr) << PrintModule(*folded);
  const auto* shape = tuple->elements[0].as<ConstantNode>();
  const auto* count = tuple->elements[1].as<ConstantNode>();
  ASSERT_NE(shape, nullptr) << PrintModule(*folded);
  ASSERT_NE(count, nullptr) << PrintModule(*folded);
  ASSERT_EQ(shape->data->NumElements(), 2);
  EXPECT_EQ(shape->data->data<int64_t>()[0], 2);
  EXPECT_EQ(shape->data->data<int64_t>()[1], 1000000000);
  EXPECT_EQ(count->data->data<int64_t>()[0], 2000000000);
  EXPECT_EQ(SpanSourceNames(shape->span), std::vector<std::string>{"shape"});
}

TEST(FoldConstantTest, ResultsAreChargedToTheCompileBudget) {
  // Two 4 MiB results against a 6 MiB budget: the second is refused,
  // naming its layer.
  IRModule module = ParseTyped(R"(
def @main() {
  %0 = broadcast_to(1f, shape=(1024, 1024)) /* si=first */;
  %1 = broadcast_to(2f, shape=(1024, 1024)) /* si=second */;
  (%0, %1)
})");
  ASSERT_TRUE(module);
  PassContext context;
  context.set_budget(std::make_shared<CompileBudget>(CompileLimits{int64_t{6} << 20, 1 << 30}));
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(folded.status().message().find("layer 'second': folding broadcast_to needs 4194304 "
                                           "bytes"),
            std::string::npos)
      << folded.status();
}

TEST(FoldConstantTest, TheCompilesStepBudgetSpansEveryFold) {
  // Each fold of 4096 elements takes thousands of interpreter steps; a
  // budget of 10,000 for the whole compile runs out on the way.
  IRModule module = ParseTyped(R"(
def @main() {
  %0 = broadcast_to(1f, shape=(4096)) /* si=a */;
  %1 = add(%0, 1f) /* si=b */;
  %2 = add(%1, 1f) /* si=c */;
  add(%2, 1f) /* si=d */
})");
  ASSERT_TRUE(module);
  PassContext context;
  context.set_budget(std::make_shared<CompileBudget>(CompileLimits{int64_t{1} << 30, 10000}));
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(folded.status().message().find("budget of 10000 interpreter steps"), std::string::npos)
      << folded.status();
}

TEST(FoldConstantTest, ACancelledCompileStopsFolding) {
  IRModule module = ParseTyped(R"(
def @main() {
  %0 = broadcast_to(1f, shape=(4)) /* si=a */;
  add(%0, 1f) /* si=b */
})");
  ASSERT_TRUE(module);
  PassContext context;
  context.set_budget(std::make_shared<CompileBudget>(CompileLimits{}, [] { return true; }));
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace kiln::transform
