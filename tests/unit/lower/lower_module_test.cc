// LowerModule end to end: small graph modules through the -O3 (or -O0)
// pipeline, lowered, run by the loop-IR interpreter and compared with results
// worked out by hand; the lowered main's structure (kernels, views, copies,
// constants, workspace) and the spans on every statement.
#include "engine/lower/lower_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "engine/loop/functor.h"
#include "tests/unit/lower/lower_test_util.h"

namespace kiln {
namespace {

using testing::F32;
using testing::OptimizeAndLower;
using testing::RunFloat;

const loop::PrimFuncNode* Main(const lower::LoweredModule& lowered) {
  return lowered.module->Lookup("main").as<loop::PrimFuncNode>();
}

std::vector<std::string> KernelNames(const lower::LoweredModule& lowered) {
  std::vector<std::string> names;
  for (const lower::LoweredKernel& kernel : lowered.kernels) names.push_back(kernel.name);
  return names;
}

std::vector<const loop::CallKernelNode*> KernelCalls(const lower::LoweredModule& lowered) {
  std::vector<const loop::CallKernelNode*> calls;
  loop::PreOrderVisit(Main(lowered)->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kCallKernel) {
      calls.push_back(static_cast<const loop::CallKernelNode*>(node));
    }
  });
  return calls;
}

// Every statement of every function of `lowered` carries a span naming only
// sources of `source`.
::testing::AssertionResult StatementsHaveSourceSpans(const lower::LoweredModule& lowered,
                                                     const IRModule& source) {
  std::vector<std::string> names = source->SourceNames();
  std::set<std::string> known(names.begin(), names.end());
  int statements = 0;
  for (const auto& [global, func] : lowered.module->functions) {
    const auto* prim = func.as<loop::PrimFuncNode>();
    if (prim == nullptr) return ::testing::AssertionFailure() << global->name_hint << " is no PrimFunc";
    std::string problem;
    loop::PreOrderVisit(prim->body, [&](const Object* node) {
      if (!loop::StmtNode::IsKind(node->kind()) || !problem.empty()) return;
      ++statements;
      const Span& span = static_cast<const loop::StmtNode*>(node)->span;
      if (!span) problem = absl::StrCat("a ", ObjectKindName(node->kind()), " has no span");
      for (const std::string& name : SpanSourceNames(span)) {
        if (known.count(name) == 0) problem = absl::StrCat("unknown source name ", name);
      }
    });
    if (!problem.empty()) return ::testing::AssertionFailure() << global->name_hint << ": " << problem;
  }
  if (statements == 0) return ::testing::AssertionFailure() << "no statements";
  return ::testing::AssertionSuccess();
}

constexpr char kDenseBiasRelu[] = R"(
def @main(%x: Tensor[(2, 3), float32] /* si=input */, %w: Tensor[(2, 3), float32] /* si=fc.weight */, %b: Tensor[(2), float32] /* si=fc.bias */) {
  %0 = nn.dense(%x, %w) /* si=fc */;
  %1 = add(%0, %b) /* si=fc/bias */;
  nn.relu(%1) /* si=relu */
}
)";

TEST(LowerModuleTest, DenseBiasReluIsOneKernelWithTheRightResult) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kDenseBiasRelu);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelNames(*lowered), std::vector<std::string>{"fused_nn_dense_add_nn_relu"});
  EXPECT_EQ(lowered->kernels[0].call_indices, std::vector<int>{0});
  EXPECT_EQ(SpanSourceNames(lowered->kernels[0].span),
            (std::vector<std::string>{"fc", "fc/bias", "relu"}));
  EXPECT_EQ(lowered->num_inputs, 3);
  EXPECT_EQ(lowered->num_outputs, 1);
  EXPECT_EQ(lowered->workspace_bytes, 0);  // the kernel writes the output directly

  // out[i][j] = relu(sum_k x[i][k] * w[j][k] + b[j]):
  //   row 0: relu(2 - 3) = 0, relu(1 - 2 + 3 - 1) = 1
  //   row 1: relu(5 - 3) = 2, relu(4 - 5 + 6 - 1) = 4
  auto outputs = RunFloat(*lowered, {F32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                     F32({2, 3}, {0, 1, 0, 1, -1, 1}), F32({2}, {-3, -1})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0], (std::vector<double>{0, 1, 2, 4}));
}

constexpr char kConv[] = R"(
def @main(%x: Tensor[(1, 1, 4, 4), float32] /* si=input */, %w: Tensor[(1, 1, 2, 2), float32] /* si=conv1.weight */) {
  nn.conv2d(%x, %w) /* si=conv1 */
}
)";

TEST(LowerModuleTest, Conv2dWithA2x2Kernel) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kConv);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<double> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i;
  auto outputs = RunFloat(*lowered, {F32({1, 1, 4, 4}, x), F32({1, 1, 2, 2}, {1, 2, 3, 4})});
  // With v = x[i][j] = 4i + j: v + 2(v + 1) + 3(v + 4) + 4(v + 5) = 10v + 34.
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0], (std::vector<double>{34, 44, 54, 74, 84, 94, 114, 124, 134}));
}

