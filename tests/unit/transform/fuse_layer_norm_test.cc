// FuseLayerNorm: which op-by-op layer normalizations become one nn.layer_norm (operands in
// either order, rsqrt or sqrt-and-divide, a later beta taken in) and which stay (a leading axis,
// a gamma that varies across rows, a layer norm whose output has another use).
#include "engine/transform/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include <string>

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

TEST(FuseLayerNormTest, ALeadingAxisOrARowDependentGammaStaysOpByOp) {
  // Normalized over axis 0 of (4, 3): not the trailing axes a row kernel covers.
  std::string leading = Fused(std::string(R"(
def @main(%x: Tensor[(4, 3), float32]) {
  %0 = mean(%x, axis=[0], keepdims=True) /* si=m */;
  %1 = subtract(%x, %0) /* si=d */;
  %2 = power(%1, 2f) /* si=sq */;
  %3 = mean(%2, axis=[0], keepdims=True) /* si=v */;
  %4 = add(%3, 1e-05f) /* si=ve */;
  %5 = sqrt(%4) /* si=r */;
  %6 = divide(%1, %5) /* si=n */;
  multiply(%6, 2f) /* si=s */
}
)"));
  EXPECT_EQ(leading.find("nn.layer_norm"), std::string::npos) << leading;
  // Over the last axis of (4, 1), but gamma (4, 1) scales each row differently.
  std::string per_row = Fused(std::string(R"(
def @main(%x: Tensor[(4, 1), float32]) {
  %0 = mean(%x, axis=[1], keepdims=True) /* si=m */;
  %1 = subtract(%x, %0) /* si=d */;
  %2 = power(%1, 2f) /* si=sq */;
  %3 = mean(%2, axis=[1], keepdims=True) /* si=v */;
  %4 = add(%3, 1e-05f) /* si=ve */;
  %5 = sqrt(%4) /* si=r */;
  %6 = divide(%1, %5) /* si=n */;
  multiply(%6, meta[Constant][0] /* si=g */) /* si=s */
}
#[metadata]
meta[Constant][0] = Tensor[(4, 1), float32] 0x0000803f000000400000404000008040;
)"));
  EXPECT_EQ(per_row.find("nn.layer_norm"), std::string::npos) << per_row;
}

}  // namespace
}  // namespace kiln
