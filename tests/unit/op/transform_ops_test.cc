// Type relations of the transform op family against shapes worked out by
// hand: reshape with an inferred extent (symbolic names kept when provable),
// permutations, squeeze and expand_dims, broadcasting, tiling, concatenation
// and splitting, ONNX-style clamped slicing, the gathers and scatters, and the
// data-dependent ops whose extents are symbolic. Every error says what is
// wrong.
#include "engine/op/transform_ops.h"

#include <gtest/gtest.h>

#include <climits>

#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"

namespace kiln {
namespace {

Type T(std::vector<Dim> dims, DataType dtype = DataType::kFloat32) {
  return MakeTensorType(std::move(dims), dtype);
}
Type F32(std::initializer_list<int64_t> dims) { return MakeTensorType(dims, DataType::kFloat32); }
Type I64(std::initializer_list<int64_t> dims) { return MakeTensorType(dims, DataType::kInt64); }
Dim N(const char* name = "N") { return Dim::Symbolic(name); }
Dim S(int64_t v) { return Dim::Static(v); }

std::string Infer(const std::string& op, std::vector<Type> args,
                  std::vector<AttrsNode::Field> attrs = {}) {
  const OpEntry* entry = OpRegistry::Global().Find(op);
  if (entry == nullptr) return "no such op " + op;
  auto type = InferCallType(*entry, args, MakeAttrs(std::move(attrs)));
  if (!type.ok()) return "error: " + std::string(type.status().message());
  return TypeToString(*type);
}

TEST(TransformOpsTest, LayoutTransform) {
  auto layouts = [](const char* from, const char* to) {
    return std::vector<AttrsNode::Field>{{"src_layout", std::string(from)},
                                         {"dst_layout", std::string(to)}};
  };
  EXPECT_EQ(Infer("layout_transform", {F32({1, 32, 7, 5})}, layouts("NCHW", "NCHW8c")),
            "Tensor[(1, 4, 7, 5, 8), float32]");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 4, 7, 5, 8})}, layouts("NCHW8c", "NCHW")),
            "Tensor[(1, 32, 7, 5), float32]");
  // Re-blocking and weights blocked on both channel axes.
  EXPECT_EQ(Infer("layout_transform", {F32({1, 4, 7, 5, 8})}, layouts("NCHW8c", "NCHW16c")),
            "Tensor[(1, 2, 7, 5, 16), float32]");
  EXPECT_EQ(Infer("layout_transform", {F32({32, 16, 3, 3})}, layouts("OIHW", "OIHW8i4o")),
            "Tensor[(8, 2, 3, 3, 8, 4), float32]");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7, 5})}, layouts("NCHW", "NCHW8c")),
            "error: axis 'C' of extent 12 is not a multiple of the block size 8 of layout NCHW8c");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7})}, layouts("NCHW", "NCHW4c")),
            "error: a rank-3 tensor is not in layout NCHW (rank 4)");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7, 5})}, layouts("NCHW", "NCDW4c")),
            "error: layouts NCHW and NCDW4c differ in axis 'D'");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7, 5})}, layouts("NCHW", "NCHW4C")),
            "error: layout \"NCHW4C\": primal axis 'C' has a block size");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7, 5})}, layouts("NCHW", "NCHW4x")),
            "error: layout \"NCHW4x\": sub-axis 'x' without its primal axis");
  EXPECT_EQ(Infer("layout_transform", {F32({1, 12, 7, 5})}, layouts("NCHW", "NCHWc")),
            "error: layout \"NCHWc\": sub-axis 'c' needs a block size > 0");
  EXPECT_EQ(Infer("layout_transform", {T({N(), S(8), S(1), S(1)})}, layouts("NCHW", "NCHW8c")),
            "error: layout_transform needs a static shape, got (N, 8, 1, 1)");
}

