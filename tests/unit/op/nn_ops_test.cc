// Type relations of the nn op family, checked against shapes worked out by
// hand: convolutions with stride, padding, dilation and groups, transposed
// convolutions, pooling (ceil mode included), dense and matmul, the
// normalizations, pad, depth/space and resize; symbolic dims staying
// symbolic; and the errors a user sees for a bad call.
#include <gtest/gtest.h>

#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"

namespace kiln {
namespace {

Type F32(std::vector<Dim> dims) { return MakeTensorType(std::move(dims), DataType::kFloat32); }
Type F32(std::initializer_list<int64_t> dims) { return MakeTensorType(dims, DataType::kFloat32); }
Dim N(const char* name = "N") { return Dim::Symbolic(name); }
Dim S(int64_t v) { return Dim::Static(v); }

// The result type as text ("Tensor[(1, 8, 16, 16), float32]") or the error.
std::string Infer(const std::string& op, std::vector<Type> args,
                  std::vector<AttrsNode::Field> attrs = {}) {
  const OpEntry* entry = OpRegistry::Global().Find(op);
  if (entry == nullptr) return "no such op " + op;
  auto type = InferCallType(*entry, args, MakeAttrs(std::move(attrs)));
  if (!type.ok()) return "error: " + std::string(type.status().message());
  return TypeToString(*type);
}

TEST(NnOpsTest, Conv2dStridePaddingDilation) {
  // (32 + 1 + 1 - 3) / 2 + 1 = 16.
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 32, 32}), F32({8, 3, 3, 3})},
                  {{"strides", IntArray({2, 2})}, {"padding", IntArray({1, 1})}}),
            "Tensor[(1, 8, 16, 16), float32]");
  // Asymmetric padding, begins (1, 0) and ends (2, 1): H (7 + 3 - 3) / 2 + 1 = 4,
  // W (5 + 1 - 3) / 2 + 1 = 2.
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 1, 7, 5}), F32({1, 1, 3, 3})},
                  {{"strides", IntArray({2, 2})}, {"padding", IntArray({1, 0, 2, 1})}}),
            "Tensor[(1, 1, 4, 2), float32]");
  // Dilation 2 makes a 3x3 kernel span 5: 10 - 5 + 1 = 6.
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 1, 10, 10}), F32({1, 1, 3, 3})},
                  {{"dilation", IntArray({2, 2})}}),
            "Tensor[(1, 1, 6, 6), float32]");
  // 1-D and 3-D: (20 - 5) / 3 + 1 = 6; 3-D kernel (2, 3, 4) on (4, 6, 8): 3, 4, 5.
  EXPECT_EQ(Infer("nn.conv1d", {F32({2, 4, 20}), F32({6, 4, 5})}, {{"strides", IntArray({3})}}),
            "Tensor[(2, 6, 6), float32]");
  EXPECT_EQ(Infer("nn.conv3d", {F32({1, 2, 4, 6, 8}), F32({5, 2, 2, 3, 4})}),
            "Tensor[(1, 5, 3, 4, 5), float32]");
}

TEST(NnOpsTest, ConvGroupsAndSymbolicDims) {
  // Depthwise: 32 groups of one channel each; the batch symbol N survives.
  EXPECT_EQ(Infer("nn.conv2d", {F32({N(), S(32), S(14), S(14)}), F32({32, 1, 3, 3})},
                  {{"groups", 32}, {"padding", IntArray({1, 1})}}),
            "Tensor[(N, 32, 14, 14), float32]");
  // Two groups of three input channels, four output channels.
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 6, 8, 8}), F32({4, 3, 3, 3})}, {{"groups", 2}}),
            "Tensor[(1, 4, 6, 6), float32]");
  // Symbolic spatial dims give symbolic (unnamed) outputs.
  EXPECT_EQ(Infer("nn.conv2d", {F32({S(1), S(3), N("H"), N("W")}), F32({8, 3, 3, 3})}),
            "Tensor[(1, 8, ?, ?), float32]");
}