TEST(LowerModuleTest, SoftmaxNormalizesEachRow) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(2, 3), float32] /* si=input */) {
  nn.softmax(%x) /* si=softmax */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // exp(log(1)), exp(log(2)), exp(log(5)) normalize to 1/8, 2/8, 5/8; a
  // constant row to thirds (and large values must not overflow).
  auto outputs = RunFloat(*lowered, {F32({2, 3}, {std::log(1.0), std::log(2.0), std::log(5.0),
                                                  100, 100, 100})});
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<double> expected = {0.125, 0.25, 0.625, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  ASSERT_EQ(outputs[0].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(outputs[0][i], expected[i], 1e-6) << i;
}

// Four dense+relu kernels in a chain: the value written by kernel 0 is dead
// once kernel 1 has run, so kernel 2's result can reuse its space.
constexpr char kChain[] = R"(
def @main(%x: Tensor[(1, 16), float32] /* si=input */, %w1: Tensor[(16, 16), float32], %w2: Tensor[(16, 16), float32], %w3: Tensor[(16, 16), float32], %w4: Tensor[(16, 16), float32]) {
  %0 = nn.dense(%x, %w1) /* si=fc1 */;
  %1 = nn.relu(%0) /* si=relu1 */;
  %2 = nn.dense(%1, %w2) /* si=fc2 */;
  %3 = nn.relu(%2) /* si=relu2 */;
  %4 = nn.dense(%3, %w3) /* si=fc3 */;
  %5 = nn.relu(%4) /* si=relu3 */;
  %6 = nn.dense(%5, %w4) /* si=fc4 */;
  nn.relu(%6) /* si=relu4 */
}
)";

TEST(LowerModuleTest, IntermediatesShareTheWorkspace) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kChain);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);  // the four dense+relu are one kernel
  // Three intermediates of 16 float32 (64 bytes) each; two are ever live at once.
  const int64_t intermediate_bytes = 3 * 16 * 4;
  EXPECT_LT(lowered->workspace_bytes, intermediate_bytes);
  EXPECT_EQ(lowered->workspace_bytes, 2 * 16 * 4);
  const AttrValue* attr = Main(*lowered)->attrs->Find("workspace_bytes");
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(attr->get<int64_t>(), lowered->workspace_bytes);

  // Each layer doubles (weights 2 * identity); relu keeps the positive part:
  // out = 16 * max(x, 0).
  std::vector<double> identity2(256, 0.0);
  for (int i = 0; i < 16; ++i) identity2[i * 16 + i] = 2;
  std::vector<double> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i - 8;
  auto outputs = RunFloat(*lowered, {F32({1, 16}, x), F32({16, 16}, identity2),
                                     F32({16, 16}, identity2), F32({16, 16}, identity2),
                                     F32({16, 16}, identity2)});
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<double> expected(16);
  for (int i = 0; i < 16; ++i) expected[i] = 16 * std::max(0, i - 8);
  EXPECT_EQ(outputs[0], expected);
}

// The four dense+relu functions are structurally equal (same shapes; the weights are
// arguments): one kernel, lowered once, serves the four calls, and its span names all eight
// layers, so profiles and provenance attribute it to each.
TEST(LowerModuleTest, IdenticalFusedFunctionsShareOneKernel) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kChain);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelNames(*lowered), std::vector<std::string>{"fused_nn_dense_nn_relu"});
  EXPECT_EQ(lowered->kernels[0].call_indices, (std::vector<int>{0, 1, 2, 3}));
  std::vector<std::string> layers = SpanSourceNames(lowered->kernels[0].span);
  std::sort(layers.begin(), layers.end());
  EXPECT_EQ(layers, (std::vector<std::string>{"fc1", "fc2", "fc3", "fc4", "relu1", "relu2",
                                              "relu3", "relu4"}));
  std::vector<const loop::CallKernelNode*> calls = KernelCalls(*lowered);
  ASSERT_EQ(calls.size(), 4u);
  for (const loop::CallKernelNode* call : calls) {
    EXPECT_EQ(call->callee->name_hint, "fused_nn_dense_nn_relu");
  }
  // Another shape is another kernel.
  absl::StatusOr<lower::LoweredModule> two = OptimizeAndLower(R"(
def @main(%x: Tensor[(1, 16), float32] /* si=input */, %w1: Tensor[(8, 16), float32], %w2: Tensor[(8, 8), float32]) {
  %0 = nn.dense(%x, %w1) /* si=fc1 */;
  %1 = nn.relu(%0) /* si=relu1 */;
  %2 = nn.dense(%1, %w2) /* si=fc2 */;
  nn.relu(%2) /* si=relu2 */
}
)");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(KernelNames(*two),
            (std::vector<std::string>{"fused_nn_dense_nn_relu", "fused_nn_dense_nn_relu_1"}));
}

