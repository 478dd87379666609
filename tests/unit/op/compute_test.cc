// The op compute definitions (engine/op/compute/) run end to end: compute ->
// te::Schedule::Create -> te::LowerSchedule -> the loop-IR interpreter, on
// small inputs whose results are worked out by hand (or quoted from the ONNX
// operator specification's examples). Every family is covered, with the
// ONNX semantics a user notices: round half to even, truncating integer
// division, fmod vs floor mod, negative gather indices, argmax ties, pad
// modes, resize coordinate modes, pooling with padding and ceil mode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/te/lower_schedule.h"
#include "engine/te/schedule.h"

namespace kiln {
namespace {

using loop::HostTensor;
using Values = std::vector<double>;

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI32 = DataType::kInt32;
constexpr DataType kI64 = DataType::kInt64;
constexpr DataType kU8 = DataType::kUInt8;
constexpr DataType kBool = DataType::kBool;

HostTensor T(DataType dtype, std::vector<int64_t> shape, Values values) {
  return HostTensor::FromDoubles(dtype, std::move(shape), values);
}
HostTensor F(std::vector<int64_t> shape, Values values) {
  return T(kF32, std::move(shape), values);
}
HostTensor Scalar(DataType dtype, double value) { return T(dtype, {}, {value}); }

AttrValue Floats(std::vector<double> values) {
  return AttrValue(AttrValue::Array(values.begin(), values.end()));
}

// Runs `op` on `args` through its compute definition, a default schedule,
// lowering and the interpreter. The result type comes from the op's type
// relation unless `result_type` is given (ops with data-dependent extents).
absl::StatusOr<std::vector<HostTensor>> Evaluate(const std::string& op,
                                                 std::vector<HostTensor> args,
                                                 std::vector<AttrsNode::Field> attrs = {},
                                                 Type result_type = nullptr) {
  const OpEntry* entry = OpRegistry::Global().Find(op);
  if (entry == nullptr) return absl::NotFoundError("no op " + op);
  auto normalized = NormalizeAttrs(*entry, MakeAttrs(std::move(attrs)));
  if (!normalized.ok()) return normalized.status();
  std::vector<Type> arg_types;
  std::vector<te::Tensor> placeholders;
  for (size_t i = 0; i < args.size(); ++i) {
    std::vector<Dim> dims;
    for (int64_t d : args[i].shape) dims.push_back(Dim::Static(d));
    arg_types.push_back(MakeTensorType(dims, args[i].dtype));
    placeholders.push_back(te::Placeholder(absl::StrCat("arg", i), args[i].dtype, args[i].shape));
  }
  if (!result_type.defined()) {
    auto inferred = InferCallType(*entry, arg_types, *normalized);
    if (!inferred.ok()) return inferred.status();
    result_type = *inferred;
  }
  auto outputs = entry->compute(ComputeInput{placeholders, **normalized, result_type});
  if (!outputs.ok()) return outputs.status();
  te::Schedule schedule = te::Schedule::Create(*outputs);
  // Params: the placeholders the computation reads, then the outputs.
  std::vector<te::Tensor> params;
  std::vector<HostTensor*> storage;
  for (size_t i = 0; i < placeholders.size(); ++i) {
    if (schedule.FindStage(placeholders[i]) == nullptr) continue;
    params.push_back(placeholders[i]);
    storage.push_back(&args[i]);
  }
  std::vector<HostTensor> results;
  results.reserve(outputs->size());
  for (const te::Tensor& out : *outputs) {
    params.push_back(out);
    results.push_back(HostTensor::Zeros(out.dtype(), out.shape()));
  }
  for (HostTensor& r : results) storage.push_back(&r);
  auto func = te::LowerSchedule(schedule, params, "compute_test");
  if (!func.ok()) return func.status();
  absl::Status run = loop::RunPrimFunc(*func, storage);
  if (!run.ok()) return run;
  return results;
}

// The single result of `op`, checked to have `shape`, as doubles.
Values RunOp(const std::string& op, std::vector<HostTensor> args,
             std::vector<AttrsNode::Field> attrs = {}, std::vector<int64_t> shape = {},
             Type result_type = nullptr) {
  auto results = Evaluate(op, std::move(args), std::move(attrs), std::move(result_type));
  EXPECT_TRUE(results.ok()) << op << ": " << results.status();
  if (!results.ok()) return {};
  EXPECT_EQ(results->size(), 1u) << op;
  EXPECT_EQ((*results)[0].shape, shape) << op;
  return (*results)[0].ToDoubles();
}

void ExpectNear(const Values& actual, const Values& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i;
      continue;
    }
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::fabs(expected[i])))
        << "element " << i;
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- coverage --------------------------------------------------------------------

TEST(ComputeCoverageTest, EveryRegisteredOpHasAComputeDefinition) {
  std::vector<std::string> missing;
  for (const OpEntry* entry : OpRegistry::Global().List()) {
    if (!entry->compute) missing.push_back(entry->name);
  }
  EXPECT_TRUE(missing.empty()) << "ops without a compute: " << missing.size() << ", first "
                               << (missing.empty() ? "" : missing[0]);
}

TEST(ComputeCoverageTest, SymbolicResultIsUnimplementedNamingTheOp) {
  const OpEntry* entry = OpRegistry::Global().Find("nn.relu");
  ASSERT_NE(entry, nullptr);
  auto attrs = NormalizeAttrs(*entry, MakeAttrs({}));
  ASSERT_TRUE(attrs.ok());
  std::vector<te::Tensor> inputs = {te::Placeholder("x", kF32, {4})};
  Type symbolic = MakeTensorType({Dim::Symbolic("N")}, kF32);
  auto out = entry->compute(ComputeInput{inputs, **attrs, symbolic});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(out.status().message()).find("nn.relu"), std::string::npos) << out.status();
}

TEST(ComputeCoverageTest, DataDependentOpsNeedAStaticResultType) {
  // arange's relation gives a symbolic extent: without a static result type
  // (someone who knows the values) there is no compute.
  auto results = Evaluate("arange", {Scalar(kI64, 1), Scalar(kI64, 7), Scalar(kI64, 2)});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(results.status().message()).find("arange"), std::string::npos);
}

TEST(ComputeCoverageTest, ComputesAreNamedAndTagged) {
  const OpEntry* entry = OpRegistry::Global().Find("add");
  auto attrs = NormalizeAttrs(*entry, MakeAttrs({}));
  ASSERT_TRUE(attrs.ok());
  std::vector<te::Tensor> inputs = {te::Placeholder("a", kF32, {2}),
                                    te::Placeholder("b", kF32, {2})};
  auto out = entry->compute(ComputeInput{inputs, **attrs, MakeTensorType({2}, kF32)});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].name(), "T_add");
  EXPECT_EQ((*out)[0].op()->tag, "broadcast");
}

// ---- elementwise -------------------------------------------------------------------

TEST(ElementwiseComputeTest, AddBroadcastsTrailingDims) {
  ExpectNear(RunOp("add", {F({2, 3}, {1, 2, 3, 4, 5, 6}), F({3}, {10, 20, 30})}, {}, {2, 3}),
             {11, 22, 33, 14, 25, 36});
  ExpectNear(RunOp("subtract", {F({2, 1}, {1, 2}), F({1, 2}, {10, 20})}, {}, {2, 2}),
             {-9, -19, -8, -18});
  ExpectNear(RunOp("multiply", {F({2}, {3, 4}), F({}, {0.5})}, {}, {2}), {1.5, 2});
}