TEST(NnOpsTest, ConvErrorsSayWhatIsWrong) {
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 6, 8, 8}), F32({4, 3, 3, 3})}, {{"groups", 4}}),
            "error: input channels 6 are not divisible by groups 4");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 6, 8, 8}), F32({4, 2, 3, 3})}, {{"groups", 2}}),
            "error: weight has 2 input channels per group (dim 1), expected 3 = 6 input "
            "channels / 2 groups");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 1, 5, 5}), F32({1, 1, 7, 7})}),
            "error: kernel 7x7 is larger than the padded input 5x5");
  EXPECT_EQ(
      Infer("nn.conv2d", {F32({1, 1, 5, 5}), F32({1, 1, 3, 3})}, {{"dilation", IntArray({3, 3})}}),
      "error: kernel 7x7 (3x3 with dilation 3x3) is larger than the padded input 5x5");
  // The same kernel fits once padding makes the input 7x7.
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 1, 5, 5}), F32({1, 1, 3, 3})},
                  {{"dilation", IntArray({3, 3})}, {"padding", IntArray({1, 1})}}),
            "Tensor[(1, 1, 1, 1), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 5}), F32({1, 3, 3, 3})}),
            "error: expected a 4-D input (N, C, H, W), got 3-D (1, 3, 5)");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 5, 5}), F32({1, 3, 3})}),
            "error: expected a 4-D weight (O, I, kH, kW), got 3-D (1, 3, 3)");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 5, 5}), F32({1, 3, 3, 3})},
                  {{"strides", IntArray({1, 1, 1})}}),
            "error: operator nn.conv2d attribute 'strides': must have 2 elements, got 3");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 5, 5}), F32({1, 3, 3, 3})},
                  {{"kernel_size", IntArray({5, 5})}}),
            "error: attribute kernel_size 5x5 does not match the weight's kernel (3, 3)");
  EXPECT_EQ(Infer("nn.conv2d", {MakeTensorType({1, 3, 5, 5}, DataType::kInt32),
                                MakeTensorType({1, 3, 3, 3}, DataType::kInt32)}),
            "error: input has dtype int32, expected a float dtype");
  EXPECT_EQ(Infer("nn.conv2d", {F32({1, 3, 5, 5}), F32({1, 3, 3, 3})}, {{"groups", 0}}),
            "error: operator nn.conv2d attribute 'groups': must be > 0");
}

TEST(NnOpsTest, BlockedConvShapesAndErrors) {
  // 16 input and 32 output channels in blocks of 8: (N, C/8, H, W, 8) and OIHW8i8o.
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 2, 14, 14, 8}), F32({4, 2, 3, 3, 8, 8})},
                  {{"padding", IntArray({1, 1})}, {"strides", IntArray({2, 2})}, {"block", 8}}),
            "Tensor[(1, 4, 7, 7, 8), float32]");
  // Depthwise over 16 channels: weight OIHW1i8o.
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 2, 14, 14, 8}), F32({2, 1, 3, 3, 1, 8})},
                  {{"groups", 16}, {"block", 8}}),
            "Tensor[(1, 2, 12, 12, 8), float32]");
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 16, 14, 14}), F32({2, 2, 3, 3, 8, 8})},
                  {{"block", 8}}),
            "error: expected a 5-D input (N, C/i, H, W, i), got (1, 16, 14, 14)");
  // A 3-channel input in blocks of 1 (NCHW1c): a network's stem.
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 3, 224, 224, 1}), F32({8, 3, 7, 7, 1, 8})},
                  {{"padding", IntArray({3, 3})}, {"strides", IntArray({2, 2})}, {"block", 8}}),
            "Tensor[(1, 8, 112, 112, 8), float32]");
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 2, 14, 14, 8}), F32({4, 3, 3, 3, 8, 8})},
                  {{"block", 8}}),
            "error: weight (4, 3, 3, 3, 8, 8) does not match input (1, 2, 14, 14, 8): expected "
            "(O/8, C/8, kH, kW, 8, 8)");
  EXPECT_EQ(Infer("nn.conv2d_nchwc", {F32({1, 2, 14, 14, 8}), F32({2, 1, 3, 3, 1, 8})},
                  {{"groups", 4}, {"block", 8}}),
            "error: groups 4 must be 1 or the channel count (depthwise: input (N, C/8, H, W, 8), "
            "weight (C/8, 1, kH, kW, 1, 8)); got input (1, 2, 14, 14, 8), weight (2, 1, 3, 3, 1, "
            "8)");
}