// dense -> reshape -> softmax: the reshape between two kernels reinterprets
// the dense result in place.
constexpr char kDenseReshapeSoftmax[] = R"(
def @main(%x: Tensor[(2, 2), float32] /* si=input */, %w: Tensor[(2, 2), float32] /* si=fc.weight */) {
  %0 = nn.dense(%x, %w) /* si=fc */;
  %1 = reshape(%0, newshape=[1, 4]) /* si=flatten */;
  nn.softmax(%1) /* si=softmax */
}
)";

TEST(LowerModuleTest, AReshapeBetweenKernelsIsAViewNotAKernel) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kDenseReshapeSoftmax);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelNames(*lowered),
            (std::vector<std::string>{"fused_nn_dense", "fused_nn_softmax"}));
  // Call 1 is the reshape, which runs no kernel.
  EXPECT_EQ(lowered->kernels[0].call_indices, std::vector<int>{0});
  EXPECT_EQ(lowered->kernels[1].call_indices, std::vector<int>{2});
  std::vector<const loop::CallKernelNode*> calls = KernelCalls(*lowered);
  ASSERT_EQ(calls.size(), 2u);
  const loop::Buffer& dense_out = calls[0]->args[2];
  const loop::Buffer& softmax_in = calls[1]->args[0];
  EXPECT_TRUE(dense_out->data.same_as(softmax_in->data));
  EXPECT_EQ(dense_out->elem_offset, softmax_in->elem_offset);
  EXPECT_EQ(softmax_in->shape, (std::vector<int64_t>{1, 4}));

  // x @ w^T with w = identity is x; softmax of (0, log 3, 0, log 4) over one
  // row of 4: (1, 3, 1, 4) / 9.
  auto outputs = RunFloat(*lowered, {F32({2, 2}, {0, std::log(3.0), 0, std::log(4.0)}),
                                     F32({2, 2}, {1, 0, 0, 1})});
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<double> expected = {1.0 / 9, 3.0 / 9, 1.0 / 9, 4.0 / 9};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(outputs[0][i], expected[i], 1e-6);
}

TEST(LowerModuleTest, AReshapedResultIsWrittenStraightIntoTheOutput) {
  // At -O0 relu and reshape are separate calls; the relu kernel writes the
  // output parameter through a view of the relu's shape, and nothing is copied.
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(2, 2), float32] /* si=input */) {
  %0 = nn.relu(%x) /* si=relu */;
  reshape(%0, newshape=[4]) /* si=flatten */
}
)",
                                                                  /*opt_level=*/0);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->kernels.size(), 1u);
  EXPECT_EQ(lowered->workspace_bytes, 0);
  std::vector<const loop::CallKernelNode*> calls = KernelCalls(*lowered);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0]->args[1]->data.same_as(Main(*lowered)->params[1]));
  auto outputs = RunFloat(*lowered, {F32({2, 2}, {-1, 2, -3, 4})});
  EXPECT_EQ(outputs[0], (std::vector<double>{0, 2, 0, 4}));
}

