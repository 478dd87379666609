// Operands that decide a shape and are known only at run time (graph inputs here), compiled to
// the shape the model declares and checked when the model runs (shape_guards.h): the right
// operand gives the right values on both backends, a wrong one fails the run on both (the
// interpreter names the node, native code returns KILN_ERROR_SHAPE_MISMATCH), and a model that
// declares nothing gets a compile error saying what to give. Expected values worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

loop::HostTensor Ints(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kInt64, std::move(shape), values);
}
loop::HostTensor Floats(std::vector<int64_t> shape, std::vector<double> values) {
  return loop::HostTensor::FromDoubles(DataType::kFloat32, std::move(shape), values);
}

std::string ReshapeModel(bool declared) {
  OnnxModelBuilder b(14);
  b.Input("x", {2, 3}).Input("shape", {3}, onnx::TensorProto::INT64);
  if (declared) {
    b.Output("y", {3, 1, 2});
  } else {
    b.Output("y");
  }
  b.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  return b.Bytes();
}

TEST(DeclaredShapeTest, ReshapeToTheDeclaredShapeChecksItsShapeInput) {
  loop::HostTensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  // [3, 1, 2] and [-1, 1, 2] (the -1 inferred as 3) both give the declared shape.
  EXPECT_THAT(RunAll(ReshapeModel(true), {x, Ints({3}, {3, 1, 2})})[0],
              ElementsAreArray({1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(RunAll(ReshapeModel(true), {x, Ints({3}, {-1, 1, 2})})[0],
              ElementsAreArray({1, 2, 3, 4, 5, 6}));
  // [2, 1, 3] has the same elements in another shape; two -1s are never valid.
  for (const loop::HostTensor& wrong : {Ints({3}, {2, 1, 3}), Ints({3}, {-1, -1, 2})}) {
    std::vector<absl::Status> failures = RunFailures(ReshapeModel(true), {x, wrong});
    ASSERT_EQ(failures.size(), 2u);
    EXPECT_THAT(
        failures[0].message(),
        HasSubstr("ONNX node 'reshape' (#0, Reshape): input 1 must give the shape [3, 1, 2]"));
    EXPECT_THAT(failures[1].message(), HasSubstr("KILN_ERROR_SHAPE_MISMATCH"));
  }
}

TEST(DeclaredShapeTest, AnUndeclaredShapeIsACompileErrorSayingWhatToGive) {
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(ReshapeModel(false), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("input 1 (shape) decides the shape of output 0, but it is known only at "
                        "run time and the model does not declare a static shape for that output"));
}

TEST(DeclaredShapeTest, UnsqueezeAxesAreCheckedAtRunTime) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 3}).Input("axes", {1}, onnx::TensorProto::INT64).Output("y", {2, 3, 1});
  b.Node("Unsqueeze", {"x", "axes"}, {"y"}, "unsqueeze");
  loop::HostTensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(RunAll(b.Bytes(), {x, Ints({1}, {2})})[0], ElementsAreArray({1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, Ints({1}, {-1})})[0], ElementsAreArray({1, 2, 3, 4, 5, 6}));
  // Axis 0 would give [1, 2, 3].
  EXPECT_THAT(RunFailures(b.Bytes(), {x, Ints({1}, {0})})[0].message(),
              HasSubstr("input 1 must list axes that give the shape [2, 3, 1]"));
}