TEST(NnOpsTest, ConvTranspose) {
  // H: (3 - 1) * 3 + 3 + 1 = 10, W: (3 - 1) * 2 + 3 + 1 = 8.
  EXPECT_EQ(Infer("nn.conv2d_transpose", {F32({1, 1, 3, 3}), F32({1, 2, 3, 3})},
                  {{"strides", IntArray({3, 2})}, {"output_padding", IntArray({1, 1})}}),
            "Tensor[(1, 2, 10, 8), float32]");
  // Padding (1, 2) at both ends: H 6 + 3 - 2 = 7, W 4 + 3 - 4 = 3.
  EXPECT_EQ(Infer("nn.conv2d_transpose", {F32({1, 1, 3, 3}), F32({1, 2, 3, 3})},
                  {{"strides", IntArray({3, 2})}, {"padding", IntArray({1, 2, 1, 2})}}),
            "Tensor[(1, 2, 7, 3), float32]");
  // Two groups of three outputs each; the batch symbol survives.
  EXPECT_EQ(Infer("nn.conv2d_transpose", {F32({N(), S(4), S(5), S(5)}), F32({4, 3, 3, 3})},
                  {{"groups", 2}}),
            "Tensor[(N, 6, 7, 7), float32]");
  EXPECT_EQ(Infer("nn.conv1d_transpose", {F32({1, 1, 3}), F32({1, 2, 3})}),
            "Tensor[(1, 2, 5), float32]");
  EXPECT_EQ(Infer("nn.conv2d_transpose", {F32({1, 4, 5, 5}), F32({3, 3, 3, 3})}),
            "error: weight has 3 input channels (dim 0), expected 4 like the input");
}

TEST(NnOpsTest, Pooling) {
  // (32 - 5) / 3 + 1 = 10.
  EXPECT_EQ(Infer("nn.max_pool2d", {F32({1, 3, 32, 32})},
                  {{"pool_size", IntArray({5, 5})}, {"strides", IntArray({3, 3})}}),
            "Tensor[(1, 3, 10, 10), float32]");
  // ceil_mode: (4 - 3) / 2 rounds up to 1, plus 1.
  EXPECT_EQ(
      Infer("nn.avg_pool2d", {F32({1, 1, 4, 4})},
            {{"pool_size", IntArray({3, 3})}, {"strides", IntArray({2, 2})}, {"ceil_mode", true}}),
      "Tensor[(1, 1, 2, 2), float32]");
  // ceil_mode with end padding 2: ceil((5 + 2 - 3) / 3) + 1 = 3, but the third
  // window would start at 6, inside the end padding, so it is dropped: 2.
  EXPECT_EQ(Infer("nn.max_pool1d", {F32({1, 1, 5})},
                  {{"pool_size", IntArray({3})},
                   {"strides", IntArray({3})},
                   {"padding", IntArray({0, 2})},
                   {"ceil_mode", true}}),
            "Tensor[(1, 1, 2), float32]");
  // Dilated window 2 -> 3: 4 - 3 + 1 = 2.
  EXPECT_EQ(Infer("nn.max_pool2d", {F32({1, 1, 4, 4})},
                  {{"pool_size", IntArray({2, 2})}, {"dilation", IntArray({2, 2})}}),
            "Tensor[(1, 1, 2, 2), float32]");
  EXPECT_EQ(Infer("nn.max_pool3d", {F32({N(), S(3), S(8), S(8), S(8)})},
                  {{"pool_size", IntArray({2, 2, 2})}, {"strides", IntArray({2, 2, 2})}}),
            "Tensor[(N, 3, 4, 4, 4), float32]");
  // Max pooling takes integers; averaging needs floats.
  EXPECT_EQ(Infer("nn.max_pool2d", {MakeTensorType({1, 1, 5, 5}, DataType::kUInt8)},
                  {{"pool_size", IntArray({5, 5})}, {"padding", IntArray({2, 2})}}),
            "Tensor[(1, 1, 5, 5), uint8]");
  EXPECT_EQ(Infer("nn.avg_pool2d", {MakeTensorType({1, 1, 5, 5}, DataType::kUInt8)},
                  {{"pool_size", IntArray({2, 2})}}),
            "error: input has dtype uint8, expected a float dtype");
  EXPECT_EQ(Infer("nn.max_pool2d", {F32({1, 1, 2, 2})}, {{"pool_size", IntArray({3, 3})}}),
            "error: pool window 3x3 is larger than the padded input 2x2");
  EXPECT_EQ(Infer("nn.max_pool2d", {F32({1, 1, 8, 8})},
                  {{"pool_size", IntArray({2, 2})}, {"padding", IntArray({2, 2})}}),
            "error: padding 2+2 of spatial dim 0 must be smaller than the pool window 2 (a "
            "window could see only padding)");
  EXPECT_EQ(Infer("nn.max_pool2d", {F32({1, 1, 8, 8})}),
            "error: operator nn.max_pool2d requires attribute 'pool_size' (int array)");
  EXPECT_EQ(Infer("nn.global_avg_pool2d", {F32({N(), S(64), S(7), S(7)})}),
            "Tensor[(N, 64, 1, 1), float32]");
  EXPECT_EQ(Infer("nn.global_max_pool1d", {F32({2, 5, 9})}), "Tensor[(2, 5, 1), float32]");
}