TEST(TransformOpsTest, Reshape) {
  EXPECT_EQ(Infer("reshape", {F32({2, 3, 4})}, {{"newshape", IntArray({6, 4})}}),
            "Tensor[(6, 4), float32]");
  EXPECT_EQ(Infer("reshape", {F32({2, 3, 4})}, {{"newshape", IntArray({-1, 4})}}),
            "Tensor[(6, 4), float32]");
  EXPECT_EQ(Infer("reshape", {F32({0, 3})}, {{"newshape", IntArray({3, 0})}}),
            "Tensor[(3, 0), float32]");
  // The -1 stands for exactly the one symbolic dim: its name is kept.
  EXPECT_EQ(Infer("reshape", {T({N(), S(3), S(4)})}, {{"newshape", IntArray({-1, 12})}}),
            "Tensor[(N, 12), float32]");
  // Here it is 3N: symbolic, unnamed.
  EXPECT_EQ(Infer("reshape", {T({N(), S(12)})}, {{"newshape", IntArray({-1, 4})}}),
            "Tensor[(?, 4), float32]");
}

TEST(TransformOpsTest, ReshapeErrors) {
  EXPECT_EQ(Infer("reshape", {F32({2, 3, 4})}, {{"newshape", IntArray({5, 5})}}),
            "error: cannot reshape (2, 3, 4) (24 elements) to (5, 5) (25 elements)");
  EXPECT_EQ(Infer("reshape", {F32({2, 3, 4})}, {{"newshape", IntArray({-1, 5})}}),
            "error: cannot reshape (2, 3, 4) (24 elements) to (?, 5): the -1 extent cannot be "
            "inferred from the other extents (5 elements)");
  EXPECT_EQ(Infer("reshape", {F32({2})}, {{"newshape", IntArray({-1, -1})}}),
            "error: operator reshape attribute 'newshape': at most one extent may be -1");
  EXPECT_EQ(Infer("reshape", {F32({2})}, {{"newshape", IntArray({-2})}}),
            "error: operator reshape attribute 'newshape': extent -2 is invalid (expected >= 0, "
            "or -1 to infer)");
  EXPECT_EQ(Infer("reshape", {F32({2})}),
            "error: operator reshape requires attribute 'newshape' (int array)");
}

TEST(TransformOpsTest, TransposeSqueezeExpandDims) {
  EXPECT_EQ(Infer("transpose", {F32({2, 3, 4})}, {{"axes", IntArray({2, 0, 1})}}),
            "Tensor[(4, 2, 3), float32]");
  EXPECT_EQ(Infer("transpose", {T({N(), S(3), S(4)})}), "Tensor[(4, 3, N), float32]");
  EXPECT_EQ(Infer("transpose", {F32({2, 3, 4})}, {{"axes", IntArray({0, 0, 1})}}),
            "error: axes is not a permutation: axis 0 appears twice");
  EXPECT_EQ(Infer("transpose", {F32({2, 3})}, {{"axes", IntArray({0, 1, 2})}}),
            "error: axes has 3 entries for an input of rank 2");

  // An empty list removes static 1s only: a symbolic dim may not be 1.
  EXPECT_EQ(Infer("squeeze", {T({S(1), S(3), S(1), N()})}), "Tensor[(3, N), float32]");
  EXPECT_EQ(Infer("squeeze", {T({S(1), S(3), S(1), N()})}, {{"axis", IntArray({-4})}}),
            "Tensor[(3, 1, N), float32]");
  EXPECT_EQ(Infer("squeeze", {T({S(1), S(3), S(1), N()})}, {{"axis", IntArray({3})}}),
            "Tensor[(1, 3, 1), float32]");
  EXPECT_EQ(Infer("squeeze", {F32({1, 3})}, {{"axis", IntArray({1})}}),
            "error: cannot squeeze axis 1 of extent 3 (must be 1)");

  EXPECT_EQ(Infer("expand_dims", {F32({2, 3})}, {{"axis", 1}, {"num_newaxis", 2}}),
            "Tensor[(2, 1, 1, 3), float32]");
  EXPECT_EQ(Infer("expand_dims", {F32({2, 3})}, {{"axis", -1}}), "Tensor[(2, 3, 1), float32]");
  EXPECT_EQ(Infer("expand_dims", {F32({2, 3})}, {{"axis", 3}}),
            "error: axis 3 is out of range for rank 3 (expected -3 to 2)");
  // Four billion new axes are refused before any is made (once: gigabytes).
  EXPECT_EQ(Infer("expand_dims", {F32({2, 3})}, {{"axis", 0}, {"num_newaxis", 4000000000}}),
            "error: expand_dims by 4000000000 axes would give a rank over the limit of 32");
  EXPECT_EQ(Infer("expand_dims", {F32({2, 3})}, {{"axis", 0}, {"num_newaxis", 30}})
                .substr(0, 12),
            "Tensor[(1, 1");
}

