// Bounded outputs (driver/bounded_outputs.h): NonZero, Compress and Unique whose model declares no
// output shape compile at their static bound and, after a run, are cut to the extent the run
// filled, on both backends. Expected values worked out by hand (NumPy's nonzero, compress and
// unique give the same).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/driver/bounded_outputs.h"
#include "tests/unit/driver/run_all_backends.h"
#include "tests/unit/frontend/onnx_builder.h"

namespace kiln::driver {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

// x = [[0, 1, 0, 2],
//      [3, 0, 0, 4],
//      [0, 0, 0, 5]]: nonzero at (0, 1), (0, 3), (1, 0), (1, 3), (2, 3).
const std::vector<double> kX = {0, 1, 0, 2, 3, 0, 0, 4, 0, 0, 0, 5};

struct Filled {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Each of the model's outputs after a run on `inputs` and the cut, through one backend.
std::vector<Filled> RunAndCut(const CompileResult& compiled,
                              const std::vector<loop::HostTensor>& inputs, bool native) {
  absl::StatusOr<std::vector<loop::HostTensor>> outputs = RunBackendTensors(compiled, inputs, native);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  if (!outputs.ok()) return {};
  absl::Status cut = CutBoundedOutputs(compiled.lowered->bounded_outputs, &*outputs);
  EXPECT_TRUE(cut.ok()) << cut;
  std::vector<Filled> filled;
  for (const loop::HostTensor& t : *outputs) filled.push_back({t.shape, t.ToDoubles()});
  return filled;
}

// Both backends' outputs, checked equal; the interpreter's returned.
std::vector<Filled> RunBoth(const std::string& model, const std::vector<loop::HostTensor>& inputs) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(model);
  if (!compiled.ok()) return {};
  std::vector<Filled> interpreted = RunAndCut(*compiled, inputs, false);
  std::vector<Filled> native = RunAndCut(*compiled, inputs, true);
  EXPECT_EQ(native.size(), interpreted.size());
  for (size_t i = 0; i < std::min(native.size(), interpreted.size()); ++i) {
    EXPECT_EQ(native[i].shape, interpreted[i].shape) << "output " << i;
    EXPECT_EQ(native[i].values, interpreted[i].values) << "output " << i;
  }
  return interpreted;
}

std::string NonZeroModel(bool transposed) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("y");
  b.Node("NonZero", {"x"}, {transposed ? "nz" : "y"}, "nonzero");
  if (transposed) b.Node("Transpose", {"nz"}, {"y"}, "transpose");  // torch.nonzero's export
  return b.Bytes();
}

TEST(BoundedOutputsTest, NonZeroWithoutADeclaredShapeGivesTheFilledColumns) {
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX);
  std::vector<Filled> out = RunBoth(NonZeroModel(false), {x});
  ASSERT_EQ(out.size(), 1u);  // the length output is dropped
  EXPECT_THAT(out[0].shape, ElementsAre(2, 5));
  EXPECT_THAT(out[0].values, ElementsAreArray({0, 0, 1, 1, 2, 1, 3, 0, 3, 3}));

  out = RunBoth(NonZeroModel(true), {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(5, 2));
  EXPECT_THAT(out[0].values, ElementsAreArray({0, 1, 0, 3, 1, 0, 1, 3, 2, 3}));

  // Nothing nonzero: an empty output, and the whole bound when everything is.
  out = RunBoth(NonZeroModel(false), {loop::HostTensor::Zeros(DataType::kFloat32, {3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 0));
  out = RunBoth(NonZeroModel(false),
                {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4},
                                               std::vector<double>(12, 1.0))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 12));
}

TEST(BoundedOutputsTest, TheCompiledModelListsItsBoundAndLengthOutputs) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(NonZeroModel(true));
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(compiled->lowered->bounded_outputs.size(), 1u);
  const lower::BoundedOutput& bounded = compiled->lowered->bounded_outputs[0];
  EXPECT_EQ(bounded.output, 0);
  EXPECT_EQ(bounded.axis, 0);  // the transpose moved NonZero's axis 1 first
  EXPECT_EQ(bounded.length, 1);
  ModelTensors signature = MakeModelTensors(*compiled);
  ASSERT_EQ(signature.outputs.size(), 2u);
  EXPECT_THAT(signature.outputs[0].shape, ElementsAre(12, 2));  // one row per element of x
  EXPECT_TRUE(signature.outputs[1].shape.empty());
  ASSERT_TRUE(compiled->native.has_value());
  EXPECT_THAT(compiled->native->header,
              HasSubstr("output 0 is bounded: a run fills the first n entries of its axis 0, n "
                        "the int64 in output 1"));
}