TEST(NnOpsTest, DenseAndMatmul) {
  EXPECT_EQ(Infer("nn.dense", {F32({N(), S(128)}), F32({10, 128})}), "Tensor[(N, 10), float32]");
  EXPECT_EQ(Infer("nn.dense", {F32({2, 7, 64}), F32({32, 64})}), "Tensor[(2, 7, 32), float32]");
  EXPECT_EQ(Infer("nn.dense", {F32({4, 100}), F32({10, 128})}),
            "error: input has 100 features (last dim), the weight expects 128 (dim 1 of (10, "
            "128))");
  // Batch dims (2, 1) and (5) broadcast to (2, 5).
  EXPECT_EQ(Infer("nn.matmul", {F32({2, 1, 3, 4}), F32({5, 4, 6})}),
            "Tensor[(2, 5, 3, 6), float32]");
  // numpy's 1-D promotion: the added dim is removed again.
  EXPECT_EQ(Infer("nn.matmul", {F32({4}), F32({4})}), "Tensor[(), float32]");
  EXPECT_EQ(Infer("nn.matmul", {F32({3, 4}), F32({4})}), "Tensor[(3), float32]");
  EXPECT_EQ(Infer("nn.matmul", {F32({4}), F32({2, 4, 5})}), "Tensor[(2, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {F32({4, 3}), F32({5, 4})},
                  {{"transpose_a", true}, {"transpose_b", true}}),
            "Tensor[(3, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {F32({N("B"), S(3), S(4)}), F32({4, 6})}),
            "Tensor[(B, 3, 6), float32]");
  EXPECT_EQ(Infer("nn.matmul", {F32({3, 4}), F32({5, 3})}),
            "error: inner dims differ: a (3, 4) and b (5, 3) contract 4 with 5");
  EXPECT_EQ(Infer("nn.matmul", {F32({2, 3, 4}), F32({3, 4, 5})}),
            "error: batch dims: shapes (2) and (3) do not broadcast (dim 0: 2 vs 3)");
}

TEST(NnOpsTest, BiasAddAndNormalizations) {
  EXPECT_EQ(Infer("nn.bias_add", {F32({N(), S(8), S(4), S(4)}), F32({8})}),
            "Tensor[(N, 8, 4, 4), float32]");
  EXPECT_EQ(Infer("nn.bias_add", {F32({1, 8, 4, 4}), F32({4})}),
            "error: bias must have shape (8) (the extent of axis 1 of the input), got (4)");
  std::vector<Type> bn = {F32({N(), S(3), S(4), S(4)}), F32({3}), F32({3}), F32({3}), F32({3})};
  EXPECT_EQ(Infer("nn.batch_norm", bn, {{"epsilon", 1e-3}}), "Tensor[(N, 3, 4, 4), float32]");
  bn[4] = F32({4});
  EXPECT_EQ(Infer("nn.batch_norm", bn),
            "error: moving_var must have shape (3) (the extent of axis 1 of the input), got (4)");
  EXPECT_EQ(Infer("nn.instance_norm", {F32({2, 3, 4, 5}), F32({3}), F32({3})}),
            "Tensor[(2, 3, 4, 5), float32]");
  // Layer norm over the dims from axis on: gamma broadcasts to them.
  EXPECT_EQ(Infer("nn.layer_norm", {F32({2, 5, 8}), F32({8}), F32({8})}),
            "Tensor[(2, 5, 8), float32]");
  EXPECT_EQ(Infer("nn.layer_norm", {F32({2, 5, 8}), F32({5, 8})}, {{"axis", 1}}),
            "Tensor[(2, 5, 8), float32]");
  EXPECT_EQ(Infer("nn.layer_norm", {F32({2, 5, 8}), F32({4})}),
            "error: gamma of shape (4) does not broadcast to the normalized dims (8)");
  EXPECT_EQ(Infer("nn.lrn", {F32({5, 5, 5, 5})}, {{"size", 3}}), "Tensor[(5, 5, 5, 5), float32]");
  EXPECT_EQ(Infer("nn.lrn", {F32({5, 5, 5, 5})}),
            "error: operator nn.lrn requires attribute 'size' (int)");
  EXPECT_EQ(Infer("nn.softmax", {F32({2, 3})}, {{"axis", 2}}),
            "error: axis 2 is out of range for rank 2 (expected -2 to 1)");
  EXPECT_EQ(Infer("nn.log_softmax", {MakeTensorType({2, 3}, DataType::kInt64)}),
            "error: input has dtype int64, expected a float dtype");
}