TEST(LowerModuleTest, AResultThatIsAnInputOrRepeatsIsCopied) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(3), float32] /* si=input */) {
  %0 = nn.relu(%x) /* si=relu */;
  (%0, %0, %x)
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->num_outputs, 3);
  EXPECT_EQ(KernelNames(*lowered), (std::vector<std::string>{"fused_nn_relu", "copy"}));
  EXPECT_EQ(KernelCalls(*lowered).size(), 3u);  // relu, then two copies
  auto outputs = RunFloat(*lowered, {F32({3}, {-1, 0, 5})});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0], (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(outputs[1], (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(outputs[2], (std::vector<double>{-1, 0, 5}));
}

// if (%c) relu(exp(x)) else -exp(x), plus exp(x): exp is needed after the If too, so it is
// computed once before it; each branch's kernel writes the If's result in place.
constexpr std::string_view kBranchOnARunTimeCondition = R"(
def @main(%c: Tensor[(), bool] /* si=cond */, %x: Tensor[(4), float32] /* si=input */) {
  %0 = exp(%x) /* si=exp */;
  %1 = if (%c) {
    nn.relu(%0) /* si=relu */
  } else {
    negative(%0) /* si=neg */
  } /* si=branch */;
  add(%1, %0) /* si=add */
}
)";

// The names of the kernels `stmt` calls, in order.
std::vector<std::string> CalledKernels(const loop::Stmt& stmt) {
  std::vector<std::string> names;
  loop::PreOrderVisit(stmt, [&](const Object* node) {
    if (node->kind() == ObjectKind::kCallKernel) {
      names.push_back(static_cast<const loop::CallKernelNode*>(node)->callee->name_hint);
    }
  });
  return names;
}

TEST(LowerModuleTest, AnIfRunsOnlyTheTakenBranchsKernels) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kBranchOnARunTimeCondition);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<const loop::IfThenElseNode*> branches;
  loop::PreOrderVisit(Main(*lowered)->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kIfThenElse) {
      branches.push_back(static_cast<const loop::IfThenElseNode*>(node));
    }
  });
  ASSERT_EQ(branches.size(), 1u);
  EXPECT_EQ(CalledKernels(branches[0]->then_case), (std::vector<std::string>{"fused_nn_relu"}));
  EXPECT_EQ(CalledKernels(branches[0]->else_case), (std::vector<std::string>{"fused_negative"}));
  EXPECT_EQ(CalledKernels(Main(*lowered)->body),
            (std::vector<std::string>{"fused_exp", "fused_nn_relu", "fused_negative", "fused_add"}));
  // Both branches write the one result: the same storage, no copy.
  const loop::Buffer& then_out = KernelCalls(*lowered)[1]->args[1];
  const loop::Buffer& else_out = KernelCalls(*lowered)[2]->args[1];
  EXPECT_TRUE(then_out->data.same_as(else_out->data));
  EXPECT_EQ(then_out->elem_offset, else_out->elem_offset);
  // exp(x) and the If's result: two buffers of 4 floats, each in a 64-byte-aligned slot (the
  // branches' values share the result's).
  EXPECT_EQ(lowered->workspace_bytes, 2 * 64);
  EXPECT_TRUE(StatementsHaveSourceSpans(*lowered, *testing::Optimize(kBranchOnARunTimeCondition)));

  std::vector<double> x = {-1, 0, 0.5, 2};
  auto bool_scalar = [](bool value) {
    return loop::HostTensor::FromDoubles(DataType::kBool, {}, {value ? 1.0 : 0.0});
  };
  for (bool taken : {true, false}) {
    auto outputs = RunFloat(*lowered, {bool_scalar(taken), F32({4}, x)});
    ASSERT_EQ(outputs.size(), 1u);
    for (size_t i = 0; i < x.size(); ++i) {
      double e = std::exp(x[i]);
      EXPECT_NEAR(outputs[0][i], (taken ? e : -e) + e, 1e-6) << "taken " << taken << ", " << i;
    }
  }
}

// A branch giving a value from outside it (here the input) copies it into the result; a
// nested If lowers inside its branch.
TEST(LowerModuleTest, ABranchGivingAnOuterValueCopiesItAndIfsNest) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%c: Tensor[(), bool] /* si=c */, %d: Tensor[(), bool] /* si=d */,
          %x: Tensor[(2), float32] /* si=input */) {
  if (%c) {
    if (%d) {
      nn.relu(%x) /* si=relu */
    } else {
      negative(%x) /* si=neg */
    } /* si=inner */
  } else {
    %x
  } /* si=outer */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  int ifs = 0;
  loop::PreOrderVisit(Main(*lowered)->body, [&](const Object* node) {
    ifs += node->kind() == ObjectKind::kIfThenElse;
  });
  EXPECT_EQ(ifs, 2);
  auto flag = [](bool value) {
    return loop::HostTensor::FromDoubles(DataType::kBool, {}, {value ? 1.0 : 0.0});
  };
  std::vector<double> x = {-3, 4};
  EXPECT_EQ(RunFloat(*lowered, {flag(true), flag(true), F32({2}, x)})[0],
            (std::vector<double>{0, 4}));
  EXPECT_EQ(RunFloat(*lowered, {flag(true), flag(false), F32({2}, x)})[0],
            (std::vector<double>{3, -4}));
  EXPECT_EQ(RunFloat(*lowered, {flag(false), flag(true), F32({2}, x)})[0],
            (std::vector<double>{-3, 4}));
}

// Each If reads the last one's result in both branches: that result is computed once, before
// the If that reads it (lowered inside each branch, twenty Ifs would run 2^20 kernels).
TEST(LowerModuleTest, AChainOfIfsComputesEveryValueOnce) {
  std::string text =
      "def @main(%c: Tensor[(), bool] /* si=c */, %x: Tensor[(2), float32] /* si=x */) {\n";
  std::string last = "%x";
  for (int i = 0; i < 20; ++i) {
    text += absl::StrCat("  %", i, " = if (%c) { add(", last, ", ", last, ") /* si=double */ } ",
                         "else { negative(", last, ") /* si=neg */ } /* si=branch */;\n");
    last = absl::StrCat("%", i);
  }
  text += "  " + last + "\n}\n";
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(text);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelCalls(*lowered).size(), 40u);
  auto flag = [](bool value) {
    return loop::HostTensor::FromDoubles(DataType::kBool, {}, {value ? 1.0 : 0.0});
  };
  // Doubled 20 times, or negated 20 times.
  EXPECT_EQ(RunFloat(*lowered, {flag(true), F32({2}, {1, -2})})[0],
            (std::vector<double>{1 << 20, -(2 << 20)}));
  EXPECT_EQ(RunFloat(*lowered, {flag(false), F32({2}, {1, -2})})[0],
            (std::vector<double>{1, -2}));
}