TEST(BoundedOutputsTest, CompressAndUniqueWithoutDeclaredShapes) {
  OnnxModelBuilder compress(13);
  compress.Input("x", {3, 4}).Input("keep", {3}, onnx::TensorProto::BOOL).Output("y");
  OnnxModelBuilder::IntAttr(compress.Node("Compress", {"x", "keep"}, {"y"}, "compress"), "axis",
                            0);
  std::vector<Filled> out =
      RunBoth(compress.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX),
                                 loop::HostTensor::FromDoubles(DataType::kBool, {3}, {1, 0, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 4));
  EXPECT_THAT(out[0].values, ElementsAreArray({0, 1, 0, 2, 0, 0, 0, 5}));

  // unique([2, 1, 1, 3, 4, 3]) sorted: values 1 2 3 4, first indices 1 0 3 4, inverse
  // 1 0 0 2 3 2 (not bounded: one per input), counts 2 1 2 1.
  OnnxModelBuilder unique(13);
  unique.Input("u", {6}).Output("values").Output("indices").Output("inverse").Output("counts");
  unique.Node("Unique", {"u"}, {"values", "indices", "inverse", "counts"}, "unique");
  out = RunBoth(unique.Bytes(),
                {loop::HostTensor::FromDoubles(DataType::kFloat32, {6}, {2, 1, 1, 3, 4, 3})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(out[0].values, ElementsAreArray({1, 2, 3, 4}));
  EXPECT_THAT(out[1].values, ElementsAreArray({1, 0, 3, 4}));
  EXPECT_THAT(out[2].values, ElementsAreArray({1, 0, 0, 2, 3, 2}));
  EXPECT_THAT(out[3].values, ElementsAreArray({2, 1, 2, 1}));
}

// TopK with K given at run time: both outputs bounded by the axis (5), the first K filled.
// Rows [3, 1, 4, 1, 5] and [9, 2, 6, 5, 3], K = 3: values 5 4 3 | 9 6 5, indices 4 2 0 | 0 2 3.
TEST(BoundedOutputsTest, TopKOfARunTimeKFillsTheFirstKAndRefusesALargerOne) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, 5}).Input("k", {1}, onnx::TensorProto::INT64);
  b.Output("values").Output("indices");
  b.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  const std::string model = b.Bytes();
  auto inputs = [](double k) {
    return std::vector<loop::HostTensor>{
        loop::HostTensor::FromDoubles(DataType::kFloat32, {2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3}),
        loop::HostTensor::FromDoubles(DataType::kInt64, {1}, {k})};
  };
  std::vector<Filled> out = RunBoth(model, inputs(3));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 3));
  EXPECT_THAT(out[0].values, ElementsAreArray({5, 4, 3, 9, 6, 5}));
  EXPECT_THAT(out[1].values, ElementsAreArray({4, 2, 0, 0, 2, 3}));
  out = RunBoth(model, inputs(0));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 0));

  std::vector<absl::Status> failures = RunFailures(model, inputs(6));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_THAT(failures[0].message(), HasSubstr("input 1 (K) must lie in [0, 5]"));
}

// K given at run time over an axis whose extent only a run knows has no static bound: an
// import error naming the node and what to give instead.
TEST(BoundedOutputsTest, TopKOverARunTimeAxisAsksForAStaticShape) {
  OnnxModelBuilder b(13);
  b.Input("x", {2, -1}).Input("k", {1}, onnx::TensorProto::INT64);
  b.Output("values").Output("indices");
  b.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("ONNX node 'topk'"));
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("axis 1 has a run-time extent, so K given at run time has no static "
                        "bound: give the input a static shape (input_shapes) or declare the "
                        "outputs' shapes"));
}

// An int64 initializer of `dims` holding `values`.
void Int64Initializer(OnnxModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                      std::vector<int64_t> values) {
  onnx::TensorProto* init = b.model().mutable_graph()->add_initializer();
  init->set_name(name);
  init->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) init->add_dims(d);
  for (int64_t v : values) init->add_int64_data(v);
}