TEST(NnOpsTest, PadDepthToSpaceAndResize) {
  Type zero = F32(std::vector<Dim>{});
  // Begins (0, 0, 1, 2), ends (0, 0, 3, 4): 4 + 1 + 3 = 8, 5 + 2 + 4 = 11.
  EXPECT_EQ(Infer("nn.pad", {F32({1, 3, 4, 5}), zero},
                  {{"pad_width", IntArray({0, 0, 1, 2, 0, 0, 3, 4})}}),
            "Tensor[(1, 3, 8, 11), float32]");
  // Negative padding crops; unpadded symbolic dims keep their names.
  EXPECT_EQ(Infer("nn.pad", {F32({N(), S(6)}), zero}, {{"pad_width", IntArray({0, -1, 0, -2})}}),
            "Tensor[(N, 3), float32]");
  EXPECT_EQ(Infer("nn.pad", {F32({1, 3}), zero},
                  {{"pad_width", IntArray({0, 3, 0, 0})}, {"pad_mode", "reflect"}}),
            "error: reflect padding 3+0 of dim 1 must be smaller than its 3 elements");
  EXPECT_EQ(Infer("nn.pad", {F32({1, 3}), zero}, {{"pad_width", IntArray({0, 1})}}),
            "error: pad_width has 2 values, expected 4 (begin and end for each of 2 dims)");
  EXPECT_EQ(Infer("nn.pad", {F32({1, 3}), zero},
                  {{"pad_width", IntArray({0, 0, 0, 0})}, {"pad_mode", "wrap"}}),
            "error: operator nn.pad attribute 'pad_mode': 'wrap' is not one of constant, edge, "
            "reflect");
  EXPECT_EQ(Infer("nn.depth_to_space", {F32({2, 8, 3, 3})}, {{"block_size", 2}}),
            "Tensor[(2, 2, 6, 6), float32]");
  EXPECT_EQ(Infer("nn.space_to_depth", {F32({2, 2, 6, 6})}, {{"block_size", 2}}),
            "Tensor[(2, 8, 3, 3), float32]");
  EXPECT_EQ(Infer("nn.depth_to_space", {F32({2, 6, 3, 3})}, {{"block_size", 2}}),
            "error: channels 6 are not divisible by block_size^2 = 4");
  EXPECT_EQ(Infer("nn.space_to_depth", {F32({1, 1, 5, 6})}, {{"block_size", 2}}),
            "error: spatial dim 2 (5) is not divisible by block_size 2");
  EXPECT_EQ(Infer("image.resize2d", {F32({1, 3, 4, 4})}, {{"size", IntArray({8, 6})}}),
            "Tensor[(1, 3, 8, 6), float32]");
  // Scales on a symbolic dim: the output extent is known only at run time.
  EXPECT_EQ(Infer("image.resize2d", {F32({S(1), S(3), N("H"), S(5)})},
                  {{"size", IntArray({-1, -1})}, {"scales", AttrValue::Array{2.0, 1.5}}}),
            "Tensor[(1, 3, ?, 7), float32]");
  EXPECT_EQ(Infer("image.resize2d", {F32({1, 3, 4, 4})},
                  {{"size", IntArray({8, 8})}, {"method", "bicubic"}}),
            "error: operator image.resize2d attribute 'method': 'bicubic' is not one of "
            "nearest_neighbor, linear, cubic");
}

TEST(NnOpsTest, FusionPatterns) {
  const OpRegistry& registry = OpRegistry::Global();
  for (const char* op : {"nn.conv2d", "nn.conv2d_transpose", "nn.dense", "nn.matmul",
                         "nn.max_pool2d", "nn.global_avg_pool2d"}) {
    ASSERT_NE(registry.Find(op), nullptr) << op;
    EXPECT_EQ(registry.Find(op)->pattern, OpPattern::kOutElementwiseFusable) << op;
  }
  for (const char* op : {"nn.pad", "nn.depth_to_space", "image.resize2d"}) {
    EXPECT_EQ(registry.Find(op)->pattern, OpPattern::kInjective) << op;
  }
  EXPECT_EQ(registry.Find("nn.bias_add")->pattern, OpPattern::kBroadcast);
  EXPECT_EQ(registry.Find("nn.softmax")->pattern, OpPattern::kOpaque);
  EXPECT_EQ(registry.Find("nn.batch_norm")->pattern, OpPattern::kOpaque);
}

}  // namespace
}  // namespace kiln