TEST(LowerModuleTest, ConstantsBecomeParamsAfterTheOutputs) {
  // meta[Constant][0] is [[1, 2], [3, 4]] as little-endian float32.
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(2, 2), float32] /* si=input */) {
  add(%x, meta[Constant][0] /* si=bias */) /* si=add */
}

#[metadata]
meta[Constant][0] = Tensor[(2, 2), float32] 0x0000803f000000400000404000008040;
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->constants.size(), 1u);
  const loop::PrimFuncNode* main = Main(*lowered);
  ASSERT_EQ(main->params.size(), 3u);
  EXPECT_TRUE(main->param_buffer(2).same_as(lowered->constants[0].first));
  EXPECT_EQ(lowered->constants[0].second->shape, (std::vector<int64_t>{2, 2}));
  auto outputs = RunFloat(*lowered, {F32({2, 2}, {10, 20, 30, 40})});
  EXPECT_EQ(outputs[0], (std::vector<double>{11, 22, 33, 44}));
}

std::vector<const loop::WhileNode*> WhileLoops(const lower::LoweredModule& lowered) {
  std::vector<const loop::WhileNode*> loops;
  loop::PreOrderVisit(Main(lowered)->body, [&](const Object* node) {
    if (node->kind() == ObjectKind::kWhile) loops.push_back(static_cast<const loop::WhileNode*>(node));
  });
  return loops;
}

// acc = acc * softmax(w) while the step count stays below n: main's while loop runs the body's
// kernels; softmax(w) reads no state, so it runs once, before the loop; the state (condition,
// count, acc) is copied in before the loop and written back at the end of each iteration.
constexpr char kWhileLoop[] = R"(
def @main(%n: Tensor[(), int64] /* si=n */, %x: Tensor[(2), float32] /* si=input */,
          %w: Tensor[(2), float32] /* si=w */) {
  %0 = fn (%c: Tensor[(), bool] /* si=loop */, %i: Tensor[(), int64] /* si=loop */,
           %acc: Tensor[(2), float32] /* si=loop */, %limit: Tensor[(), int64] /* si=n */,
           %scale_in: Tensor[(2), float32] /* si=w */) {
    %1 = add(%i, 1i64 /* si=step */) /* si=step */;
    %2 = less(%1, %limit) /* si=test */;
    %3 = nn.softmax(%scale_in) /* si=scale */;
    %4 = multiply(%acc, %3) /* si=grow */;
    (%2, %1, %4) /* si=loop */
  } /* si=loop */;
  %5 = less(0i64 /* si=loop */, %n) /* si=loop */;
  %6 = while_loop(%0, %5, 0i64 /* si=loop */, %x, %n, %w) /* si=loop */;
  %6.2 /* si=loop */
}
)";

TEST(LowerModuleTest, AWhileLoopRunsItsBodysKernelsWhileItsConditionHolds) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kWhileLoop);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<const loop::WhileNode*> loops = WhileLoops(*lowered);
  ASSERT_EQ(loops.size(), 1u);
  std::vector<std::string> in_loop = CalledKernels(loops[0]->body);
  std::vector<std::string> all = CalledKernels(Main(*lowered)->body);
  auto count = [](const std::vector<std::string>& names, const std::string& part) {
    return std::count_if(names.begin(), names.end(),
                         [&](const std::string& name) { return name.find(part) != std::string::npos; });
  };
  EXPECT_EQ(count(in_loop, "softmax"), 0) << "softmax(w) reads no state: it runs before the loop";
  EXPECT_EQ(count(all, "softmax"), 1);
  EXPECT_EQ(count(in_loop, "multiply"), 1);
  EXPECT_EQ(count(in_loop, "copy"), 3) << "the three states written back";
  EXPECT_TRUE(StatementsHaveSourceSpans(*lowered, *testing::Optimize(kWhileLoop)));

  std::vector<double> x = {1, -2}, w = {0.5, -1};
  const double total = std::exp(w[0]) + std::exp(w[1]);
  const std::vector<double> scale = {std::exp(w[0]) / total, std::exp(w[1]) / total};
  for (int64_t n : {0, 1, 4}) {
    auto outputs = RunFloat(*lowered, {loop::HostTensor::FromDoubles(DataType::kInt64, {},
                                                                     {static_cast<double>(n)}),
                                       F32({2}, x), F32({2}, w)});
    ASSERT_EQ(outputs.size(), 1u);
    // n = 0 runs no iteration (0 < n fails); else n iterations (the count reaches n).
    for (size_t k = 0; k < x.size(); ++k) {
      double expected = x[k] * std::pow(scale[k], static_cast<double>(n));
      EXPECT_NEAR(outputs[0][k], expected, 1e-5 * std::abs(expected)) << "n " << n << ", element " << k;
    }
  }
}