TEST(TransformOpsTest, NoResultMayExceedTheRankLimit) {
  EXPECT_EQ(Infer("reshape", {F32({1})}, {{"newshape", IntArray(std::vector<int64_t>(33, 1))}}),
            "error: reshape would give a result of rank 33, more than the limit of 32");
}

TEST(TransformOpsTest, BroadcastToAndTile) {
  EXPECT_EQ(Infer("broadcast_to", {F32({3, 1})}, {{"shape", ShapeValue{{S(2), S(3), S(4)}}}}),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("broadcast_to", {T({N(), S(1)})}, {{"shape", ShapeValue{{N(), S(8)}}}}),
            "Tensor[(N, 8), float32]");
  EXPECT_EQ(Infer("broadcast_to", {F32({3, 2})}, {{"shape", ShapeValue{{S(3), S(4)}}}}),
            "error: cannot broadcast (3, 2) to (3, 4) (dim 1: 2 vs 4)");
  EXPECT_EQ(Infer("broadcast_to", {F32({2, 3})}, {{"shape", IntArray({3})}}),
            "error: cannot broadcast (2, 3) to the lower-rank shape (3)");

  EXPECT_EQ(Infer("tile", {T({S(2), N()})}, {{"reps", IntArray({2, 1})}}),
            "Tensor[(4, N), float32]");
  EXPECT_EQ(Infer("tile", {T({S(2), N()})}, {{"reps", IntArray({3})}}), "Tensor[(2, ?), float32]");
  // numpy.tile: a longer reps adds leading axes.
  EXPECT_EQ(Infer("tile", {F32({2, 3})}, {{"reps", IntArray({2, 1, 0})}}),
            "Tensor[(2, 2, 0), float32]");
  EXPECT_EQ(Infer("tile", {F32({2})}, {{"reps", IntArray({-1})}}),
            "error: operator tile attribute 'reps': every element must be >= 0");
}

TEST(TransformOpsTest, Concatenate) {
  EXPECT_EQ(Infer("concatenate", {F32({2, 3}), F32({2, 5}), F32({2, 1})}, {{"axis", 1}}),
            "Tensor[(2, 9), float32]");
  EXPECT_EQ(Infer("concatenate", {T({N(), S(3)}), T({S(4), S(3)})}), "Tensor[(?, 3), float32]");
  // A symbolic dim outside the axis agrees with a static one.
  EXPECT_EQ(Infer("concatenate", {T({N(), S(3)}), F32({4, 2})}, {{"axis", -1}}),
            "Tensor[(4, 5), float32]");
  EXPECT_EQ(Infer("concatenate", {F32({2, 3}), F32({3, 3})}, {{"axis", 1}}),
            "error: argument 1 has shape (3, 3), which differs from (2, 3) outside the "
            "concatenation axis 1");
  EXPECT_EQ(Infer("concatenate", {F32({2, 3}), I64({2, 3})}),
            "error: argument 1 has dtype int64, expected float32");
  EXPECT_EQ(Infer("concatenate", {F32({2, 3}), F32({2})}),
            "error: argument 1 has rank 1, expected 2 like argument 0");
  EXPECT_EQ(Infer("concatenate", {F32({2, 3})}, {{"axis", 2}}),
            "error: axis 2 is out of range for rank 2 (expected -2 to 1)");
}