TEST(ElementwiseComputeTest, IntegerDivisionTruncatesTowardZero) {
  Values q = RunOp("divide", {T(kI32, {4}, {7, -7, 7, -7}), T(kI32, {4}, {2, 2, -2, -2})}, {}, {4});
  EXPECT_EQ(q, (Values{3, -3, -3, 3}));
  ExpectNear(RunOp("divide", {F({2}, {1, -3}), F({2}, {4, 2})}, {}, {2}), {0.25, -1.5});
}

TEST(ElementwiseComputeTest, ModIsFmodAndFloorModIsPythonRemainder) {
  HostTensor a = T(kI32, {4}, {7, -7, 7, -7});
  HostTensor b = T(kI32, {4}, {3, 3, -3, -3});
  EXPECT_EQ(RunOp("mod", {a, b}, {}, {4}), (Values{1, -1, 1, -1}));
  EXPECT_EQ(RunOp("floor_mod", {a, b}, {}, {4}), (Values{1, 2, -2, -1}));
  ExpectNear(RunOp("mod", {F({2}, {5.5, -5.5}), F({2}, {2, 2})}, {}, {2}), {1.5, -1.5});
  ExpectNear(RunOp("floor_mod", {F({3}, {5.5, -5.5, 4}), F({3}, {2, 2, -2})}, {}, {3}),
             {1.5, 0.5, 0});
}

TEST(ElementwiseComputeTest, RoundIsHalfToEven) {
  ExpectNear(RunOp("round", {F({8}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.6})}, {}, {8}),
             {0, 2, 2, 0, -2, 2, 3, -3});
}

TEST(ElementwiseComputeTest, UnaryMath) {
  ExpectNear(RunOp("exp", {F({2}, {0, 1})}, {}, {2}), {1, M_E});
  ExpectNear(RunOp("sigmoid", {F({2}, {0, 2})}, {}, {2}), {0.5, 1 / (1 + std::exp(-2.0))});
  ExpectNear(RunOp("softplus", {F({3}, {0, 1, 100})}, {}, {3}),
             {std::log(2.0), std::log1p(M_E), 100});
  ExpectNear(RunOp("rsqrt", {F({1}, {4})}, {}, {1}), {0.5});
  ExpectNear(RunOp("reciprocal", {F({1}, {4})}, {}, {1}), {0.25});
  ExpectNear(RunOp("negative", {F({2}, {1, -2})}, {}, {2}), {-1, 2});
  ExpectNear(RunOp("nn.relu", {F({3}, {-1, 0, 2})}, {}, {3}), {0, 0, 2});
  ExpectNear(RunOp("nn.leaky_relu", {F({2}, {-2, 3})}, {{"alpha", 0.1}}, {2}), {-0.2, 3});
  ExpectNear(RunOp("sign", {F({4}, {-3, 0, 2, kNaN})}, {}, {4}), {-1, 0, 1, kNaN});
  EXPECT_EQ(RunOp("abs", {T(kI32, {2}, {-3, 4})}, {}, {2}), (Values{3, 4}));
  EXPECT_EQ(RunOp("sign", {T(kI32, {3}, {-3, 0, 4})}, {}, {3}), (Values{-1, 0, 1}));
}

TEST(ElementwiseComputeTest, PredicatesOnSpecialValues) {
  EXPECT_EQ(RunOp("isnan", {F({3}, {1, kInf, kNaN})}, {}, {3}), (Values{0, 0, 1}));
  EXPECT_EQ(RunOp("isinf", {F({3}, {1, -kInf, kNaN})}, {}, {3}), (Values{0, 1, 0}));
  EXPECT_EQ(RunOp("isfinite", {F({3}, {1, kInf, kNaN})}, {}, {3}), (Values{1, 0, 0}));
}

TEST(ElementwiseComputeTest, CastTruncatesAndTestsNonzeroForBool) {
  EXPECT_EQ(RunOp("cast", {F({2}, {1.7, -1.7})}, {{"dtype", kI32}}, {2}), (Values{1, -1}));
  EXPECT_EQ(RunOp("cast", {F({3}, {0, 0.5, kNaN})}, {{"dtype", kBool}}, {3}), (Values{0, 1, 1}));
  EXPECT_EQ(RunOp("cast", {T(kI32, {2}, {0, -5})}, {{"dtype", kBool}}, {2}), (Values{0, 1}));
  ExpectNear(RunOp("cast", {T(kBool, {2}, {1, 0})}, {{"dtype", kF32}}, {2}), {1, 0});
}

TEST(ElementwiseComputeTest, ClipBoundsBothSidesAndIntegers) {
  ExpectNear(RunOp("clip", {F({3}, {-2, 0.5, 3})}, {{"a_min", 0.0}, {"a_max", 1.0}}, {3}),
             {0, 0.5, 1});
  ExpectNear(RunOp("clip", {F({2}, {-2, 3})}, {{"a_max", 1.0}}, {2}), {-2, 1});
  EXPECT_EQ(RunOp("clip", {T(kU8, {3}, {0, 100, 255})}, {{"a_min", -5.0}, {"a_max", 200.0}}, {3}),
            (Values{0, 100, 200}));
}

TEST(ElementwiseComputeTest, BitwiseAndShifts) {
  HostTensor a = T(kU8, {1}, {0b1100});
  HostTensor b = T(kU8, {1}, {0b1010});
  EXPECT_EQ(RunOp("bitwise_and", {a, b}, {}, {1}), (Values{8}));
  EXPECT_EQ(RunOp("bitwise_or", {a, b}, {}, {1}), (Values{14}));
  EXPECT_EQ(RunOp("bitwise_xor", {a, b}, {}, {1}), (Values{6}));
  EXPECT_EQ(RunOp("bitwise_not", {T(kU8, {1}, {0x0F})}, {}, {1}), (Values{0xF0}));
  EXPECT_EQ(RunOp("bitwise_not", {T(kI32, {2}, {0, 5})}, {}, {2}), (Values{-1, -6}));
  EXPECT_EQ(RunOp("left_shift", {T(kU8, {2}, {1, 3}), T(kU8, {2}, {3, 2})}, {}, {2}),
            (Values{8, 12}));
  EXPECT_EQ(RunOp("right_shift", {T(kU8, {2}, {16, 255}), T(kU8, {2}, {2, 4})}, {}, {2}),
            (Values{4, 15}));
}