// `x[x != 0]` as torch.onnx.export writes it: NonZero, Transpose, GatherND. The index rows are
// bounded, so the gathered values are: kX's nonzero values in row-major order.
TEST(BoundedOutputsTest, BooleanMaskIndexingGathersTheFilledRows) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("y");
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Transpose", {"nz"}, {"rows"}, "transpose");
  b.Node("GatherND", {"x", "rows"}, {"y"}, "gather");
  loop::HostTensor x = loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX);
  std::vector<Filled> out = RunBoth(b.Bytes(), {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(5));
  EXPECT_THAT(out[0].values, ElementsAreArray({1, 2, 3, 4, 5}));
  // Nothing selected: empty.
  out = RunBoth(b.Bytes(), {loop::HostTensor::Zeros(DataType::kFloat32, {3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(0));
}

// Detection post-processing: NonMaxSuppression's selected rows (batch, class, box), the box
// column gathered (Gather of [2] along axis 1, then Squeeze), the boxes gathered by it, and the
// indices scaled by a broadcast constant. The boxes and scores of non_max_suppression_test.cc:
// class 0 selects boxes 2, 1 and class 1 boxes 3, 1, 0, three per class at most.
TEST(BoundedOutputsTest, SelectedBoxesFlowThroughGatherSqueezeAndElementwiseOps) {
  OnnxModelBuilder b(13);
  b.Input("boxes", {1, 4, 4})
      .Input("scores", {1, 2, 4})
      .Input("max_out", {1}, onnx::TensorProto::INT64)
      .Input("corners", {4, 4})
      .Output("picked")
      .Output("scaled");
  Int64Initializer(b, "column", {1}, {2});
  Int64Initializer(b, "squeeze_axes", {1}, {1});
  b.FloatInitializer("ten", {1}, {10.0f});
  b.FloatInitializer("iou", {1}, {0.5f});
  b.FloatInitializer("threshold", {1}, {0.2f});
  b.Node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "threshold"}, {"selected"},
         "nms");
  OnnxModelBuilder::IntAttr(b.Node("Gather", {"selected", "column"}, {"box_column"}, "column"),
                            "axis", 1);
  b.Node("Squeeze", {"box_column", "squeeze_axes"}, {"box"}, "squeeze");
  b.Node("Gather", {"corners", "box"}, {"picked"}, "pick");
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"box"}, {"box_float"}, "cast"), "to",
                            onnx::TensorProto::FLOAT);
  b.Node("Mul", {"box_float", "ten"}, {"scaled"}, "scale");
  const std::vector<double> corners = {0, 0, 2, 2, 0, 1, 2, 3, 0, 0.2, 2, 2.2, 5, 5, 6, 6};
  const std::vector<double> scores = {0.9, 0.8, 0.95, 0.1, 0.3, 0.6, 0.1, 0.7};
  std::vector<Filled> out = RunBoth(
      b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 4, 4}, corners),
                  loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 4}, scores),
                  loop::HostTensor::FromDoubles(DataType::kInt64, {1}, {3}),
                  loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 4}, corners)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].shape, ElementsAre(5, 4));
  // float32 corners, compared as the doubles they widen to.
  EXPECT_THAT(out[0].values, ElementsAreArray(std::vector<double>{
                                 0, 0.2f, 2, 2.2f, 0, 1, 2, 3, 5, 5, 6, 6, 0, 1, 2, 3, 0, 0, 2, 2}));
  EXPECT_THAT(out[1].shape, ElementsAre(5));
  EXPECT_THAT(out[1].values, ElementsAreArray({20, 10, 30, 10, 0}));
}

// `torch.where(x != 0)` as torch.onnx.export writes it: NonZero, Transpose, Split into the
// coordinate columns, Squeeze of each: kX's nonzero rows and columns, two bounded outputs.
TEST(BoundedOutputsTest, TorchWhereSplitsTheFilledRowsIntoCoordinates) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("rows").Output("columns");
  Int64Initializer(b, "one", {1}, {1});
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Transpose", {"nz"}, {"pairs"}, "transpose");
  OnnxModelBuilder::IntAttr(b.Node("Split", {"pairs"}, {"r", "c"}, "split"), "axis", 1);
  b.Node("Squeeze", {"r", "one"}, {"rows"}, "squeeze_rows");
  b.Node("Squeeze", {"c", "one"}, {"columns"}, "squeeze_columns");
  std::vector<Filled> out =
      RunBoth(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].shape, ElementsAre(5));
  EXPECT_THAT(out[0].values, ElementsAreArray({0, 0, 1, 1, 2}));
  EXPECT_THAT(out[1].shape, ElementsAre(5));
  EXPECT_THAT(out[1].values, ElementsAreArray({1, 3, 0, 3, 3}));
}