TEST(TransformOpsTest, Split) {
  EXPECT_EQ(Infer("split", {F32({6, 4})}, {{"indices_or_sections", 3}}),
            "(Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(Infer("split", {F32({6, 4})}, {{"indices_or_sections", IntArray({1, 4})}}),
            "(Tensor[(1, 4), float32], Tensor[(3, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(Infer("split", {T({S(4), N()})}, {{"indices_or_sections", IntArray({2})}, {"axis", 1}}),
            "(Tensor[(4, 2), float32], Tensor[(4, ?), float32])");
  EXPECT_EQ(Infer("split", {F32({7})}, {{"indices_or_sections", 2}}),
            "error: axis 0 of extent 7 does not split into 2 equal parts");
  EXPECT_EQ(Infer("split", {F32({7})}, {{"indices_or_sections", IntArray({3, 9})}}),
            "error: split index 9 is past the extent 7 of axis 0");
  EXPECT_EQ(Infer("split", {F32({7})}, {{"indices_or_sections", IntArray({3, 1})}}),
            "error: operator split attribute 'indices_or_sections': indices must be "
            "non-decreasing and >= 0");
  EXPECT_EQ(Infer("split", {F32({7})}, {{"indices_or_sections", 0}}),
            "error: operator split attribute 'indices_or_sections': sections must be >= 1");
}

TEST(TransformOpsTest, StridedSliceClampsLikeOnnxSlice) {
  // x[1:]: INT64_MAX means "to the end".
  EXPECT_EQ(Infer("strided_slice", {F32({10, 5})},
                  {{"begin", IntArray({1})}, {"end", IntArray({INT64_MAX})}}),
            "Tensor[(9, 5), float32]");
  // ONNX's test_slice_neg_steps: (20, 10, 5), starts (20, 10, 4), ends (0, 0, 1),
  // steps (-1, -3, -2): starts clamp to (19, 9, 4); extents ceil(19/1) = 19,
  // ceil(9/3) = 3, ceil(3/2) = 2.
  EXPECT_EQ(Infer("strided_slice", {F32({20, 10, 5})},
                  {{"begin", IntArray({20, 10, 4})},
                   {"end", IntArray({0, 0, 1})},
                   {"strides", IntArray({-1, -3, -2})},
                   {"axes", IntArray({0, 1, 2})}}),
            "Tensor[(19, 3, 2), float32]");
  // Reversing all of an axis: INT64_MIN clamps to -1.
  EXPECT_EQ(
      Infer(
          "strided_slice", {F32({4})},
          {{"begin", IntArray({-1})}, {"end", IntArray({INT64_MIN})}, {"strides", IntArray({-1})}}),
      "Tensor[(4), float32]");
  // Bounds past the end give an empty axis; axes may be negative.
  EXPECT_EQ(Infer("strided_slice", {F32({3, 4})},
                  {{"begin", IntArray({10})}, {"end", IntArray({20})}, {"axes", IntArray({-1})}}),
            "Tensor[(3, 0), float32]");
  // A full slice keeps a symbol; anything else makes it unknown.
  EXPECT_EQ(Infer("strided_slice", {T({N(), S(8)})},
                  {{"begin", IntArray({0, 2})}, {"end", IntArray({INT64_MAX, -2})}}),
            "Tensor[(N, 4), float32]");
  EXPECT_EQ(Infer("strided_slice", {T({N(), S(8)})},
                  {{"begin", IntArray({1})}, {"end", IntArray({INT64_MAX})}}),
            "Tensor[(?, 8), float32]");
  EXPECT_EQ(Infer("strided_slice", {F32({4})},
                  {{"begin", IntArray({0})}, {"end", IntArray({4})}, {"strides", IntArray({0})}}),
            "error: strides must not be 0");
  EXPECT_EQ(
      Infer("strided_slice", {F32({4, 4})},
            {{"begin", IntArray({0, 0})}, {"end", IntArray({1, 1})}, {"axes", IntArray({1, -1})}}),
      "error: axis -1 is sliced twice");
  EXPECT_EQ(
      Infer("strided_slice", {F32({4})}, {{"begin", IntArray({0, 1})}, {"end", IntArray({1})}}),
      "error: begin, end, strides and axes must have one entry per sliced axis (got 2, 1, "
      "0, 0)");
}

TEST(TransformOpsTest, ClampSliceBoundsAndStrides) {
  SliceBounds b = ClampSlice(10, -3, INT64_MAX, 1);
  EXPECT_EQ(b.begin, 7);
  EXPECT_EQ(b.count, 3);
  b = ClampSlice(10, 9, -11, -4);  // 9, 5, 1
  EXPECT_EQ(b.begin, 9);
  EXPECT_EQ(b.count, 3);
  b = ClampSlice(10, 5, 2, 1);
  EXPECT_EQ(b.count, 0);
  b = ClampSlice(0, 0, -1, -1);
  EXPECT_EQ(b.count, 0);
  b = ClampSlice(5, 4, INT64_MIN, INT64_MIN);  // one element: the stride overshoots at once
  EXPECT_EQ(b.count, 1);
}