TEST(ElementwiseComputeTest, LogicComparisonsAndWhere) {
  HostTensor t = T(kBool, {4}, {0, 0, 1, 1});
  HostTensor u = T(kBool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(RunOp("logical_and", {t, u}, {}, {4}), (Values{0, 0, 0, 1}));
  EXPECT_EQ(RunOp("logical_or", {t, u}, {}, {4}), (Values{0, 1, 1, 1}));
  EXPECT_EQ(RunOp("logical_xor", {t, u}, {}, {4}), (Values{0, 1, 1, 0}));
  EXPECT_EQ(RunOp("logical_not", {t}, {}, {4}), (Values{1, 1, 0, 0}));
  HostTensor x = F({3}, {1, 2, 3});
  HostTensor two = F({}, {2});
  EXPECT_EQ(RunOp("less", {x, two}, {}, {3}), (Values{1, 0, 0}));
  EXPECT_EQ(RunOp("less_equal", {x, two}, {}, {3}), (Values{1, 1, 0}));
  EXPECT_EQ(RunOp("greater", {x, two}, {}, {3}), (Values{0, 0, 1}));
  EXPECT_EQ(RunOp("greater_equal", {x, two}, {}, {3}), (Values{0, 1, 1}));
  EXPECT_EQ(RunOp("equal", {x, two}, {}, {3}), (Values{0, 1, 0}));
  EXPECT_EQ(RunOp("not_equal", {x, two}, {}, {3}), (Values{1, 0, 1}));
  // cond (2, 1) broadcast against a (3) and b ().
  ExpectNear(RunOp("where", {T(kBool, {2, 1}, {1, 0}), x, F({}, {-1})}, {}, {2, 3}),
             {1, 2, 3, -1, -1, -1});
}

TEST(ElementwiseComputeTest, PowerMaximumMinimum) {
  EXPECT_EQ(RunOp("power", {T(kI64, {3}, {2, 3, -2}), T(kI64, {3}, {3, 2, 3})}, {}, {3}),
            (Values{8, 9, -8}));
  ExpectNear(RunOp("power", {F({2}, {4, 2}), F({2}, {0.5, -1})}, {}, {2}), {2, 0.5});
  ExpectNear(RunOp("maximum", {F({2}, {1, 5}), F({2}, {3, 2})}, {}, {2}), {3, 5});
  ExpectNear(RunOp("minimum", {F({2}, {1, 5}), F({2}, {3, 2})}, {}, {2}), {1, 2});
}

TEST(ElementwiseComputeTest, TrigonometryAndFriends) {
  ExpectNear(RunOp("sin", {F({1}, {M_PI / 2})}, {}, {1}), {1});
  ExpectNear(RunOp("cos", {F({1}, {0})}, {}, {1}), {1});
  ExpectNear(RunOp("tan", {F({1}, {M_PI / 4})}, {}, {1}), {1});
  ExpectNear(RunOp("asin", {F({1}, {1})}, {}, {1}), {M_PI / 2});
  ExpectNear(RunOp("acos", {F({1}, {1})}, {}, {1}), {0});
  ExpectNear(RunOp("atan", {F({1}, {1})}, {}, {1}), {M_PI / 4});
  ExpectNear(RunOp("sinh", {F({1}, {1})}, {}, {1}), {std::sinh(1.0)});
  ExpectNear(RunOp("cosh", {F({1}, {1})}, {}, {1}), {std::cosh(1.0)});
  ExpectNear(RunOp("tanh", {F({1}, {1})}, {}, {1}), {std::tanh(1.0)});
  ExpectNear(RunOp("asinh", {F({1}, {1})}, {}, {1}), {std::asinh(1.0)});
  ExpectNear(RunOp("acosh", {F({1}, {2})}, {}, {1}), {std::acosh(2.0)});
  ExpectNear(RunOp("atanh", {F({1}, {0.5})}, {}, {1}), {std::atanh(0.5)});
  ExpectNear(RunOp("erf", {F({1}, {1})}, {}, {1}), {std::erf(1.0)});
  ExpectNear(RunOp("log", {F({1}, {M_E})}, {}, {1}), {1});
  ExpectNear(RunOp("sqrt", {F({1}, {9})}, {}, {1}), {3});
  ExpectNear(RunOp("ceil", {F({2}, {1.2, -1.2})}, {}, {2}), {2, -1});
  ExpectNear(RunOp("floor", {F({2}, {1.2, -1.2})}, {}, {2}), {1, -2});
}

// ---- reduce ----------------------------------------------------------------------------

TEST(ReduceComputeTest, SumMeanProdOverAxes) {
  HostTensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectNear(RunOp("sum", {x}, {{"axis", IntArray({1})}, {"keepdims", true}}, {2, 1}), {6, 15});
  ExpectNear(RunOp("sum", {x}, {{"axis", IntArray({0})}}, {3}), {5, 7, 9});
  ExpectNear(RunOp("sum", {x}, {}, {}), {21});
  ExpectNear(RunOp("mean", {x}, {{"axis", IntArray({-1})}}, {2}), {2, 5});
  ExpectNear(RunOp("prod", {x}, {{"axis", IntArray({1})}}, {2}), {6, 120});
  // Integer mean truncates: 10 / 4.
  EXPECT_EQ(RunOp("mean", {T(kI32, {4}, {1, 2, 3, 4})}, {}, {}), (Values{2}));
}

// 2^24 then 300 ones: a float32 running sum stays at 2^24 (each + 1 rounds back to it); a long
// sum into one value accumulates in float64, so it gives 2^24 + 300 (exact in float32), and the
// mean that value over 301. Sums into many outputs stay float32 (their lanes run in parallel).
TEST(ReduceComputeTest, ALongSumIntoOneValueDoesNotLoseItsSmallTerms) {
  std::vector<double> values(301, 1.0);
  values[0] = 16777216.0;
  HostTensor x = F({301}, values);
  EXPECT_EQ(RunOp("sum", {x}, {}, {}), (Values{16777516.0}));
  EXPECT_EQ(RunOp("mean", {x}, {}, {}), (Values{static_cast<float>(16777516.0 / 301)}));
}

TEST(ReduceComputeTest, MaxMinWithExcludeAndBool) {
  HostTensor x = F({2, 2}, {1, 5, 7, 2});
  // exclude: reduce every axis but 0.
  ExpectNear(RunOp("max", {x}, {{"axis", IntArray({0})}, {"exclude", true}}, {2}), {5, 7});
  ExpectNear(RunOp("min", {x}, {{"axis", IntArray({0})}}, {2}), {1, 2});
  HostTensor flags = T(kBool, {3}, {0, 1, 0});
  EXPECT_EQ(RunOp("max", {flags}, {}, {}), (Values{1}));
  EXPECT_EQ(RunOp("min", {flags}, {}, {}), (Values{0}));
}

TEST(ReduceComputeTest, ArgmaxTiesTakeFirstOrLastIndex) {
  HostTensor x = F({2, 3}, {1, 3, 3, 2, 2, 1});
  EXPECT_EQ(RunOp("argmax", {x}, {{"axis", 1}}, {2}), (Values{1, 0}));
  EXPECT_EQ(RunOp("argmax", {x}, {{"axis", 1}, {"select_last_index", true}}, {2}), (Values{2, 1}));
  EXPECT_EQ(RunOp("argmax", {x}, {{"axis", 0}, {"keepdims", true}}, {1, 3}), (Values{1, 0, 0}));
  EXPECT_EQ(RunOp("argmin", {F({1, 3}, {1, 3, 1})}, {{"axis", 1}}, {1}), (Values{0}));
  EXPECT_EQ(
      RunOp("argmin", {F({1, 3}, {1, 3, 1})}, {{"axis", -1}, {"select_last_index", true}}, {1}),
      (Values{2}));
}

// ---- nn ------------------------------------------------------------------------------

HostTensor Iota(std::vector<int64_t> shape, double start = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Values v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<double>(i));
  return F(std::move(shape), v);
}