// NonZero's (2, n) indices, bounded along axis 1, through an Unsqueeze at axis -1 ((2, n, 1),
// still axis 1), a Gather of bounded data along axis 0 swapping the rows (axis 1 stays), a Cast
// and a Mul by a (2, 1, 1) constant broadcast along the bounded axis: kX's nonzero columns x 10
// then rows x 100.
TEST(BoundedOutputsTest, ABoundedAxisMovesWithUnsqueezeAndGatherOfOtherAxes) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("y");
  Int64Initializer(b, "last", {1}, {-1});
  Int64Initializer(b, "swap", {2}, {1, 0});
  b.FloatInitializer("scale", {2, 1, 1}, {10.0f, 100.0f});
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Unsqueeze", {"nz", "last"}, {"column"}, "unsqueeze");
  b.Node("Gather", {"column", "swap"}, {"swapped"}, "swap");
  OnnxModelBuilder::IntAttr(b.Node("Cast", {"swapped"}, {"real"}, "cast"), "to",
                            onnx::TensorProto::FLOAT);
  b.Node("Mul", {"real", "scale"}, {"y"}, "scale");
  std::vector<Filled> out =
      RunBoth(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 5, 1));
  EXPECT_THAT(out[0].values,
              ElementsAreArray({10, 30, 0, 30, 30, 0, 0, 100, 100, 200}));
}

// kX's nonzero (row, column) pairs, bounded along axis 0, through the ops of detection
// post-processing that work along the other axis: Slice of the column, ReduceMax of each pair,
// ArgMax of each pair (no kept dim) and Concat of the three side by side; and NonZero's own
// (2, n) output summed over axis 0 without keeping it, which moves the bounded axis from 1 to 0.
TEST(BoundedOutputsTest, SliceReduceArgMaxAndConcatAlongOtherAxesKeepTheBound) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("table").Output("best").Output("sums");
  Int64Initializer(b, "one", {1}, {1});
  Int64Initializer(b, "two", {1}, {2});
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Transpose", {"nz"}, {"pairs"}, "transpose");
  b.Node("Slice", {"pairs", "one", "two", "one"}, {"columns"}, "slice");
  onnx::NodeProto& largest = b.Node("ReduceMax", {"pairs"}, {"largest"}, "largest");
  OnnxModelBuilder::IntsAttr(largest, "axes", {1});
  onnx::NodeProto& best = b.Node("ArgMax", {"pairs"}, {"best"}, "best");
  OnnxModelBuilder::IntAttr(best, "axis", 1);
  OnnxModelBuilder::IntAttr(best, "keepdims", 0);
  OnnxModelBuilder::IntAttr(b.Node("Concat", {"pairs", "columns", "largest"}, {"table"}, "concat"),
                            "axis", 1);
  Int64Initializer(b, "rows_axis", {1}, {-2});
  OnnxModelBuilder::IntAttr(b.Node("ReduceSum", {"nz", "rows_axis"}, {"sums"}, "sums"),
                            "keepdims", 0);
  std::vector<Filled> out =
      RunBoth(b.Bytes(), {loop::HostTensor::FromDoubles(DataType::kFloat32, {3, 4}, kX)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0].shape, ElementsAre(5, 4));
  EXPECT_THAT(out[0].values, ElementsAreArray({0, 1, 1, 1, 0, 3, 3, 3, 1, 0, 0, 1, 1, 3, 3, 3,
                                               2, 3, 3, 3}));
  EXPECT_THAT(out[1].shape, ElementsAre(5));
  EXPECT_THAT(out[1].values, ElementsAreArray({1, 1, 0, 1, 1}));
  EXPECT_THAT(out[2].shape, ElementsAre(5));
  EXPECT_THAT(out[2].values, ElementsAreArray({1, 3, 1, 4, 5}));
}

