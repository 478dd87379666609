// Selecting kernels for schedule records: by call index, by name, by layer;
// an unknown selector lists what is valid.
#include "engine/lower/kernel_selector.h"

#include <gtest/gtest.h>

#include "tests/unit/lower/lower_test_util.h"

namespace kiln {
namespace {

constexpr char kModel[] = R"(
def @main(%x: Tensor[(2, 2), float32] /* si=input */, %w: Tensor[(2, 2), float32] /* si=fc.weight */) {
  %0 = nn.dense(%x, %w) /* si=fc */;
  %1 = nn.relu(%0) /* si=relu */;
  %2 = reshape(%1, newshape=[1, 4]) /* si=flatten */;
  nn.softmax(%2) /* si=softmax */
}
)";

std::vector<std::string> Names(const std::vector<const lower::LoweredKernel*>& kernels) {
  std::vector<std::string> names;
  for (const lower::LoweredKernel* kernel : kernels) names.push_back(kernel->name);
  return names;
}

class KernelSelectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(kModel);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    lowered_ = *std::move(lowered);
  }
  std::vector<std::string> Select(std::string_view selector) {
    absl::StatusOr<std::vector<const lower::LoweredKernel*>> kernels =
        lower::SelectKernels(lowered_, selector);
    EXPECT_TRUE(kernels.ok()) << kernels.status();
    return kernels.ok() ? Names(*kernels) : std::vector<std::string>{};
  }
  lower::LoweredModule lowered_;
};

TEST_F(KernelSelectorTest, ByCallIndex) {
  EXPECT_EQ(Select("0"), std::vector<std::string>{"fused_nn_dense_nn_relu"});
  EXPECT_EQ(Select("2"), std::vector<std::string>{"fused_nn_softmax"});
}

TEST_F(KernelSelectorTest, ByName) {
  EXPECT_EQ(Select("fused_nn_softmax"), std::vector<std::string>{"fused_nn_softmax"});
}

TEST_F(KernelSelectorTest, ByLayerName) {
  EXPECT_EQ(Select("relu"), std::vector<std::string>{"fused_nn_dense_nn_relu"});
  EXPECT_EQ(Select("softmax"), std::vector<std::string>{"fused_nn_softmax"});
}

TEST(KernelSelectorLayerTest, ALayerInSeveralKernelsSelectsThemAll) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(R"(
def @main(%x: Tensor[(2, 8), float32] /* si=input */) {
  %0 = nn.softmax(%x) /* si=attn */;
  %1 = nn.log_softmax(%0) /* si=attn */;
  exp(%1) /* si=exp */
}
)");
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::vector<const lower::LoweredKernel*>> kernels =
      lower::SelectKernels(*lowered, "attn");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  EXPECT_EQ(Names(*kernels), (std::vector<std::string>{"fused_nn_softmax", "fused_nn_log_softmax"}));
}

TEST_F(KernelSelectorTest, UnknownSelectorListsTheKernels) {
  absl::StatusOr<std::vector<const lower::LoweredKernel*>> kernels =
      lower::SelectKernels(lowered_, "conv9");
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(kernels.status().message(),
            "no kernel matches 'conv9' (a call index, kernel name or layer name); valid kernels: "
            "fused_nn_dense_nn_relu (call 0), fused_nn_softmax (call 2)");
  // Call 1 is the reshape, a view that runs no kernel.
  EXPECT_FALSE(lower::SelectKernels(lowered_, "1").ok());
}

TEST(KernelSelectorLayerTest, LoweringOnlyWhatASelectorMayPickKeepsNamesAndIndices) {
  constexpr char kRepeats[] = R"(
def @main(%x: Tensor[(2, 8), float32] /* si=input */) {
  %0 = nn.softmax(%x) /* si=first */;
  %1 = nn.softmax(%0) /* si=second */;
  exp(%1) /* si=exp */
}
)";
  lower::LowerOptions options;
  int asked = 0;
  options.only_kernels = [&](const lower::KernelCandidate& kernel) {
    ++asked;
    return lower::KernelMayMatch("second", kernel);
  };
  absl::StatusOr<lower::LoweredModule> partial = testing::OptimizeAndLower(kRepeats, 3, options);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(asked, 3);
  // The two softmaxes share one kernel; the second layer selects it (though the first call,
  // which the selector refused, created it), named and indexed as a full lowering names it,
  // and no main.
  ASSERT_EQ(partial->kernels.size(), 1u);
  EXPECT_EQ(partial->kernels[0].name, "fused_nn_softmax");
  EXPECT_EQ(partial->kernels[0].call_indices, (std::vector<int>{0, 1}));
  EXPECT_FALSE(partial->module->Lookup("main"));
  absl::StatusOr<std::vector<const lower::LoweredKernel*>> selected =
      lower::SelectKernels(*partial, "second");
  ASSERT_TRUE(selected.ok()) << selected.status();
  EXPECT_EQ(Names(*selected), std::vector<std::string>{"fused_nn_softmax"});
  // The schedule record is the full lowering's.
  absl::StatusOr<lower::LoweredModule> full = testing::OptimizeAndLower(kRepeats);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ((*selected)[0]->schedule.record().size(), full->kernels[0].schedule.record().size());
}

}  // namespace
}  // namespace kiln