TEST(NnComputeTest, Conv2dWithA2x2KernelByHand) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,0],[0,1]]: each output sums a
  // window's main diagonal.
  ExpectNear(
      RunOp("nn.conv2d", {Iota({1, 1, 3, 3}), F({1, 1, 2, 2}, {1, 0, 0, 1})}, {}, {1, 1, 2, 2}),
      {1 + 5, 2 + 6, 4 + 8, 5 + 9});
}

TEST(NnComputeTest, BlockedConvByHand) {
  // Two channels in one block of 2, a 2x2 image stored [h, w, c]: channel 0 is 1 2 3 4,
  // channel 1 is 10 20 30 40. A 1x1 convolution with w[i][o] = {{1, 2}, {3, 4}}:
  // out0 = x0 + 3 x1, out1 = 2 x0 + 4 x1 at each pixel.
  HostTensor x = F({1, 1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  ExpectNear(RunOp("nn.conv2d_nchwc", {x, F({1, 1, 1, 1, 2, 2}, {1, 2, 3, 4})}, {{"block", 2}},
                   {1, 1, 2, 2, 2}),
             {31, 42, 62, 84, 93, 126, 124, 168});
  // Depthwise 3x3 of ones with padding 1 on a 2x2 image: every window covers the whole image,
  // so each output is its channel's sum, 10 and 100.
  ExpectNear(RunOp("nn.conv2d_nchwc", {x, F({1, 1, 3, 3, 1, 2}, std::vector<double>(18, 1.0))},
                   {{"block", 2}, {"groups", 2}, {"padding", IntArray({1, 1})}}, {1, 1, 2, 2, 2}),
             {10, 100, 10, 100, 10, 100, 10, 100});
}

TEST(NnComputeTest, Conv2dPaddingStrideDilationGroups) {
  HostTensor x = Iota({1, 1, 3, 3});
  HostTensor ones = F({1, 1, 2, 2}, {1, 1, 1, 1});
  // Zero padding 1, stride 2: windows at padded (0,0), (0,2), (2,0), (2,2).
  ExpectNear(RunOp("nn.conv2d", {x, ones},
                   {{"padding", IntArray({1, 1})}, {"strides", IntArray({2, 2})}}, {1, 1, 2, 2}),
             {1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9});
  // Dilation 2: the 2x2 kernel reads the four corners.
  ExpectNear(RunOp("nn.conv2d", {x, ones}, {{"dilation", IntArray({2, 2})}}, {1, 1, 1, 1}),
             {1 + 3 + 7 + 9});
  // Two groups of one channel: channel c scaled by w[c].
  ExpectNear(RunOp("nn.conv2d", {Iota({1, 2, 1, 2}), F({2, 1, 1, 1}, {2, 3})}, {{"groups", 2}},
                   {1, 2, 1, 2}),
             {2, 4, 9, 12});
  // Asymmetric padding: begin 0, end 1 on W only.
  ExpectNear(RunOp("nn.conv1d", {F({1, 1, 3}, {1, 2, 3}), F({1, 1, 2}, {1, 10})},
                   {{"padding", IntArray({0, 1})}}, {1, 1, 3}),
             {21, 32, 3});
}

TEST(NnComputeTest, TransposedConvolutionScattersEachInput) {
  HostTensor x = F({1, 1, 3}, {1, 2, 3});
  HostTensor w = F({1, 1, 2}, {1, 10});
  // Stride 2: x[i] writes x[i] * w at 2i and 2i + 1.
  ExpectNear(RunOp("nn.conv1d_transpose", {x, w}, {{"strides", IntArray({2})}}, {1, 1, 6}),
             {1, 10, 2, 20, 3, 30});
  // Stride 1 overlaps neighbours; padding 1 crops one element at each end.
  ExpectNear(RunOp("nn.conv1d_transpose", {x, w}, {}, {1, 1, 4}), {1, 12, 23, 30});
  ExpectNear(RunOp("nn.conv1d_transpose", {x, w}, {{"padding", IntArray({1})}}, {1, 1, 2}),
             {12, 23});
  // output_padding adds a trailing element no input reaches.
  ExpectNear(RunOp("nn.conv1d_transpose", {x, w},
                   {{"strides", IntArray({2})}, {"output_padding", IntArray({1})}}, {1, 1, 7}),
             {1, 10, 2, 20, 3, 30, 0});
  // Two groups: input channel c feeds output channel c only.
  ExpectNear(RunOp("nn.conv2d_transpose", {Iota({1, 2, 1, 1}), F({2, 1, 1, 1}, {10, 100})},
                   {{"groups", 2}}, {1, 2, 1, 1}),
             {10, 200});
}

TEST(NnComputeTest, DenseAndMatmul) {
  ExpectNear(RunOp("nn.dense", {F({1, 2}, {1, 2}), F({3, 2}, {1, 0, 0, 1, 1, 1})}, {}, {1, 3}),
             {1, 2, 3});
  // Batch (2) against a broadcast 2-D operand.
  ExpectNear(RunOp("nn.matmul", {Iota({2, 2, 2}), F({2, 1}, {1, 1})}, {}, {2, 2, 1}),
             {3, 7, 11, 15});
  // A 1-D first operand is a row vector whose dim is dropped.
  HostTensor b = Iota({2, 3});
  ExpectNear(RunOp("nn.matmul", {F({2}, {1, 2}), b}, {}, {3}), {9, 12, 15});
  // transpose_b: b (3, 2) used as (2, 3).
  ExpectNear(RunOp("nn.matmul", {F({1, 2}, {1, 2}), F({3, 2}, {1, 4, 2, 5, 3, 6})},
                   {{"transpose_b", true}}, {1, 3}),
             {9, 12, 15});
  EXPECT_EQ(RunOp("nn.matmul", {T(kI32, {1, 2}, {2, 3}), T(kI32, {2, 1}, {4, 5})}, {}, {1, 1}),
            (Values{23}));
}

TEST(NnComputeTest, SoftmaxFamilyOfOneTwoThree) {
  HostTensor x = F({3}, {1, 2, 3});
  ExpectNear(RunOp("nn.softmax", {x}, {}, {3}), {0.09003057, 0.24472847, 0.66524096});
  ExpectNear(RunOp("nn.log_softmax", {x}, {}, {3}), {-2.40760596, -1.40760596, -0.40760596});
  ExpectNear(RunOp("nn.hardmax", {F({2, 3}, {1, 3, 3, 0, 0, -1})}, {}, {2, 3}), {0, 1, 0, 1, 0, 0});
  // Along axis 0 of a 2x2.
  ExpectNear(RunOp("nn.softmax", {F({2, 2}, {0, 5, 0, 5})}, {{"axis", 0}}, {2, 2}),
             {0.5, 0.5, 0.5, 0.5});
}

// Rows of 40 (a multiple of 8, reduced in two stages: 8 partial maxima and sums, then those
// combined) against the softmax computed here in double, with one large outlier per row so the
// maximum's subtraction matters.
TEST(NnComputeTest, SoftmaxOfLongRowsMatchesDoublePrecision) {
  Values x;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 40; ++k) x.push_back(0.1 * ((k * 7 + r * 3) % 11) + (k == 17 + r ? 80 : 0));
  }
  Values expected, expected_log;
  for (int r = 0; r < 2; ++r) {
    double max = -INFINITY, sum = 0;
    for (int k = 0; k < 40; ++k) max = std::max(max, x[r * 40 + k]);
    for (int k = 0; k < 40; ++k) sum += std::exp(x[r * 40 + k] - max);
    for (int k = 0; k < 40; ++k) {
      expected.push_back(std::exp(x[r * 40 + k] - max) / sum);
      expected_log.push_back(x[r * 40 + k] - max - std::log(sum));
    }
  }
  ExpectNear(RunOp("nn.softmax", {F({2, 40}, x)}, {}, {2, 40}), expected, 1e-6);
  ExpectNear(RunOp("nn.log_softmax", {F({2, 40}, x)}, {}, {2, 40}), expected_log, 1e-5);
}

