// FoldFloatBinary (engine/transform/fold_float_binary.h): float32 arithmetic on two constants
// with NumPy broadcasting, checked against values computed by hand, and the cases it leaves to
// the interpreter. FoldConstant's use of it: a batch norm's per-channel scale multiplied into a
// convolution weight folds to the hand-computed products.
#include "engine/transform/fold_float_binary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/pass/pass_context.h"
#include "engine/support/compile_budget.h"
#include "engine/transform/fold_constant.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln::transform {
namespace {

TensorData Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return MakeTensorData(DataType::kFloat32, std::move(shape), std::move(bytes));
}

std::vector<float> Values(const TensorData& data) {
  const float* p = data->data<float>();
  return std::vector<float>(p, p + data->NumElements());
}

TEST(FoldFloatBinaryTest, BroadcastsBothOperandsAsNumPyDoes) {
  // (2, 1, 3) * (2, 1): out[i][j][k] = a[i][0][k] * b[j][0].
  TensorData a = Floats({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  TensorData b = Floats({2, 1}, {10, -1});
  std::optional<TensorData> product = FoldFloatBinary("multiply", a, b, {2, 2, 3});
  ASSERT_TRUE(product.has_value());
  EXPECT_EQ((*product)->shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(Values(*product), (std::vector<float>{10, 20, 30, -1, -2, -3, 40, 50, 60, -4, -5, -6}));
}

TEST(FoldFloatBinaryTest, EachOperationAndAScalar) {
  TensorData a = Floats({4}, {1, -2, 0.5f, 3});
  TensorData two = Floats({}, {2});
  EXPECT_EQ(Values(*FoldFloatBinary("add", a, two, {4})), (std::vector<float>{3, 0, 2.5f, 5}));
  EXPECT_EQ(Values(*FoldFloatBinary("subtract", two, a, {4})),
            (std::vector<float>{1, 4, 1.5f, -1}));
  EXPECT_EQ(Values(*FoldFloatBinary("divide", a, two, {4})),
            (std::vector<float>{0.5f, -1, 0.25f, 1.5f}));
  // Division by zero is IEEE's, as in the interpreter and native code.
  std::vector<float> by_zero = Values(*FoldFloatBinary("divide", a, Floats({}, {0}), {4}));
  EXPECT_EQ(by_zero[0], INFINITY);
  EXPECT_EQ(by_zero[1], -INFINITY);
  EXPECT_EQ(Values(*FoldFloatBinary("multiply", two, two, {})), (std::vector<float>{4}));
}

TEST(FoldFloatBinaryTest, LeavesOtherOpsTypesAndShapesToTheInterpreter) {
  TensorData a = Floats({3}, {1, 2, 3});
  EXPECT_FALSE(FoldFloatBinary("maximum", a, a, {3}).has_value());
  EXPECT_FALSE(FoldFloatBinary("add", a, Floats({2}, {1, 2}), {3}).has_value());  // no broadcast
  std::string bytes(3 * sizeof(int32_t), '\0');
  TensorData ints = MakeTensorData(DataType::kInt32, {3}, bytes);
  EXPECT_FALSE(FoldFloatBinary("add", a, ints, {3}).has_value());
}

TEST(FoldFloatBinaryTest, FoldConstantMultipliesAScaleIntoAWeight) {
  // weight (2, 1, 1, 2) = [1, 2, 3, 4]; per-output-channel scale (2, 1, 1, 1) = [1, 2] - 3 =
  // [-2, -1]: channel 0 gives [-2, -4], channel 1 [-3, -4].
  IRModule module = kiln::testing::ParseTyped(R"(
def @main() {
  %0 = broadcast_to(1f, shape=(4)) /* si=ones */;
  %1 = cumsum(%0, axis=0) /* si=range */;
  %2 = reshape(%1, newshape=[2, 1, 1, 2]) /* si=weight */;
  %3 = broadcast_to(1f, shape=(2)) /* si=ones2 */;
  %4 = cumsum(%3, axis=0) /* si=range2 */;
  %5 = subtract(%4, 3f) /* si=shift */;
  %6 = reshape(%5, newshape=[2, 1, 1, 1]) /* si=scale */;
  multiply(%2, %6) /* si=bn */
})");
  ASSERT_TRUE(module);
  IRModule folded = kiln::testing::RunPass(FoldConstant(), module);
  ASSERT_TRUE(folded);
  const auto* main = folded->Lookup("main").as<FunctionNode>();
  ASSERT_NE(main, nullptr);
  const auto* constant = main->body.as<ConstantNode>();
  ASSERT_NE(constant, nullptr) << PrintModule(folded);
  EXPECT_EQ(constant->data->shape, (std::vector<int64_t>{2, 1, 1, 2}));
  EXPECT_EQ(Values(constant->data), (std::vector<float>{-2, -4, -3, -4}));
  EXPECT_EQ(SpanSourceNames(constant->span), std::vector<std::string>{"bn"});
}

// FoldConstant takes the direct path for float32 arithmetic: a (64, 1) x (1, 64) product of
// two constants, out[i][j] = i * (j - 10), costs the compile's budget one step per element
// (4096), where the interpreter would count its loops' iterations and expression nodes.
TEST(FoldFloatBinaryTest, FoldConstantComputesFloatArithmeticWithoutTheInterpreter) {
  std::string rows, columns;
  for (int k = 0; k < 64; ++k) {
    float row = static_cast<float>(k), column = static_cast<float>(k - 10);
    unsigned char bytes[4];
    std::memcpy(bytes, &row, 4);
    for (unsigned char b : bytes) absl::StrAppend(&rows, absl::Hex(b, absl::kZeroPad2));
    std::memcpy(bytes, &column, 4);
    for (unsigned char b : bytes) absl::StrAppend(&columns, absl::Hex(b, absl::kZeroPad2));
  }
  IRModule module = kiln::testing::ParseTyped(absl::StrCat(R"(def @main() {
  multiply(meta[Constant][0] /* si=a */, meta[Constant][1] /* si=b */) /* si=product */
}

#[metadata]
meta[Constant][0] = Tensor[(64, 1), float32] 0x)",
                                                           rows, R"(;
meta[Constant][1] = Tensor[(1, 64), float32] 0x)",
                                                           columns, ";\n"));
  ASSERT_TRUE(module);
  PassContext context;
  auto budget = std::make_shared<CompileBudget>(CompileLimits{int64_t{1} << 30, 1 << 30});
  context.set_budget(budget);
  PassContext::Scope scope(context);
  absl::StatusOr<IRModule> folded = (*FoldConstant())(module, context);
  ASSERT_TRUE(folded.ok()) << folded.status();
  const auto* constant = (*folded)->Lookup("main").as<FunctionNode>()->body.as<ConstantNode>();
  ASSERT_NE(constant, nullptr) << PrintModule(*folded);
  ASSERT_EQ(constant->data->shape, (std::vector<int64_t>{64, 64}));
  std::vector<float> values = Values(constant->data);
  EXPECT_EQ(values[0 * 64 + 0], 0.0f);
  EXPECT_EQ(values[3 * 64 + 2], -24.0f);
  EXPECT_EQ(values[63 * 64 + 63], 63.0f * 53.0f);
  EXPECT_EQ(budget->steps(), 64 * 64);
}

}  // namespace
}  // namespace kiln::transform