// Readers a bounded value cannot flow into, each with why: Gather along the bounded axis,
// Squeeze without axes, an integer divisor, a reduction or a slice of the bounded axis, a
// concat with a part of static extent.
TEST(BoundedOutputsTest, ReadersThatWouldSeeThePaddingAreRefusedWithTheReason) {
  struct Case {
    const char* op;
    const char* why;
  };
  for (const Case& c : {Case{"Gather", "it gathers along the bounded axis"},
                        Case{"Squeeze", "Squeeze without axes would remove the bounded axis"},
                        Case{"Div", "input 1 is an integer divisor"},
                        Case{"ReduceSum", "it reduces the bounded axis"},
                        Case{"Slice", "it slices the bounded axis"},
                        Case{"Concat", "input 1 is not bounded"}}) {
    SCOPED_TRACE(c.op);
    OnnxModelBuilder b(13);
    b.Input("x", {3, 4}).Input("n", {1}, onnx::TensorProto::INT64).Output("y");
    Int64Initializer(b, "first", {}, {0});
    Int64Initializer(b, "axis_1", {1}, {1});
    Int64Initializer(b, "start", {1}, {0});
    Int64Initializer(b, "end", {1}, {1});
    Int64Initializer(b, "pair", {2, 12}, std::vector<int64_t>(24, 0));
    b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
    if (std::string(c.op) == "Gather") {
      OnnxModelBuilder::IntAttr(b.Node("Gather", {"nz", "first"}, {"y"}, "reader"), "axis", 1);
    } else if (std::string(c.op) == "Squeeze") {
      b.Node("Squeeze", {"nz"}, {"y"}, "reader");
    } else if (std::string(c.op) == "ReduceSum") {
      b.Node("ReduceSum", {"nz", "axis_1"}, {"y"}, "reader");
    } else if (std::string(c.op) == "Slice") {
      b.Node("Slice", {"nz", "start", "end", "axis_1"}, {"y"}, "reader");
    } else if (std::string(c.op) == "Concat") {
      OnnxModelBuilder::IntAttr(b.Node("Concat", {"nz", "pair"}, {"y"}, "reader"), "axis", 0);
    } else {
      b.Node("Div", {"n", "nz"}, {"y"}, "reader");
    }
    CompileOptions options;
    absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
    ASSERT_FALSE(compiled.ok());
    EXPECT_THAT(compiled.status().message(),
                HasSubstr(absl::StrCat("ONNX node 'reader' (#1, ", c.op, "): input ")));
    EXPECT_THAT(compiled.status().message(), HasSubstr("ONNX node 'nonzero' (NonZero)'s output"));
    EXPECT_THAT(compiled.status().message(), HasSubstr(c.why));
  }
}

TEST(BoundedOutputsTest, ABoundedValueReadAcrossItsAxisIsAnImportErrorNamingBoth) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Output("y");
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Flatten", {"nz"}, {"y"}, "flat");
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("ONNX node 'flat' (#1, Flatten): input 0 ('nz') is ONNX node 'nonzero' "
                        "(NonZero)'s output, whose extent along axis 1 only a run knows"));
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("Flatten is not among the ops a bounded value flows through"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("declare its shape"));

  // An operand of full extent along the bounded axis cannot line up with a run-time length.
  OnnxModelBuilder full(13);
  full.Input("x", {3, 4}).Input("offsets", {2, 12}, onnx::TensorProto::INT64).Output("y");
  full.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  full.Node("Add", {"nz", "offsets"}, {"y"}, "shift");
  compiled = CompileOnnx(full.Bytes(), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("input 1 has an extent other than 1 along that axis"));
}

// A subgraph whose output is a bounded value from the enclosing graph would hand it on without
// its length: refused. Transpose with a negative perm entry moves the axis like any other.
TEST(BoundedOutputsTest, ASubgraphOutputCannotCarryABoundedValue) {
  OnnxModelBuilder b(13);
  b.Input("x", {3, 4}).Input("cond", {}, onnx::TensorProto::BOOL).Output("y");
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  onnx::NodeProto& branch = b.Node("If", {"cond"}, {"y"}, "branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* attr = branch.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    attr->mutable_g()->set_name(name);
    attr->mutable_g()->add_output()->set_name("nz");
  }
  CompileOptions options;
  absl::StatusOr<CompileResult> compiled = CompileOnnx(b.Bytes(), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("subgraph output 'nz' is ONNX node 'nonzero' (NonZero)'s output"));

  OnnxModelBuilder t(13);
  t.Input("x", {3, 4}).Output("y");
  t.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  OnnxModelBuilder::IntsAttr(t.Node("Transpose", {"nz"}, {"y"}, "transpose"), "perm", {-1, 0});
  compiled = CompileForAllBackends(t.Bytes());
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(compiled->lowered->bounded_outputs.size(), 1u);
  EXPECT_EQ(compiled->lowered->bounded_outputs[0].axis, 0);
}

TEST(BoundedOutputsTest, ALengthOutsideTheBoundIsAnError) {
  std::vector<lower::BoundedOutput> bounded = {{0, 1, 1}};
  std::vector<loop::HostTensor> outputs = {
      loop::HostTensor::Zeros(DataType::kInt64, {2, 3}),
      loop::HostTensor::FromDoubles(DataType::kInt64, {}, {4})};
  absl::Status cut = CutBoundedOutputs(bounded, &outputs);
  EXPECT_EQ(cut.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cut.message(), HasSubstr("run-time length 4 is outside [0, 3]"));
}

}  // namespace
}  // namespace kiln::driver