TEST(NnComputeTest, Normalizations) {
  // batch_norm: channel 0 (1 - 0) / 1 * 1 + 0, channel 1 (2 - 1) / 2 * 2 + 1.
  ExpectNear(RunOp("nn.batch_norm",
                   {F({1, 2, 1, 1}, {1, 2}), F({2}, {1, 2}), F({2}, {0, 1}), F({2}, {0, 1}),
                    F({2}, {1, 4})},
                   {{"epsilon", 0.0}}, {1, 2, 1, 1}),
             {1, 2});
  // layer_norm of [1, 2, 3]: mean 2, variance 2/3.
  double s = std::sqrt(1.5);
  ExpectNear(RunOp("nn.layer_norm", {F({1, 3}, {1, 2, 3}), F({3}, {1, 1, 1}), F({3}, {0, 0, 0})},
                   {{"epsilon", 0.0}}, {1, 3}),
             {-s, 0, s});
  ExpectNear(
      RunOp("nn.layer_norm", {F({1, 3}, {1, 2, 3}), F({3}, {2, 2, 2})}, {{"epsilon", 0.0}}, {1, 3}),
      {-2 * s, 0, 2 * s});
  // instance_norm of [1, 3]: mean 2, variance 1; then 2 * x' + 1.
  ExpectNear(RunOp("nn.instance_norm", {F({1, 1, 2}, {1, 3}), F({1}, {2}), F({1}, {1})},
                   {{"epsilon", 0.0}}, {1, 1, 2}),
             {-1, 3});
  // lrn, size 3, alpha / size = 1, beta 1, bias 1: x / (1 + sum of squares
  // of the channel and its neighbours).
  ExpectNear(RunOp("nn.lrn", {F({1, 3, 1, 1}, {1, 2, 3})},
                   {{"size", 3}, {"alpha", 3.0}, {"beta", 1.0}, {"bias", 1.0}}, {1, 3, 1, 1}),
             {1.0 / 6, 2.0 / 15, 3.0 / 14});
  ExpectNear(RunOp("nn.bias_add", {F({1, 2, 2}, {1, 2, 3, 4}), F({2}, {10, 20})}, {}, {1, 2, 2}),
             {11, 12, 23, 24});
}

TEST(NnComputeTest, PadModes) {
  HostTensor x = F({3}, {1, 2, 3});
  HostTensor zero = F({}, {0});
  ExpectNear(
      RunOp("nn.pad", {x, zero}, {{"pad_width", IntArray({2, 2})}, {"pad_mode", "reflect"}}, {7}),
      {3, 2, 1, 2, 3, 2, 1});
  ExpectNear(
      RunOp("nn.pad", {x, zero}, {{"pad_width", IntArray({2, 2})}, {"pad_mode", "edge"}}, {7}),
      {1, 1, 1, 2, 3, 3, 3});
  ExpectNear(RunOp("nn.pad", {x, F({1}, {9})}, {{"pad_width", IntArray({1, 0})}}, {4}),
             {9, 1, 2, 3});
  // A negative width crops.
  ExpectNear(RunOp("nn.pad", {x, zero}, {{"pad_width", IntArray({-1, 1})}}, {3}), {2, 3, 0});
  ExpectNear(RunOp("nn.pad", {F({2, 1}, {1, 2}), F({}, {7})},
                   {{"pad_width", IntArray({0, 1, 1, 0})}}, {3, 2}),
             {7, 1, 7, 2, 7, 7});
}