TEST(TransformOpsTest, Gathers) {
  EXPECT_EQ(Infer("take", {F32({5, 4, 3}), I64({2, 2})}, {{"axis", 1}}),
            "Tensor[(5, 2, 2, 3), float32]");
  EXPECT_EQ(Infer("take", {F32({5, 3}), I64({})}), "Tensor[(3), float32]");
  EXPECT_EQ(Infer("take", {F32({5, 3}), F32({2})}),
            "error: indices has dtype float32, expected an integer dtype");
  EXPECT_EQ(Infer("take", {F32({5, 3}), I64({2})}, {{"axis", 2}}),
            "error: axis 2 is out of range for rank 2 (expected -2 to 1)");

  EXPECT_EQ(Infer("gather_elements", {F32({3, 3}), I64({2, 3})}, {{"axis", 1}}),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("gather_elements", {F32({3, 3}), I64({2})}),
            "error: indices has rank 1, expected the data's rank 2");

  // m = 2 indexes the first two axes: (2, 3) + (4, 5).
  EXPECT_EQ(Infer("gather_nd", {F32({2, 3, 4, 5}), I64({2, 3, 2})}),
            "Tensor[(2, 3, 4, 5), float32]");
  // One batch axis, m = 1: (2) + data.shape[2:] = (2, 4).
  EXPECT_EQ(Infer("gather_nd", {F32({2, 3, 4}), I64({2, 1})}, {{"batch_dims", 1}}),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(Infer("gather_nd", {F32({2, 3}), I64({4, 3})}),
            "error: the last axis of indices has extent 3, expected 1 to 2 (data rank minus "
            "batch_dims)");
  EXPECT_EQ(Infer("gather_nd", {F32({2, 3}), I64({3, 1})}, {{"batch_dims", 1}}),
            "error: batch axis 0 differs: data 2, indices 3");
}

TEST(TransformOpsTest, Scatters) {
  EXPECT_EQ(Infer("scatter_elements", {F32({3, 3}), I64({2, 3}), F32({2, 3})}, {{"axis", 0}}),
            "Tensor[(3, 3), float32]");
  EXPECT_EQ(Infer("scatter_elements", {F32({3, 3}), I64({2, 3}), F32({3, 2})}),
            "error: updates has shape (3, 2), expected the shape of indices (2, 3)");
  EXPECT_EQ(Infer("scatter_elements", {F32({3, 3}), I64({2, 3}), I64({2, 3})}),
            "error: updates has dtype int64, expected float32");
  // updates = indices.shape[:-1] + data.shape[m:] = (2) + (4, 4).
  EXPECT_EQ(Infer("scatter_nd", {F32({4, 4, 4}), I64({2, 1}), F32({2, 4, 4})}),
            "Tensor[(4, 4, 4), float32]");
  EXPECT_EQ(Infer("scatter_nd", {F32({4, 4, 4}), I64({2, 1}), F32({2, 4})}),
            "error: updates has shape (2, 4), expected (2, 4, 4)");
}

TEST(TransformOpsTest, OneHotTopKCumsumTriluEyeLike) {
  Type on = MakeTensorType(std::vector<Dim>{}, DataType::kFloat32);
  EXPECT_EQ(Infer("one_hot", {I64({2, 3}), on, on}, {{"depth", 10}}),
            "Tensor[(2, 3, 10), float32]");
  EXPECT_EQ(Infer("one_hot", {I64({2, 3}), on, on}, {{"depth", 10}, {"axis", 0}}),
            "Tensor[(10, 2, 3), float32]");
  EXPECT_EQ(Infer("one_hot", {I64({2}), on, I64({})}, {{"depth", 4}}),
            "error: off_value has dtype int64, expected float32");
  EXPECT_EQ(Infer("one_hot", {I64({2}), on, on}, {{"depth", 0}}),
            "error: operator one_hot attribute 'depth': must be > 0");

  EXPECT_EQ(Infer("topk", {F32({3, 4})}, {{"k", 2}}),
            "(Tensor[(3, 2), float32], Tensor[(3, 2), int64])");
  EXPECT_EQ(Infer("topk", {T({N(), S(4)})}, {{"k", 1}, {"axis", 0}}),
            "(Tensor[(1, 4), float32], Tensor[(1, 4), int64])");
  EXPECT_EQ(Infer("topk", {F32({3, 4})}, {{"k", 5}}),
            "error: k = 5 exceeds the extent 4 of axis 1");

  EXPECT_EQ(Infer("cumsum", {F32({3, 4})}, {{"axis", 1}, {"exclusive", true}}),
            "Tensor[(3, 4), float32]");
  EXPECT_EQ(Infer("cumsum", {F32({3, 4})}, {{"axis", 2}}),
            "error: axis 2 is out of range for rank 2 (expected -2 to 1)");
  EXPECT_EQ(Infer("trilu", {F32({2, 3, 4})}, {{"upper", false}, {"k", -1}}),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("trilu", {F32({4})}), "error: expected rank >= 2 (matrices), got rank 1");
  EXPECT_EQ(Infer("eye_like", {F32({3, 4})}, {{"dtype", DataType::kInt32}}),
            "Tensor[(3, 4), int32]");
  EXPECT_EQ(Infer("eye_like", {F32({3})}, {{"dtype", DataType::kInt32}}),
            "error: expected rank 2, got rank 1");
}

TEST(TransformOpsTest, DataDependentExtentsAreSymbolic) {
  Type scalar = MakeTensorType(std::vector<Dim>{}, DataType::kInt64);
  EXPECT_EQ(Infer("arange", {scalar, scalar, scalar}), "Tensor[(?), int64]");
  EXPECT_EQ(Infer("arange", {scalar, I64({2}), scalar}),
            "error: limit must be a scalar, got shape (2)");
  EXPECT_EQ(Infer("nonzero", {F32({2, 3})}), "Tensor[(2, ?), int64]");
  EXPECT_EQ(Infer("unique", {F32({3, 3})}, {{"axis", 1}}),
            "(Tensor[(3, ?), float32], Tensor[(?), int64], Tensor[(3), int64], "
            "Tensor[(?), int64])");
  EXPECT_EQ(Infer("compress", {F32({3, 2}), T({S(3)}, DataType::kBool)}),
            "Tensor[(?, 2), float32]");
  EXPECT_EQ(Infer("compress", {F32({3, 2}), I64({3})}),
            "error: condition must be a 1-D bool tensor, got Tensor[(3), int64]");
  for (const char* name : {"arange", "nonzero", "unique", "compress", "topk"}) {
    EXPECT_EQ(OpRegistry::Global().Find(name)->pattern, OpPattern::kOpaque) << name;
  }
}

TEST(TransformOpsTest, ShapeOfSizeReverse) {
  EXPECT_EQ(Infer("shape_of", {T({N(), S(3)})}), "Tensor[(2), int64]");
  EXPECT_EQ(Infer("size", {T({N(), S(3)})}), "Tensor[(), int64]");
  EXPECT_EQ(Infer("reverse", {F32({2, 3})}, {{"axis", -1}}), "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("reverse_sequence", {F32({4, 2, 3}), I64({2})}), "Tensor[(4, 2, 3), float32]");
  EXPECT_EQ(Infer("reverse_sequence", {F32({4, 2, 3}), I64({4})}),
            "error: seq_lengths has shape (4), expected (2) (one length per batch entry)");
  EXPECT_EQ(
      Infer("reverse_sequence", {F32({4, 2}), I64({2})}, {{"seq_axis", 1}, {"batch_axis", -1}}),
      "error: seq_axis and batch_axis must differ");
}

TEST(TransformOpsTest, LayoutOpsAreInjective) {
  for (const char* name :
       {"reshape", "transpose", "squeeze", "expand_dims", "broadcast_to", "tile", "concatenate",
        "split", "strided_slice", "take", "gather_elements", "gather_nd", "one_hot"}) {
    const OpEntry* entry = OpRegistry::Global().Find(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->pattern, OpPattern::kInjective) << name;
  }
  EXPECT_TRUE(OpRegistry::Global().Find("reshape")->non_computational);
}

}  // namespace
}  // namespace kiln