// Row i of acc takes x * (i + 1) while i < n: acc is read only by the write_row that gives its
// next value, so each iteration writes the one row in place (a write_row kernel) instead of
// computing all rows and copying them back; a row outside acc (n above its 3 rows) is dropped.
constexpr char kRowWritingLoop[] = R"(
def @main(%n: Tensor[(), int64] /* si=n */, %x: Tensor[(2), float32] /* si=input */,
          %init: Tensor[(3, 2), float32] /* si=init */) {
  %0 = fn (%c: Tensor[(), bool] /* si=loop */, %i: Tensor[(), int64] /* si=loop */,
           %acc: Tensor[(3, 2), float32] /* si=loop */, %limit: Tensor[(), int64] /* si=n */,
           %v: Tensor[(2), float32] /* si=input */) {
    %1 = add(%i, 1i64 /* si=step */) /* si=step */;
    %2 = less(%1, %limit) /* si=test */;
    %3 = cast(%1, dtype=float32) /* si=scale */;
    %4 = multiply(%v, %3) /* si=row */;
    %5 = write_row(%acc, %4, %i) /* si=write */;
    (%2, %1, %5) /* si=loop */
  } /* si=loop */;
  %6 = less(0i64 /* si=loop */, %n) /* si=loop */;
  %7 = while_loop(%0, %6, 0i64 /* si=loop */, %init, %n, %x) /* si=loop */;
  %7.2 /* si=loop */
}
)";

TEST(LowerModuleTest, ALoopWritesARowOfItsStateInPlace) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kRowWritingLoop);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<const loop::WhileNode*> loops = WhileLoops(*lowered);
  ASSERT_EQ(loops.size(), 1u);
  std::vector<std::string> in_loop = CalledKernels(loops[0]->body);
  auto count = [&](const std::string& prefix) {
    return std::count_if(in_loop.begin(), in_loop.end(),
                         [&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
  };
  EXPECT_EQ(count("write_row"), 1);
  EXPECT_EQ(count("copy"), 2) << "only the condition and the count are written back";
  EXPECT_TRUE(StatementsHaveSourceSpans(*lowered, *testing::Optimize(kRowWritingLoop)));

  const std::vector<double> x = {1.5, -2}, init = {7, 7, 8, 8, 9, 9};
  for (int64_t n : {0, 2, 5}) {
    auto outputs = RunFloat(*lowered, {loop::HostTensor::FromDoubles(DataType::kInt64, {},
                                                                     {static_cast<double>(n)}),
                                       F32({2}, x), F32({3, 2}, init)});
    ASSERT_EQ(outputs.size(), 1u);
    // n = 0 runs no iteration; n = 5 runs five, the last two writing rows 3 and 4 (dropped).
    std::vector<double> expected = init;
    for (int64_t i = 0; i < std::min<int64_t>(n, 3); ++i) {
      for (int k = 0; k < 2; ++k) expected[i * 2 + k] = x[k] * static_cast<double>(i + 1);
    }
    EXPECT_EQ(outputs[0], expected) << "n " << n;
  }
}

// The same loop writing row i - 1: its first iteration's row, -1, lies outside acc and is
// dropped by the in-place write too.
TEST(LowerModuleTest, AnInPlaceRowWriteDropsARowBeforeTheFirst) {
  std::string text = kRowWritingLoop;
  const std::string write = "%5 = write_row(%acc, %4, %i) /* si=write */;";
  ASSERT_NE(text.find(write), std::string::npos);
  text.replace(text.find(write), write.size(),
               "%8 = subtract(%i, 1i64 /* si=write */) /* si=write */;\n"
               "    %5 = write_row(%acc, %4, %8) /* si=write */;");
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(text);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::vector<const loop::WhileNode*> loops = WhileLoops(*lowered);
  ASSERT_EQ(loops.size(), 1u);
  std::vector<std::string> in_loop = CalledKernels(loops[0]->body);
  EXPECT_EQ(std::count_if(in_loop.begin(), in_loop.end(),
                          [](const std::string& name) { return name.rfind("write_row", 0) == 0; }),
            1);
  const std::vector<double> x = {1.5, -2}, init = {7, 7, 8, 8, 9, 9};
  auto outputs = RunFloat(*lowered, {loop::HostTensor::FromDoubles(DataType::kInt64, {}, {3}),
                                     F32({2}, x), F32({3, 2}, init)});
  ASSERT_EQ(outputs.size(), 1u);
  // Iterations 0, 1, 2 write x * 1 at row -1 (dropped), x * 2 at row 0, x * 3 at row 1.
  EXPECT_EQ(outputs[0], (std::vector<double>{3, -4, 4.5, -6, 9, 9}));
}

// Outside a loop write_row is a kernel of its own: the rows with one replaced, or unchanged when
// the row is outside them.
TEST(LowerModuleTest, WriteRowReplacesOneRowOrNone) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%rows: Tensor[(3, 2), float32] /* si=rows */, %x: Tensor[(2), float32] /* si=input */,
          %r: Tensor[(), int64] /* si=r */) {
  write_row(%rows, %x, %r) /* si=write */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<double> rows = {1, 2, 3, 4, 5, 6};
  for (int64_t r : {-1, 0, 2, 3}) {
    auto outputs = RunFloat(*lowered, {F32({3, 2}, rows), F32({2}, {-1, -2}),
                                       loop::HostTensor::FromDoubles(DataType::kInt64, {},
                                                                     {static_cast<double>(r)})});
    ASSERT_EQ(outputs.size(), 1u);
    std::vector<double> expected = rows;
    if (r >= 0 && r < 3) expected[r * 2] = -1, expected[r * 2 + 1] = -2;
    EXPECT_EQ(outputs[0], expected) << "row " << r;
  }
}