TEST(NnComputeTest, DepthToSpaceAndBack) {
  HostTensor x = Iota({1, 8, 1, 1}, 0);  // channel c holds c
  ExpectNear(RunOp("nn.depth_to_space", {x}, {{"block_size", 2}}, {1, 2, 2, 2}),
             {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectNear(RunOp("nn.depth_to_space", {x}, {{"block_size", 2}, {"mode", "CRD"}}, {1, 2, 2, 2}),
             {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectNear(RunOp("nn.space_to_depth", {F({1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7})},
                   {{"block_size", 2}}, {1, 8, 1, 1}),
             {0, 1, 2, 3, 4, 5, 6, 7});
}

// ---- window ----------------------------------------------------------------------------

TEST(WindowComputeTest, MaxPooling) {
  ExpectNear(
      RunOp("nn.max_pool2d", {Iota({1, 1, 3, 3})}, {{"pool_size", IntArray({2, 2})}}, {1, 1, 2, 2}),
      {5, 6, 8, 9});
  // Padding is never the maximum, even of negative values.
  ExpectNear(
      RunOp("nn.max_pool1d", {F({1, 1, 3}, {-1, -3, -2})},
            {{"pool_size", IntArray({2})}, {"padding", IntArray({1})}, {"strides", IntArray({2})}},
            {1, 1, 2}),
      {-1, -2});
  EXPECT_EQ(RunOp("nn.max_pool1d", {T(kU8, {1, 1, 3}, {3, 9, 4})}, {{"pool_size", IntArray({2})}},
                  {1, 1, 2}),
            (Values{9, 9}));
}

TEST(WindowComputeTest, AveragePoolingDivisors) {
  HostTensor x = F({1, 1, 4}, {1, 2, 3, 4});
  std::vector<AttrsNode::Field> attrs = {{"pool_size", IntArray({3})}, {"padding", IntArray({1})}};
  ExpectNear(RunOp("nn.avg_pool1d", {x}, attrs, {1, 1, 4}), {1.5, 2, 3, 3.5});
  attrs.emplace_back("count_include_pad", true);
  ExpectNear(RunOp("nn.avg_pool1d", {x}, attrs, {1, 1, 4}), {1, 2, 3, 7.0 / 3});
  // ONNX's averagepool_2d_ceil: kernel 3, stride 2 on 4x4, ceil mode; the
  // last windows hang over the edge and average what they cover.
  ExpectNear(
      RunOp("nn.avg_pool2d", {Iota({1, 1, 4, 4})},
            {{"pool_size", IntArray({3, 3})}, {"strides", IntArray({2, 2})}, {"ceil_mode", true}},
            {1, 1, 2, 2}),
      {6, 7.5, 12, 13.5});
}

TEST(WindowComputeTest, GlobalPooling) {
  ExpectNear(RunOp("nn.global_avg_pool2d", {Iota({1, 2, 2, 1})}, {}, {1, 2, 1, 1}), {1.5, 3.5});
  ExpectNear(RunOp("nn.global_max_pool1d", {F({1, 1, 3}, {2, 7, 1})}, {}, {1, 1, 1}), {7});
  ExpectNear(RunOp("nn.global_avg_pool3d", {Iota({1, 1, 2, 1, 2})}, {}, {1, 1, 1, 1, 1}), {2.5});
}

TEST(WindowComputeTest, ThreeDimensionalWindowsAndGlobalPools) {
  HostTensor cube = Iota({1, 1, 2, 2, 2});  // 1..8
  HostTensor ones = F({1, 1, 2, 2, 2}, Values(8, 1));
  ExpectNear(RunOp("nn.conv3d", {cube, ones}, {}, {1, 1, 1, 1, 1}), {36});
  // One input element scattered through a (2, 1, 1) kernel.
  ExpectNear(RunOp("nn.conv3d_transpose", {F({1, 1, 1, 1, 1}, {2}), F({1, 1, 2, 1, 1}, {1, 3})}, {},
                   {1, 1, 2, 1, 1}),
             {2, 6});
  ExpectNear(RunOp("nn.max_pool3d", {cube}, {{"pool_size", IntArray({2, 2, 2})}}, {1, 1, 1, 1, 1}),
             {8});
  ExpectNear(RunOp("nn.avg_pool3d", {cube}, {{"pool_size", IntArray({2, 2, 2})}}, {1, 1, 1, 1, 1}),
             {4.5});
  ExpectNear(RunOp("nn.global_max_pool3d", {cube}, {}, {1, 1, 1, 1, 1}), {8});
  ExpectNear(RunOp("nn.global_max_pool2d", {Iota({1, 2, 1, 2})}, {}, {1, 2, 1, 1}), {2, 4});
  ExpectNear(RunOp("nn.global_avg_pool1d", {F({1, 1, 4}, {1, 2, 3, 6})}, {}, {1, 1, 1}), {3});
}

// ---- image -----------------------------------------------------------------------------

TEST(ImageComputeTest, NearestTwoTimesUpsample) {
  Values up =
      RunOp("image.resize2d", {Iota({1, 1, 2, 2})}, {{"size", IntArray({4, 4})}}, {1, 1, 4, 4});
  ExpectNear(up, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // asymmetric with ceil rounding (ONNX Resize-10 downsampling): x / 0.5.
  ExpectNear(RunOp("image.resize1d", {F({1, 1, 4}, {1, 2, 3, 4})},
                   {{"size", IntArray({2})},
                    {"coordinate_transformation_mode", "asymmetric"},
                    {"rounding_method", "ceil"}},
                   {1, 1, 2}),
             {1, 3});
  // round_prefer_ceil vs floor at exactly half: asymmetric x / 2 gives 0.5.
  HostTensor x = F({1, 1, 2}, {10, 20});
  std::vector<AttrsNode::Field> attrs = {{"size", IntArray({4})},
                                         {"coordinate_transformation_mode", "asymmetric"}};
  ExpectNear(RunOp("image.resize1d", {x}, attrs, {1, 1, 4}), {10, 10, 20, 20});
  attrs.emplace_back("rounding_method", "round_prefer_ceil");
  ExpectNear(RunOp("image.resize1d", {x}, attrs, {1, 1, 4}), {10, 20, 20, 20});
}

TEST(ImageComputeTest, LinearCoordinateModes) {
  HostTensor x = F({1, 1, 2}, {1, 3});
  // half_pixel: sources -0.25, 0.25, 0.75, 1.25, clamped to the edges.
  ExpectNear(
      RunOp("image.resize1d", {x}, {{"size", IntArray({4})}, {"method", "linear"}}, {1, 1, 4}),
      {1, 1.5, 2.5, 3});
  ExpectNear(RunOp("image.resize1d", {x},
                   {{"size", IntArray({3})},
                    {"method", "linear"},
                    {"coordinate_transformation_mode", "align_corners"}},
                   {1, 1, 3}),
             {1, 2, 3});
  ExpectNear(RunOp("image.resize1d", {x},
                   {{"size", IntArray({4})},
                    {"method", "linear"},
                    {"coordinate_transformation_mode", "asymmetric"}},
                   {1, 1, 4}),
             {1, 2, 3, 3});
  // 2-D bilinear: the centre of a 2x2 is the mean of its corners.
  Values bilinear = RunOp("image.resize2d", {Iota({1, 1, 2, 2})},
                          {{"size", IntArray({3, 3})},
                           {"method", "linear"},
                           {"coordinate_transformation_mode", "align_corners"}},
                          {1, 1, 3, 3});
  ExpectNear(bilinear, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
}

TEST(ImageComputeTest, CubicWithAndWithoutExcludingOutside) {
  // Keys' kernel with a = -0.75 at t = 0.5: weights -3/32, 19/32, 19/32, -3/32.
  HostTensor x = F({1, 1, 3}, {1, 2, 4});
  std::vector<AttrsNode::Field> attrs = {{"size", IntArray({6})},
                                         {"method", "cubic"},
                                         {"coordinate_transformation_mode", "asymmetric"}};
  Values cubic = RunOp("image.resize1d", {x}, attrs, {1, 1, 6});
  ASSERT_EQ(cubic.size(), 6u);
  ExpectNear({cubic[0], cubic[1], cubic[2]},
             {1, -3.0 / 32 * 1 + 19.0 / 32 * 1 + 19.0 / 32 * 2 - 3.0 / 32 * 4, 2});
  attrs.emplace_back("cubic_exclude", true);
  Values excluded = RunOp("image.resize1d", {x}, attrs, {1, 1, 6});
  ASSERT_EQ(excluded.size(), 6u);
  // The sample left of the input drops out and the rest renormalize.
  ExpectNear({excluded[1]}, {(19.0 / 32 * 1 + 19.0 / 32 * 2 - 3.0 / 32 * 4) / (35.0 / 32)});
}

TEST(ImageComputeTest, NearestThreeDimensional) {
  // Doubling D only (H and W keep their extents).
  ExpectNear(RunOp("image.resize3d", {Iota({1, 1, 2, 1, 2})}, {{"size", IntArray({4, 1, 2})}},
                   {1, 1, 4, 1, 2}),
             {1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(ImageComputeTest, CropAndResizeExtrapolates) {
  HostTensor x = F({1, 1, 5}, {1, 2, 3, 4, 5});
  // roi [0.5, 1.25] of 5 elements with scale 0.6 (resized length 3):
  // sources 2 + 1.5 k = 2, 3.5, 5 (outside).
  ExpectNear(RunOp("image.resize1d", {x},
                   {{"size", IntArray({3})},
                    {"scales", Floats({0.6})},
                    {"roi", Floats({0.5, 1.25})},
                    {"method", "linear"},
                    {"coordinate_transformation_mode", "tf_crop_and_resize"},
                    {"extrapolation_value", 10.0}},
                   {1, 1, 3}),
             {3, 4.5, 10});
}

// ---- transform -------------------------------------------------------------------------

TEST(TransformComputeTest, ReshapeTransposeSqueezeExpand) {
  HostTensor x = Iota({2, 3});
  ExpectNear(RunOp("reshape", {x}, {{"newshape", IntArray({3, -1})}}, {3, 2}), {1, 2, 3, 4, 5, 6});
  ExpectNear(RunOp("transpose", {x}, {}, {3, 2}), {1, 4, 2, 5, 3, 6});
  ExpectNear(RunOp("transpose", {Iota({1, 2, 3})}, {{"axes", IntArray({2, 0, 1})}}, {3, 1, 2}),
             {1, 4, 2, 5, 3, 6});
  ExpectNear(RunOp("squeeze", {Iota({1, 3, 1})}, {}, {3}), {1, 2, 3});
  ExpectNear(RunOp("squeeze", {Iota({1, 3, 1})}, {{"axis", IntArray({0})}}, {3, 1}), {1, 2, 3});
  ExpectNear(RunOp("expand_dims", {Iota({3})}, {{"axis", 0}, {"num_newaxis", 2}}, {1, 1, 3}),
             {1, 2, 3});
}

TEST(TransformComputeTest, LayoutTransformBlocksChannels) {
  // x[c, w] = 2c + w + 1 over 4 channels and 2 columns; NCHW2c orders it [c / 2, w, c % 2].
  ExpectNear(RunOp("layout_transform", {Iota({1, 4, 1, 2})},
                   {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NCHW2c")}},
                   {1, 2, 1, 2, 2}),
             {1, 3, 2, 4, 5, 7, 6, 8});
  ExpectNear(RunOp("layout_transform", {F({1, 2, 1, 2, 2}, {1, 3, 2, 4, 5, 7, 6, 8})},
                   {{"src_layout", std::string("NCHW2c")}, {"dst_layout", std::string("NCHW")}},
                   {1, 4, 1, 2}),
             {1, 2, 3, 4, 5, 6, 7, 8});
}

TEST(TransformComputeTest, BroadcastToAndTile) {
  ExpectNear(RunOp("broadcast_to", {F({2, 1}, {1, 2})},
                   {{"shape", ShapeValue{{Dim::Static(2), Dim::Static(3)}}}}, {2, 3}),
             {1, 1, 1, 2, 2, 2});
  ExpectNear(RunOp("tile", {F({2}, {1, 2})}, {{"reps", IntArray({2, 2})}}, {2, 4}),
             {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(TransformComputeTest, ConcatenateVariadicWithAnEmptyPiece) {
  ExpectNear(RunOp("concatenate", {F({2, 1}, {1, 2}), F({2, 0}, {}), F({2, 2}, {3, 4, 5, 6})},
                   {{"axis", 1}}, {2, 3}),
             {1, 3, 4, 2, 5, 6});
  ExpectNear(RunOp("concatenate", {F({1}, {1}), F({2}, {2, 3}), F({1}, {4})}, {}, {4}),
             {1, 2, 3, 4});
}

TEST(TransformComputeTest, SplitGivesOneTensorPerPiece) {
  auto even = Evaluate("split", {Iota({6})}, {{"indices_or_sections", 3}});
  ASSERT_TRUE(even.ok()) << even.status();
  ASSERT_EQ(even->size(), 3u);
  ExpectNear((*even)[2].ToDoubles(), {5, 6});
  auto at = Evaluate("split", {Iota({6})}, {{"indices_or_sections", IntArray({1, 4})}});
  ASSERT_TRUE(at.ok()) << at.status();
  ASSERT_EQ(at->size(), 3u);
  ExpectNear((*at)[0].ToDoubles(), {1});
  ExpectNear((*at)[1].ToDoubles(), {2, 3, 4});
  ExpectNear((*at)[2].ToDoubles(), {5, 6});
}

TEST(TransformComputeTest, StridedSliceNegativeStepAndClamping) {
  HostTensor x = Iota({10}, 0);
  ExpectNear(
      RunOp("strided_slice", {x},
            {{"begin", IntArray({8})}, {"end", IntArray({1})}, {"strides", IntArray({-3})}}, {3}),
      {8, 5, 2});
  ExpectNear(
      RunOp("strided_slice", {x}, {{"begin", IntArray({-3})}, {"end", IntArray({INT32_MAX})}}, {3}),
      {7, 8, 9});
  ExpectNear(
      RunOp("strided_slice", {Iota({2, 3})},
            {{"begin", IntArray({1})}, {"end", IntArray({3})}, {"axes", IntArray({1})}}, {2, 2}),
      {2, 3, 5, 6});
}

TEST(TransformComputeTest, ReverseAndReverseSequence) {
  ExpectNear(RunOp("reverse", {Iota({2, 2})}, {{"axis", 1}}, {2, 2}), {2, 1, 4, 3});
  // Time-major (4, 2): column b reverses its first lengths[b] entries.
  HostTensor x = F({4, 2}, {0, 10, 1, 11, 2, 12, 3, 13});
  ExpectNear(RunOp("reverse_sequence", {x, T(kI64, {2}, {2, 3})}, {}, {4, 2}),
             {1, 12, 0, 11, 2, 10, 3, 13});
}

TEST(TransformComputeTest, ShapeOfAndSize) {
  EXPECT_EQ(RunOp("shape_of", {Iota({2, 3, 4})}, {}, {3}), (Values{2, 3, 4}));
  EXPECT_EQ(RunOp("size", {Iota({2, 3, 4})}, {}, {}), (Values{24}));
}

// ---- index -----------------------------------------------------------------------------

TEST(IndexComputeTest, TakeWithNegativeIndices) {
  ExpectNear(RunOp("take", {F({3}, {10, 20, 30}), T(kI64, {2}, {-1, 0})}, {}, {2}), {30, 10});
  ExpectNear(RunOp("take", {Iota({2, 3}), T(kI32, {2, 1}, {2, -3})}, {{"axis", 1}}, {2, 2, 1}),
             {3, 1, 6, 4});
  ExpectNear(RunOp("take", {F({3}, {10, 20, 30}), Scalar(kI64, 1)}, {}, {}), {20});
}

TEST(IndexComputeTest, GatherElementsAndGatherNd) {
  // ONNX GatherElements example, axis 1.
  ExpectNear(RunOp("gather_elements", {F({2, 2}, {1, 2, 3, 4}), T(kI64, {2, 2}, {0, 0, 1, 0})},
                   {{"axis", 1}}, {2, 2}),
             {1, 1, 4, 3});
  HostTensor data = F({2, 2}, {0, 1, 2, 3});
  ExpectNear(RunOp("gather_nd", {data, T(kI64, {2, 2}, {0, 0, 1, 1})}, {}, {2}), {0, 3});
  ExpectNear(RunOp("gather_nd", {data, T(kI64, {2, 1}, {1, -2})}, {}, {2, 2}), {2, 3, 0, 1});
  // batch_dims 1: each batch entry indexes its own matrix.
  ExpectNear(RunOp("gather_nd", {Iota({2, 2, 2}, 0), T(kI64, {2, 1}, {1, 0})}, {{"batch_dims", 1}},
                   {2, 2}),
             {2, 3, 4, 5});
}

TEST(IndexComputeTest, ScatterElementsAndScatterNd) {
  // ONNX ScatterElements examples.
  ExpectNear(RunOp("scatter_elements",
                   {F({3, 3}, Values(9, 0)), T(kI64, {2, 3}, {1, 0, 2, 0, 2, 1}),
                    F({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2})},
                   {}, {3, 3}),
             {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2});
  ExpectNear(RunOp("scatter_elements",
                   {F({1, 5}, {1, 2, 3, 4, 5}), T(kI64, {1, 2}, {1, -2}), F({1, 2}, {1.1, 2.1})},
                   {{"axis", 1}}, {1, 5}),
             {1, 1.1, 3, 2.1, 5});
  // ONNX ScatterND example 1.
  ExpectNear(RunOp("scatter_nd",
                   {Iota({8}), T(kI64, {4, 1}, {4, 3, 1, 7}), F({4}, {9, 10, 11, 12})}, {}, {8}),
             {1, 11, 3, 10, 9, 6, 7, 12});
  // Rows of a matrix.
  ExpectNear(RunOp("scatter_nd", {F({2, 2}, {0, 0, 0, 0}), T(kI64, {1, 1}, {1}), F({1, 2}, {5, 6})},
                   {}, {2, 2}),
             {0, 0, 5, 6});
}

TEST(IndexComputeTest, OneHotWithNegativeAndOutOfRangeIndices) {
  ExpectNear(
      RunOp("one_hot", {T(kI64, {3}, {0, -1, 3}), F({}, {1}), F({}, {0})}, {{"depth", 3}}, {3, 3}),
      {1, 0, 0, 0, 0, 1, 0, 0, 0});
  ExpectNear(RunOp("one_hot", {T(kI32, {2}, {1, 0}), F({}, {5}), F({}, {-1})},
                   {{"depth", 2}, {"axis", 0}}, {2, 2}),
             {-1, 5, 5, -1});
}

TEST(IndexComputeTest, TopKOrdersTiesByIndex) {
  HostTensor x = F({4}, {3, 1, 3, 2});
  auto largest = Evaluate("topk", {x}, {{"k", 2}});
  ASSERT_TRUE(largest.ok()) << largest.status();
  ExpectNear((*largest)[0].ToDoubles(), {3, 3});
  EXPECT_EQ((*largest)[1].ToDoubles(), (Values{0, 2}));
  auto smallest = Evaluate("topk", {x}, {{"k", 3}, {"largest", false}});
  ASSERT_TRUE(smallest.ok()) << smallest.status();
  ExpectNear((*smallest)[0].ToDoubles(), {1, 2, 3});
  EXPECT_EQ((*smallest)[1].ToDoubles(), (Values{1, 3, 0}));
  auto rows = Evaluate("topk", {F({2, 2}, {1, 2, 4, 3})}, {{"k", 1}, {"axis", 1}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectNear((*rows)[0].ToDoubles(), {2, 4});
  EXPECT_EQ((*rows)[1].ToDoubles(), (Values{1, 0}));
}

TEST(IndexComputeTest, CumsumDirections) {
  HostTensor x = F({3}, {1, 2, 3});
  ExpectNear(RunOp("cumsum", {x}, {}, {3}), {1, 3, 6});
  ExpectNear(RunOp("cumsum", {x}, {{"exclusive", true}}, {3}), {0, 1, 3});
  ExpectNear(RunOp("cumsum", {x}, {{"reverse", true}}, {3}), {6, 5, 3});
  ExpectNear(RunOp("cumsum", {x}, {{"exclusive", true}, {"reverse", true}}, {3}), {5, 3, 0});
  EXPECT_EQ(RunOp("cumsum", {T(kI32, {2, 2}, {1, 2, 3, 4})}, {{"axis", 1}}, {2, 2}),
            (Values{1, 3, 3, 7}));
}

TEST(IndexComputeTest, TriluAndEyeLike) {
  HostTensor x = Iota({3, 3});
  ExpectNear(RunOp("trilu", {x}, {}, {3, 3}), {1, 2, 3, 0, 5, 6, 0, 0, 9});
  ExpectNear(RunOp("trilu", {x}, {{"upper", false}, {"k", -1}}, {3, 3}),
             {0, 0, 0, 4, 0, 0, 7, 8, 0});
  EXPECT_EQ(RunOp("eye_like", {Iota({2, 3})}, {{"k", 1}, {"dtype", kI32}}, {2, 3}),
            (Values{0, 1, 0, 0, 0, 1}));
}

TEST(IndexComputeTest, DataDependentOpsWithAStaticResultType) {
  EXPECT_EQ(RunOp("arange", {Scalar(kI64, 1), Scalar(kI64, 7), Scalar(kI64, 2)}, {}, {3},
                  MakeTensorType({3}, kI64)),
            (Values{1, 3, 5}));
  ExpectNear(
      RunOp("arange", {F({}, {0.5}), F({}, {2}), F({}, {0.5})}, {}, {3}, MakeTensorType({3}, kF32)),
      {0.5, 1, 1.5});
  EXPECT_EQ(RunOp("nonzero", {F({2, 2}, {1, 0, 0, 3})}, {}, {2, 2}, MakeTensorType({2, 2}, kI64)),
            (Values{0, 1, 0, 1}));
  ExpectNear(RunOp("compress", {F({3}, {1, 2, 3}), T(kBool, {3}, {0, 1, 1})}, {}, {2},
                   MakeTensorType({2}, kF32)),
             {2, 3});
  ExpectNear(RunOp("compress", {Iota({2, 2}), T(kBool, {1}, {1})}, {{"axis", 1}}, {2, 1},
                   MakeTensorType({2, 1}, kF32)),
             {1, 3});
}

TEST(IndexComputeTest, UniqueSortedAndInOrderOfFirstOccurrence) {
  HostTensor x = F({6}, {2, 1, 1, 3, 4, 3});
  Type result = MakeTupleType({MakeTensorType({4}, kF32), MakeTensorType({4}, kI64),
                               MakeTensorType({6}, kI64), MakeTensorType({4}, kI64)});
  auto sorted = Evaluate("unique", {x}, {}, result);
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  ASSERT_EQ(sorted->size(), 4u);
  ExpectNear((*sorted)[0].ToDoubles(), {1, 2, 3, 4});
  EXPECT_EQ((*sorted)[1].ToDoubles(), (Values{1, 0, 3, 4}));
  EXPECT_EQ((*sorted)[2].ToDoubles(), (Values{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ((*sorted)[3].ToDoubles(), (Values{2, 1, 2, 1}));
  auto unsorted = Evaluate("unique", {x}, {{"sorted", false}}, result);
  ASSERT_TRUE(unsorted.ok()) << unsorted.status();
  ExpectNear((*unsorted)[0].ToDoubles(), {2, 1, 3, 4});
  EXPECT_EQ((*unsorted)[1].ToDoubles(), (Values{0, 1, 3, 4}));
  EXPECT_EQ((*unsorted)[2].ToDoubles(), (Values{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ((*unsorted)[3].ToDoubles(), (Values{1, 2, 2, 1}));
  // Rows of a matrix (axis 0): [[1, 2], [0, 5], [1, 2]] has rows [0, 5] < [1, 2].
  Type rows = MakeTupleType({MakeTensorType({2, 2}, kF32), MakeTensorType({2}, kI64),
                             MakeTensorType({3}, kI64), MakeTensorType({2}, kI64)});
  auto by_row = Evaluate("unique", {F({3, 2}, {1, 2, 0, 5, 1, 2})}, {}, rows);
  ASSERT_TRUE(by_row.ok()) << by_row.status();
  ExpectNear((*by_row)[0].ToDoubles(), {0, 5, 1, 2});
  EXPECT_EQ((*by_row)[2].ToDoubles(), (Values{1, 0, 1}));
  EXPECT_EQ((*by_row)[3].ToDoubles(), (Values{1, 2}));
}

// ---- device ----------------------------------------------------------------------------

TEST(DeviceComputeTest, AnnotationsCopyTheirInput) {
  ExpectNear(RunOp("on_device", {F({2}, {1, 2})}, {{"device_type", "cpu"}}, {2}), {1, 2});
  ExpectNear(RunOp("device_copy", {F({2}, {3, 4})}, {}, {2}), {3, 4});
}

}  // namespace
}  // namespace kiln
