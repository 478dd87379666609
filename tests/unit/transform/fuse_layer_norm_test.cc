// FuseLayerNorm: which op-by-op layer normalizations become one nn.layer_norm (operands in
// either order, rsqrt or sqrt-and-divide, a later beta taken in) and which stay (a leading axis,
// a gamma that varies across rows, a layer norm whose output has another use).
#include "engine/transform/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>

#include "engine/printer/printer.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::ParseTyped;
using testing::RunPass;

std::string Fused(std::string_view text) {
  IRModule out = RunPass(transform::FuseLayerNorm(), ParseTyped(text));
  return out ? PrintModule(out) : std::string("(no module)");
}

// gamma = [1, 2, 3, 4], beta = [0.5, 0.5, 0.5, 0.5] (float32, little-endian).
constexpr char kAffine[] = R"(
#[metadata]
meta[Constant][0] = Tensor[(4), float32] 0x0000803f000000400000404000008040;
meta[Constant][1] = Tensor[(4), float32] 0x0000003f0000003f0000003f0000003f;
)";

TEST(FuseLayerNormTest, RsqrtFormWithOperandsInEitherOrderBecomesOneLayerNorm) {
  std::string text = Fused(std::string(R"(
def @main(%x: Tensor[(2, 4), float32]) {
  %0 = mean(%x, axis=[-1], keepdims=True) /* si=m */;
  %1 = subtract(%x, %0) /* si=d */;
  %2 = multiply(%1, %1) /* si=sq */;
  %3 = mean(%2, axis=[1], keepdims=True) /* si=v */;
  %4 = add(1e-05f /* si=eps */, %3) /* si=ve */;
  %5 = rsqrt(%4) /* si=r */;
  %6 = multiply(%5, %1) /* si=n */;
  %7 = multiply(meta[Constant][0] /* si=g */, %6) /* si=s */;
  add(%7, meta[Constant][1] /* si=b */) /* si=shift */
}
)") + kAffine);
  EXPECT_NE(text.find("nn.layer_norm(%x, meta[Constant][0] /* si=g */, meta[Constant][1] /* si=b */, "
                      "axis=1, epsilon="),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("mean("), std::string::npos) << text;
  // Every replaced node's span, in SIBuilder's pre-order from the final add (operands left to
  // right, each node once; x, gamma and beta are kept, not replaced).
  EXPECT_NE(text.find("/* si=[shift, s, n, r, ve, eps, v, sq, d, m] */"), std::string::npos)
      << text;
}

TEST(FuseLayerNormTest, ABetaAddedToALayerNormIsTakenIn) {
  std::string text = Fused(std::string(R"(
def @main(%x: Tensor[(3, 4), float32]) {
  %0 = nn.layer_norm(%x, meta[Constant][0] /* si=g */, epsilon=0.001f) /* si=ln */;
  add(meta[Constant][1] /* si=b */, %0) /* si=shift */
}
)") + kAffine);
  EXPECT_NE(text.find("nn.layer_norm(%x, meta[Constant][0] /* si=g */, meta[Constant][1] /* si=b */, "
                      "axis=1, epsilon=0.001"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("add("), std::string::npos) << text;
}

TEST(FuseLayerNormTest, ALayerNormWithAnotherUseKeepsItsBetaApart) {
  std::string text = Fused(std::string(R"(
def @main(%x: Tensor[(3, 4), float32]) {
  %0 = nn.layer_norm(%x, meta[Constant][0] /* si=g */) /* si=ln */;
  %1 = add(%0, meta[Constant][1] /* si=b */) /* si=shift */;
  (%0, %1)
}
)") + kAffine);
  EXPECT_NE(text.find("add("), std::string::npos) << text;
}

// The op-by-op layer norm of %x (of `shape`) over `axis`, its epsilon `epsilon` and its scale
// `gamma`, then `result` (the function's result, `%7` for the scaled value).
std::string OpByOp(std::string_view shape, std::string_view axis, std::string_view epsilon,
                   std::string_view gamma, std::string_view result = "%7") {
  std::string text = R"(def @main(%x: Tensor[(SHAPE), float32]) {
  %0 = mean(%x, axis=[AXIS], keepdims=True) /* si=m */;
  %1 = subtract(%x, %0) /* si=d */;
  %2 = power(%1, 2f) /* si=sq */;
  %3 = mean(%2, axis=[AXIS], keepdims=True) /* si=v */;
  %4 = add(%3, EPSILON) /* si=ve */;
  %5 = sqrt(%4) /* si=r */;
  %6 = divide(%1, %5) /* si=n */;
  %7 = multiply(%6, GAMMA) /* si=s */;
  RESULT
}
)";
  const std::pair<std::string_view, std::string_view> fills[] = {
      {"SHAPE", shape}, {"AXIS", axis}, {"EPSILON", epsilon}, {"GAMMA", gamma}, {"RESULT", result}};
  for (const auto& [name, value] : fills) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
      text.replace(at, name.size(), value);
      at += value.size();
    }
  }
  return text;
}

TEST(FuseLayerNormTest, ALeadingAxisOrARowDependentGammaStaysOpByOp) {
  // Normalized over axis 0 of (4, 3): not the trailing axes a row kernel covers.
  std::string leading = Fused(OpByOp("4, 3", "0", "1e-05f", "2f"));
  EXPECT_EQ(leading.find("nn.layer_norm"), std::string::npos) << leading;
  // Over the last axis of (4, 1), but gamma (4, 1) scales each row differently.
  std::string per_row = Fused(OpByOp("4, 1", "1", "1e-05f", "meta[Constant][0]") + R"(
#[metadata]
meta[Constant][0] = Tensor[(4, 1), float32] 0x0000803f000000400000404000008040;
)");
  EXPECT_EQ(per_row.find("nn.layer_norm"), std::string::npos) << per_row;
  // The same pattern with a gamma that scales the row fuses: the pattern text is right.
  std::string fused = Fused(OpByOp("2, 4", "1", "1e-05f", "meta[Constant][0]") + kAffine);
  EXPECT_NE(fused.find("nn.layer_norm"), std::string::npos) << fused;
}

// An epsilon of shape (1, 1, 1) broadcasts the (2, 4) statistics to rank 3: not a layer norm of
// x's shape. A mean that is also an output must stay, so fusing would only add a kernel.
TEST(FuseLayerNormTest, ABroadcastingEpsilonOrAStatisticUsedElsewhereStaysOpByOp) {
  std::string broadcast = Fused(OpByOp("2, 4", "1", "meta[Constant][2]", "meta[Constant][0]") + R"(
#[metadata]
meta[Constant][0] = Tensor[(4), float32] 0x0000803f000000400000404000008040;
meta[Constant][1] = Tensor[(4), float32] 0x0000003f0000003f0000003f0000003f;
meta[Constant][2] = Tensor[(1, 1, 1), float32] 0xacc52737;
)");
  EXPECT_EQ(broadcast.find("nn.layer_norm"), std::string::npos) << broadcast;
  std::string shared = Fused(OpByOp("2, 4", "1", "1e-05f", "meta[Constant][0]", "(%7, %0)") + kAffine);
  EXPECT_EQ(shared.find("nn.layer_norm"), std::string::npos) << shared;
}

}  // namespace
}  // namespace kiln