TEST(LowerModuleTest, EveryStatementCarriesASpanOfTheModule) {
  for (const char* text : {kDenseBiasRelu, kConv, kChain, kDenseReshapeSoftmax}) {
    absl::StatusOr<IRModule> optimized = testing::Optimize(text);
    ASSERT_TRUE(optimized.ok()) << optimized.status();
    absl::StatusOr<lower::LoweredModule> lowered = lower::LowerModule(*optimized);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(StatementsHaveSourceSpans(*lowered, *optimized)) << text;
  }
}

TEST(LowerModuleTest, SymbolicShapesAreAnErrorNamingTheLayer) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(?, 3), float32] /* si=input */) {
  nn.relu(%x) /* si=relu1 */
}
)");
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(lowered.status().message(),
            "parameter %x (si=input): symbolic shapes are not supported");
}

TEST(LowerModuleTest, AModuleWithoutMainIsAnError) {
  absl::StatusOr<IRModule> module = ParseModule(R"(
def @other(%x: Tensor[(3), float32]) {
  nn.relu(%x)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<lower::LoweredModule> lowered = lower::LowerModule(*module);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().message(), "lowering needs a graph function @main");
}

TEST(LowerModuleTest, TupleFieldsOfASplitFeedTheirReaders) {
  // Left half plus right half; at -O0 the split is a kernel of its own with
  // two outputs, at -O3 everything is one kernel.
  constexpr char kSplitAdd[] = R"(
def @main(%x: Tensor[(2, 4), float32] /* si=input */) {
  %0 = split(%x, indices_or_sections=2, axis=1) /* si=split */;
  %1 = %0.0 /* si=left */;
  %2 = %0.1 /* si=right */;
  add(%1, %2) /* si=add */
}
)";
  for (int opt_level : {0, 3}) {
    absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kSplitAdd, opt_level);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto outputs = RunFloat(*lowered, {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
    EXPECT_EQ(outputs[0], (std::vector<double>{4, 6, 12, 14})) << "-O" << opt_level;
  }
}

TEST(LowerModuleTest, LetBindingsInMainAreFollowed) {
  // -O3 keeps let bindings (no ToGraphNormalForm); the kernels after a let
  // read the bound value.
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(4), float32] /* si=input */) {
  %0 = nn.relu(%x) /* si=relu */;
  let %y: Tensor[(4), float32] = %0 /* let_si=bind_y */;
  %1 = nn.softmax(%y) /* si=softmax */;
  add(%1, %y) /* si=add */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // relu(x) = (0, 0, log 2, log 5); softmax of it = (1, 1, 2, 5) / 9.
  auto outputs = RunFloat(*lowered, {F32({4}, {-1, 0, std::log(2.0), std::log(5.0)})});
  std::vector<double> expected = {1.0 / 9, 1.0 / 9, 2.0 / 9 + std::log(2.0),
                                  5.0 / 9 + std::log(5.0)};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(outputs[0][i], expected[i], 1e-6) << i;
}

TEST(LowerModuleTest, CallsOfGlobalFunctionsAreAnErrorNamingTheCall) {
  // -O0 does not inline, so main still calls @head.
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @head(%h: Tensor[(4), float32]) -> Tensor[(4), float32] {
  nn.relu(%h) /* si=head/relu */
}

def @main(%x: Tensor[(4), float32] /* si=input */) {
  @head(%x) /* si=call_head */
}
)",
                                                                  /*opt_level=*/0);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(lowered.status().message(),
            "call of @head (si=call_head): calls of global functions are not supported (run "
            "Inline)");
}

TEST(LowerModuleTest, ADeepChainLowersWithoutRecursingPerNode) {
  // 20,000 calls in a chain: fused into groups at -O3 and walked iteratively.
  constexpr int kLength = 20000;
  std::string text = "def @main(%x: Tensor[(4), float32] /* si=input */) {\n";
  std::string previous = "%x";
  for (int i = 0; i + 1 < kLength; ++i) {
    absl::StrAppend(&text, "  %", i, " = add(", previous, ", 1f) /* si=l", i, " */;\n");
    previous = absl::StrCat("%", i);
  }
  absl::StrAppend(&text, "  add(", previous, ", 1f) /* si=last */\n}\n");
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(text);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_GT(lowered->kernels.size(), 1u);
  auto outputs = RunFloat(*lowered, {F32({4}, {0, 1, -1, 0.5})});
  EXPECT_EQ(outputs[0], (std::vector<double>{20000, 20001, 19999, 20000.5}));
}