TEST(DeclaredShapeTest, TopKTakesKFromTheDeclaredOutputs) {
  OnnxModelBuilder b(11);
  b.Input("x", {5}).Input("k", {1}, onnx::TensorProto::INT64);
  b.Output("values", {2}).Output("indices", {2}, onnx::TensorProto::INT64);
  b.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  loop::HostTensor x = Floats({5}, {3, 1, 4, 1, 5});
  std::vector<std::vector<double>> out = RunAll(b.Bytes(), {x, Ints({1}, {2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], ElementsAreArray({5, 4}));
  EXPECT_THAT(out[1], ElementsAreArray({4, 2}));
  EXPECT_THAT(RunFailures(b.Bytes(), {x, Ints({1}, {3})})[0].message(), HasSubstr("be k = 2"));
}

TEST(DeclaredShapeTest, RangeBoundsAreCheckedAgainstTheDeclaredLength) {
  OnnxModelBuilder b(11);
  b.Input("start", {}, onnx::TensorProto::INT64)
      .Input("limit", {}, onnx::TensorProto::INT64)
      .Input("delta", {}, onnx::TensorProto::INT64)
      .Output("y", {3}, onnx::TensorProto::INT64);
  b.Node("Range", {"start", "limit", "delta"}, {"y"}, "range");
  EXPECT_THAT(RunAll(b.Bytes(), {Ints({}, {1}), Ints({}, {7}), Ints({}, {2})})[0],
              ElementsAreArray({1, 3, 5}));
  // ceil((4 - 10) / -2) = 3 elements, descending.
  EXPECT_THAT(RunAll(b.Bytes(), {Ints({}, {10}), Ints({}, {4}), Ints({}, {-2})})[0],
              ElementsAreArray({10, 8, 6}));
  // ceil((8 - 1) / 2) = 4 elements.
  EXPECT_THAT(RunFailures(b.Bytes(), {Ints({}, {1}), Ints({}, {8}), Ints({}, {2})})[0].message(),
              HasSubstr("start, limit and delta must give 3 elements"));
}

TEST(DeclaredShapeTest, ALengthReachesRangeBackwardThroughElementwiseOps) {
  // Range's output is declared nowhere; the declared output [3] of Neg(Mul(range, 2)) tells it.
  OnnxModelBuilder b(11);
  b.Input("start", {}, onnx::TensorProto::INT64)
      .Input("limit", {}, onnx::TensorProto::INT64)
      .Input("delta", {}, onnx::TensorProto::INT64)
      .Input("two", {1}, onnx::TensorProto::INT64)
      .Output("y", {3}, onnx::TensorProto::INT64);
  b.Node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  b.Node("Mul", {"r", "two"}, {"doubled"}, "double");
  b.Node("Neg", {"doubled"}, {"y"}, "negate");
  loop::HostTensor two = Ints({1}, {2});
  EXPECT_THAT(RunAll(b.Bytes(), {Ints({}, {1}), Ints({}, {7}), Ints({}, {2}), two})[0],
              ElementsAreArray({-2, -6, -10}));
  EXPECT_THAT(
      RunFailures(b.Bytes(), {Ints({}, {0}), Ints({}, {4}), Ints({}, {1}), two})[0].message(),
      HasSubstr("start, limit and delta must give 3 elements"));
}

TEST(DeclaredShapeTest, NonZeroCountIsTheDeclaredOne) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 2}).Output("y", {2, 2}, onnx::TensorProto::INT64);
  b.Node("NonZero", {"x"}, {"y"}, "nonzero");
  // Nonzeros at (0, 0) and (1, 1): row indices then column indices.
  EXPECT_THAT(RunAll(b.Bytes(), {Floats({2, 2}, {1, 0, 0, 3})})[0], ElementsAreArray({0, 1, 0, 1}));
  EXPECT_THAT(RunFailures(b.Bytes(), {Floats({2, 2}, {1, 1, 0, 3})})[0].message(),
              HasSubstr("input 0 must hold 2 nonzero elements"));
}

TEST(DeclaredShapeTest, UniqueCountIsTheDeclaredOne) {
  OnnxModelBuilder b(11);
  b.Input("x", {5})
      .Output("y", {3})
      .Output("indices", {3}, onnx::TensorProto::INT64)
      .Output("inverse", {5}, onnx::TensorProto::INT64)
      .Output("counts", {3}, onnx::TensorProto::INT64);
  b.Node("Unique", {"x"}, {"y", "indices", "inverse", "counts"}, "unique");
  std::vector<std::vector<double>> out = RunAll(b.Bytes(), {Floats({5}, {2, 1, 2, 3, 1})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(out[0], ElementsAreArray({1, 2, 3}));
  EXPECT_THAT(out[1], ElementsAreArray({1, 0, 3}));
  EXPECT_THAT(out[2], ElementsAreArray({1, 0, 1, 2, 0}));
  EXPECT_THAT(out[3], ElementsAreArray({2, 2, 1}));
  EXPECT_THAT(RunFailures(b.Bytes(), {Floats({5}, {1, 1, 1, 1, 1})})[0].message(),
              HasSubstr("input 0 must hold 3 unique slices"));
}

// ReduceSum of x (3, 2, 2) = 0..11 without keepdims to the declared (3, 2): axes 1 and 2 both
// give it, so both reductions are compiled and the run's axes pick one. By hand: over axis 1,
// x[i, 0, k] + x[i, 1, k] = {2, 4, 10, 12, 18, 20}; over axis 2, {1, 5, 9, 13, 17, 21}; axes
// [0] would give (2, 2) and fails the run.
TEST(DeclaredShapeTest, AReductionWhoseDeclaredShapeLeavesItsAxesOpenTakesThemAtRunTime) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 2, 2}).Input("axes", {1}, onnx::TensorProto::INT64).Output("y", {3, 2});
  auto& reduce = b.Node("ReduceSum", {"x", "axes"}, {"y"}, "total");
  OnnxModelBuilder::IntAttr(reduce, "keepdims", 0);
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  loop::HostTensor x = Floats({3, 2, 2}, values);
  EXPECT_THAT(RunAll(b.Bytes(), {x, Ints({1}, {1})})[0], ElementsAreArray({2, 4, 10, 12, 18, 20}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, Ints({1}, {2})})[0], ElementsAreArray({1, 5, 9, 13, 17, 21}));
  EXPECT_THAT(RunAll(b.Bytes(), {x, Ints({1}, {-1})})[0], ElementsAreArray({1, 5, 9, 13, 17, 21}));
  std::vector<absl::Status> failures = RunFailures(b.Bytes(), {x, Ints({1}, {0})});
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), HasSubstr("ONNX node 'total' (#0, ReduceSum)"));
  EXPECT_THAT(failures[1].message(), HasSubstr("KILN_ERROR_SHAPE_MISMATCH"));
}

}  // namespace
}  // namespace kiln::driver
