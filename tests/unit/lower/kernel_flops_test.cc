// KernelFlops against multiply-adds counted by hand: a dense layer and a padded convolution
// with their epilogues (which add no FLOPs), and an elementwise kernel (none).
#include "engine/lower/kernel_flops.h"

#include <gtest/gtest.h>

#include "tests/unit/lower/lower_test_util.h"

namespace kiln {
namespace {

int64_t OnlyKernelFlops(std::string_view text) {
  absl::StatusOr<lower::LoweredModule> lowered = testing::OptimizeAndLower(text);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return -1;
  EXPECT_EQ(lowered->kernels.size(), 1u);
  return lowered->kernels.empty() ? -1 : lower::KernelFlops(lowered->kernels[0]);
}

TEST(KernelFlopsTest, TwiceTheMultiplyAddsOfTheReductions) {
  // 4 rows x 16 outputs x 16 inputs multiply-adds.
  EXPECT_EQ(OnlyKernelFlops(R"(
def @main(%x: Tensor[(4, 16), float32], %w: Tensor[(16, 16), float32], %b: Tensor[(16), float32]) {
  %0 = nn.dense(%x, %w);
  nn.relu(add(%0, %b))
}
)"),
            2 * 4 * 16 * 16);
  // 4 output channels x 8 x 32 outputs, each over 2 input channels x 3 x 3 taps.
  EXPECT_EQ(OnlyKernelFlops(R"(
def @main(%x: Tensor[(1, 2, 8, 32), float32], %w: Tensor[(4, 2, 3, 3), float32]) {
  nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))
}
)"),
            2 * 4 * 8 * 32 * 2 * 9);
  EXPECT_EQ(OnlyKernelFlops(R"(
def @main(%x: Tensor[(4, 16), float32]) {
  nn.relu(%x)
}
)"),
            0);
}

}  // namespace
}  // namespace kiln