TEST(LowerModuleTest, ResultsHoldAfterTheLoopPipeline) {
  // The lowered module stays correct through the default loop passes
  // (flattening, vectorization, storage rewriting, ...): same hand results.
  absl::StatusOr<lower::LoweredModule> dense = OptimizeAndLower(kDenseBiasRelu);
  ASSERT_TRUE(dense.ok()) << dense.status();
  dense = testing::RunLoopPipeline(*std::move(dense));
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(RunFloat(*dense, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2, 3}, {0, 1, 0, 1, -1, 1}),
                              F32({2}, {-3, -1})})[0],
            (std::vector<double>{0, 1, 2, 4}));

  absl::StatusOr<lower::LoweredModule> conv = OptimizeAndLower(kConv);
  ASSERT_TRUE(conv.ok()) << conv.status();
  conv = testing::RunLoopPipeline(*std::move(conv));
  ASSERT_TRUE(conv.ok()) << conv.status();
  std::vector<double> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i;
  EXPECT_EQ(RunFloat(*conv, {F32({1, 1, 4, 4}, x), F32({1, 1, 2, 2}, {1, 2, 3, 4})})[0],
            (std::vector<double>{34, 44, 54, 74, 84, 94, 114, 124, 134}));

  absl::StatusOr<lower::LoweredModule> chain = OptimizeAndLower(kChain);
  ASSERT_TRUE(chain.ok()) << chain.status();
  chain = testing::RunLoopPipeline(*std::move(chain));
  ASSERT_TRUE(chain.ok()) << chain.status();
  std::vector<double> identity2(256, 0.0);
  for (int i = 0; i < 16; ++i) identity2[i * 16 + i] = 2;
  std::vector<double> input(16), expected(16);
  for (int i = 0; i < 16; ++i) {
    input[i] = i - 8;
    expected[i] = 16 * std::max(0, i - 8);
  }
  EXPECT_EQ(RunFloat(*chain, {F32({1, 16}, input), F32({16, 16}, identity2),
                              F32({16, 16}, identity2), F32({16, 16}, identity2),
                              F32({16, 16}, identity2)})[0],
            expected);
}

TEST(LowerModuleTest, ScheduleRecordsFollowTheOption) {
  lower::LowerOptions options;
  options.keep_schedule_record = false;
  absl::StatusOr<lower::LoweredModule> without = OptimizeAndLower(kDenseBiasRelu, 3, options);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->kernels[0].schedule.record().empty());
  absl::StatusOr<lower::LoweredModule> with = OptimizeAndLower(kDenseBiasRelu);
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_FALSE(with->kernels[0].schedule.record().empty());
  EXPECT_EQ(with->kernels[0].schedule.record()[0].primitive, "vanilla");
}

TEST(LowerModuleTest, RunRejectsTensorsOfTheWrongShape) {
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(kDenseBiasRelu);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  loop::HostTensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  loop::HostTensor w = F32({2, 3}, {0, 1, 0, 1, -1, 1});
  loop::HostTensor b = F32({2}, {-3, -1});
  std::vector<loop::HostTensor> outputs = lower::MakeOutputTensors(*lowered);
  absl::Status status = lower::RunLoweredModule(*lowered, {&x, &w, &b}, {&outputs[0]});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "input 'x' expects float32[2, 3], got float32[3, 2]");
}

TEST(LowerModuleTest, AReshapedFieldOfATupleIsAViewOfThatField) {
  // The split kernel returns both halves; the right half, reshaped for the softmax, is the
  // split's second output read in place (ShuffleNet's branches), not a copy kernel.
  absl::StatusOr<lower::LoweredModule> lowered = OptimizeAndLower(R"(
def @main(%x: Tensor[(2, 4), float32] /* si=input */) {
  %0 = nn.relu(%x) /* si=relu */;
  %1 = split(%0, indices_or_sections=2, axis=1) /* si=split */;
  %2 = %1.1 /* si=right */;
  %3 = reshape(%2, newshape=[4]) /* si=flatten */;
  %4 = nn.softmax(%3) /* si=softmax */;
  %5 = %1.0 /* si=left */;
  (%5, %4)
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelNames(*lowered),
            (std::vector<std::string>{"fused_nn_relu_split", "fused_nn_softmax"}));
  auto outputs = RunFloat(*lowered, {F32({2, 4}, {-1, 2, 0, std::log(3.0), 5, -6, std::log(2.0), 0})});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0], (std::vector<double>{0, 2, 5, 0}));
  // relu of the right half: (0, log 3, log 2, 0); softmax of those four: (1, 3, 2, 1) / 7.
  std::vector<double> expected = {1.0 / 7, 3.0 / 7, 2.0 / 7, 1.0 / 7};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(outputs[1][i], expected[i], 1e-6) << i;
}

}  // namespace
}  // namespace kiln
