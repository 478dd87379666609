// Vectorized math in native code: a vectorized elementwise kernel calls glibc's libmvec variants
// (engine/codegen/llvm/vector_math.h) or, for float32 exp, sigmoid and erf, the inline sequences
// (inline_exp.h, inline_erf.h), and their results stay within the documented error bound of the
// double-precision libm value: at most 4 ulp for the functions themselves (glibc's manual; the
// inline exp's polynomial is under 1 ulp), 6 ulp for sigmoid (exp, then an add and a divide, each
// rounding once), 8 for the inline erf (a rational function whose float32 evaluation rounds up
// to 7 ulp near erf = 1, inline_erf.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"

namespace kiln::driver {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kSize = 4096;  // a multiple of 8: one vectorized loop, no scalar tail

struct MathCase {
  const char* op;
  std::function<double(double)> reference;
  double lo, hi;
  double max_ulp;
};

CompileResult CompileUnary(const std::string& op, const char* dtype, const std::string& cpu,
                           bool emit_ir) {
  std::string text = absl::StrCat("def @main(%x: Tensor[(", kSize, "), ", dtype, "]) {\n  ", op,
                                  "(%x)\n}\n");
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  // This machine's triple with an older CPU: code the JIT here can run.
  if (!cpu.empty()) options.codegen->target = {codegen::ResolveTarget({})->triple, cpu, ""};
  options.codegen->emit_llvm_ir = emit_ir;
  absl::StatusOr<CompileResult> compiled = CompileGraphText(text, options);
  KILN_CHECK(compiled.ok()) << compiled.status();
  return *std::move(compiled);
}

// The distance from `got` to `reference` in units of the spacing of `dtype` at `reference`.
double UlpError(double got, double reference, bool is_float) {
  if (std::isnan(reference)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(reference)) return got == reference ? 0 : INFINITY;
  double magnitude = std::fabs(reference);
  double ulp = is_float ? std::nextafter(static_cast<float>(magnitude), INFINITY) -
                              static_cast<float>(magnitude)
                        : std::nextafter(magnitude, INFINITY) - magnitude;
  // Below the normal range the spacing is fixed: measure against the smallest normal's.
  double min_ulp = is_float ? std::ldexp(1.0, -149) : std::ldexp(1.0, -1074);
  return std::fabs(got - reference) / std::max(ulp, min_ulp);
}

const MathCase kCases[] = {
    {"exp", [](double x) { return std::exp(x); }, -87, 88, 4},
    // Into the subnormals and past the overflow threshold (88.72).
    {"exp", [](double x) { return std::exp(x); }, -110, 95, 4},
    {"log", [](double x) { return std::log(x); }, 1e-3, 1e6, 4},
    {"tanh", [](double x) { return std::tanh(x); }, -9, 9, 4},
    {"erf", [](double x) { return std::erf(x); }, -4, 4, 4},
    {"sin", [](double x) { return std::sin(x); }, -100, 100, 4},
    {"cos", [](double x) { return std::cos(x); }, -100, 100, 4},
    {"atan", [](double x) { return std::atan(x); }, -50, 50, 4},
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30, 6},
    // Down to where the result leaves the normal range (1.2e-38 at x = -87.3).
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -87.3, 100, 6},
};

// The inline float32 erf's bound (inline_erf.h: 7 ulp measured, near |x| = 3.6).
constexpr double kInlineErfMaxUlp = 8;

// Whether native code computes float32 `function` inline rather than calling libmvec or libm.
bool InlineFloat(const std::string& function) { return function == "exp" || function == "erf"; }

std::vector<double> Sweep(const MathCase& c, bool is_float) {
  std::vector<double> x;
  for (int i = 0; i < kSize; ++i) {
    double v = c.lo + (c.hi - c.lo) * (i + 0.37) / kSize;
    x.push_back(is_float ? static_cast<float>(v) : v);
  }
  return x;
}

std::vector<double> RunFloatExpression(const std::string& body, const std::vector<double>& x);

void CheckAccuracy(const std::string& cpu, const char* dtype, DataType kiln_dtype,
                   const std::string& expected_call) {
  bool is_float = kiln_dtype == DataType::kFloat32;
  for (const MathCase& c : kCases) {
    CompileResult compiled = CompileUnary(c.op, dtype, cpu, /*emit_ir=*/true);
    // A sigmoid calls exp; every other case calls its own function. float32 exp is inline.
    std::string function = std::string(c.op) == "sigmoid" ? "exp" : c.op;
    std::string call = absl::StrCat(expected_call, "_", function, is_float ? "f" : "");
    if (is_float && InlineFloat(function)) {
      EXPECT_THAT(compiled.native->llvm_ir, Not(HasSubstr(function + "f"))) << c.op << " on " << cpu;
    } else {
      EXPECT_THAT(compiled.native->llvm_ir, HasSubstr(call)) << c.op << " on " << cpu;
    }
    std::vector<double> x = Sweep(c, is_float);
    ModelTensors tensors = MakeModelTensors(compiled);
    tensors.inputs[0] = loop::HostTensor::FromDoubles(kiln_dtype, {kSize}, x);
    absl::Status ran = RunNative(compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]});
    ASSERT_TRUE(ran.ok()) << c.op << ": " << ran;
    std::vector<double> y = tensors.outputs[0].ToDoubles();
    double worst = 0;
    double worst_x = 0;
    for (int i = 0; i < kSize; ++i) {
      double error = UlpError(y[i], c.reference(x[i]), is_float);
      if (error > worst) {
        worst = error;
        worst_x = x[i];
      }
    }
    double bound = is_float && function == "erf" ? kInlineErfMaxUlp : c.max_ulp;
    EXPECT_LE(worst, bound) << c.op << " (" << dtype << ", " << cpu << ") at x = " << worst_x;
  }
}

// AVX2 (`d`, 256 bits): one call per 8 floats or 4 doubles.
TEST(VectorMathTest, Avx2VariantsStayWithinTheDocumentedError) {
  CheckAccuracy("haswell", "float32", DataType::kFloat32, "_ZGVdN8v");
  CheckAccuracy("haswell", "float64", DataType::kFloat64, "_ZGVdN4v");
}

// This machine's own CPU (vscalefps and vrangeps on an AVX-512 host, inline_exp.h): the inline
// float32 exp, sigmoid and erf within the same bounds as on AVX2.
TEST(VectorMathTest, InlineExpAndSigmoidOnThisMachineStayWithinTheDocumentedError) {
  for (const MathCase& c : kCases) {
    std::string op = c.op;
    if (op != "exp" && op != "sigmoid" && op != "erf") continue;
    double bound = op == "erf" ? kInlineErfMaxUlp : c.max_ulp;
    std::vector<double> x = Sweep(c, /*is_float=*/true);
    std::vector<double> y = RunFloatExpression(absl::StrCat(c.op, "(%x)"), x);
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double error = UlpError(y[i], c.reference(x[i]), /*is_float=*/true);
      if (error > worst) std::tie(worst, worst_x) = std::tie(error, x[i]);
    }
    EXPECT_LE(worst, bound) << c.op << " on [" << c.lo << ", " << c.hi << "] at x = " << worst_x;
  }
}

// SSE (`b`, 128 bits): an 8-float vector is two calls of 4.
TEST(VectorMathTest, SseVariantsSplitWiderVectors) {
  CheckAccuracy("x86-64-v2", "float32", DataType::kFloat32, "_ZGVbN4v");
}

// Other targets keep one libm call per lane: no libmvec names in an aarch64 module.
TEST(VectorMathTest, OtherTargetsCallLibmPerLane) {
  std::string text = absl::StrCat("def @main(%x: Tensor[(", kSize, "), float32]) {\n  tanh(%x)\n}\n");
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  options.codegen->target = {"aarch64-linux-gnu", "", ""};
  options.codegen->emit_llvm_ir = true;
  absl::StatusOr<CompileResult> compiled = CompileGraphText(text, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_THAT(compiled->native->llvm_ir, HasSubstr("@tanhf("));
  EXPECT_THAT(compiled->native->llvm_ir, Not(HasSubstr("_ZGV")));
}

// `body` (an expression of %x) of float32 values through native code; 11 values are one vector
// of 8 and 3 in the scalar tail.
std::vector<double> RunFloatExpression(const std::string& body, const std::vector<double>& x) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  absl::StatusOr<CompileResult> compiled = CompileGraphText(
      absl::StrCat("def @main(%x: Tensor[(", x.size(), "), float32]) {\n  ", body, "\n}\n"),
      options);
  KILN_CHECK(compiled.ok()) << compiled.status();
  ModelTensors tensors = MakeModelTensors(*compiled);
  tensors.inputs[0] = loop::HostTensor::FromDoubles(
      DataType::kFloat32, {static_cast<int64_t>(x.size())}, x);
  absl::Status ran = RunNative(*compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]});
  KILN_CHECK(ran.ok()) << ran;
  return tensors.outputs[0].ToDoubles();
}

std::vector<double> RunFloatUnary(const std::string& op, const std::vector<double>& x) {
  return RunFloatExpression(op + "(%x)", x);
}

// Native maximum and minimum propagate a NaN from either operand and, on a tie of +0 and -0, keep
// the first operand, as the interpreter (and NumPy's maximum/minimum) do: the pairs (x[i],
// x[10 - i]) put NaN on each side and -0 against +0 both ways, through a vector body and its
// scalar tail (11 elements).
TEST(VectorMathTest, MaximumAndMinimumPropagateNaNFromEitherSideAndKeepTheFirstOnATie) {
  const std::vector<double> x = {NAN, 1, -0.0, 2, 5, 9, -3, 4, 0.0, -1, 7};
  std::vector<double> largest = RunFloatExpression("maximum(%x, reverse(%x, axis=0))", x);
  std::vector<double> smallest = RunFloatExpression("minimum(%x, reverse(%x, axis=0))", x);
  ASSERT_EQ(largest.size(), 11u);
  ASSERT_EQ(smallest.size(), 11u);
  const std::vector<double> expected_largest = {NAN, 1, -0.0, 4, 5, 9, 5, 4, 0.0, 1, NAN};
  const std::vector<double> expected_smallest = {NAN, -1, -0.0, 2, -3, 9, -3, 2, 0.0, -1, NAN};
  for (size_t i = 0; i < x.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("element ", i));
    for (auto [got, want] : {std::pair{largest[i], expected_largest[i]},
                             std::pair{smallest[i], expected_smallest[i]}}) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << got;
      } else {
        EXPECT_EQ(got, want);
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << got;
      }
    }
  }
}

// The inline exp's special values, through a vector body and its scalar tail alike (11 elements:
// one vector of 8 and 3 in the tail).
TEST(VectorMathTest, InlineExpSpecialValues) {
  std::vector<double> y =
      RunFloatUnary("exp", {NAN, -INFINITY, INFINITY, 0, 1, -200, 200, 88.7, NAN, -INFINITY, 1});
  ASSERT_EQ(y.size(), 11u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], INFINITY);
  EXPECT_EQ(y[3], 1);
  EXPECT_EQ(y[4], static_cast<float>(M_E));  // exp(1) rounded to float: the polynomial's 1-ulp error is 0 here
  EXPECT_EQ(y[5], 0);
  EXPECT_EQ(y[6], INFINITY);
  EXPECT_NEAR(y[7], std::exp(static_cast<double>(static_cast<float>(88.7))), 4e31);  // ~3.3e38, 1 ulp = 2e31
  EXPECT_TRUE(std::isnan(y[8]));
  EXPECT_EQ(y[9], 0);
  EXPECT_EQ(y[10], y[4]);  // the tail computes what the vector body computes
}

// The inline sigmoid's special values and clamped ends, vector body and scalar tail alike.
TEST(VectorMathTest, InlineSigmoidSpecialValues) {
  std::vector<double> y =
      RunFloatUnary("sigmoid", {NAN, -INFINITY, INFINITY, 0, -200, 200, 20, -87, NAN, -INFINITY, 0});
  ASSERT_EQ(y.size(), 11u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 0.5);  // 1 / (1 + exp(0)), every step exact
  EXPECT_EQ(y[4], 0);    // the true value (1e-87) is far below float's smallest subnormal
  EXPECT_EQ(y[5], 1);
  EXPECT_EQ(y[6], 1);  // 1 - 2e-9 rounds to 1 in float
  EXPECT_NEAR(y[7], std::exp(-87.0), 6 * std::ldexp(1.0, -149 + 23));  // 1.6e-38, a few ulp
  EXPECT_TRUE(std::isnan(y[8]));
  EXPECT_EQ(y[9], 0);
  EXPECT_EQ(y[10], y[3]);  // the tail computes what the vector body computes
}

// The inline erf's special values: NaN stays NaN, the infinities and everything beyond |x| = 4
// give exactly +-1 (erf(4) = 1 - 1.5e-8 rounds to 1 in float32), zeros keep their sign, tiny
// values are 2 / sqrt(pi) x; vector body and scalar tail alike.
TEST(VectorMathTest, InlineErfSpecialValues) {
  std::vector<double> y =
      RunFloatUnary("erf", {NAN, -INFINITY, INFINITY, 0, -0.0, 4, -10, 1e-30, NAN, 3.6, -0.0});
  ASSERT_EQ(y.size(), 11u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], -1);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 0);
  EXPECT_TRUE(std::signbit(y[4])) << y[4];
  EXPECT_EQ(y[5], 1);
  EXPECT_EQ(y[6], -1);
  EXPECT_NEAR(y[7], 1.1283791670955126e-30, 1e-36);
  EXPECT_TRUE(std::isnan(y[8]));
  EXPECT_LE(y[9], 1.0);  // float32 rounding takes the ratio above 1 here; the clamp does not
  EXPECT_NEAR(y[9], std::erf(static_cast<double>(static_cast<float>(3.6))), 4.2e-7);
  EXPECT_TRUE(std::signbit(y[10])) << y[10];  // the tail computes what the vector body computes
}

// Swish, x * sigmoid(x) (EfficientNet's activation), is computed as x / (1 + exp(-x)): within
// sigmoid's 6 ulp of the double-precision value over the range that matters and down to where
// the result leaves the normal range, and with x * sigmoid(x)'s special values.
TEST(VectorMathTest, SwishStaysWithinSigmoidsBoundAndKeepsItsSpecialValues) {
  for (auto [lo, hi] : {std::pair{-30.0, 30.0}, std::pair{-87.3, 100.0}}) {
    std::vector<double> x;
    for (int i = 0; i < kSize; ++i) {
      x.push_back(static_cast<float>(lo + (hi - lo) * (i + 0.37) / kSize));
    }
    std::vector<double> y = RunFloatExpression("multiply(%x, sigmoid(%x))", x);
    double worst = 0, worst_x = 0;
    for (int i = 0; i < kSize; ++i) {
      double error = UlpError(y[i], x[i] / (1 + std::exp(-x[i])), /*is_float=*/true);
      if (error > worst) std::tie(worst, worst_x) = std::tie(error, x[i]);
    }
    EXPECT_LE(worst, 6) << "swish on [" << lo << ", " << hi << "] at x = " << worst_x;
  }
  std::vector<double> y = RunFloatExpression("multiply(%x, sigmoid(%x))",
                                             {NAN, -INFINITY, INFINITY, 0, -200, 200, 20, 1, NAN, -1, 0});
  ASSERT_EQ(y.size(), 11u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));  // -inf * sigmoid(-inf) = -inf * 0
  EXPECT_EQ(y[2], INFINITY);
  EXPECT_EQ(y[3], 0);
  EXPECT_EQ(y[4], 0);  // -200 * 1e-87: -0
  EXPECT_EQ(y[5], 200);
  EXPECT_EQ(y[6], 20);  // 20 * (1 - 2e-9) rounds to 20 in float
  EXPECT_FLOAT_EQ(y[7], 1 / (1 + std::exp(-1.0)));
  EXPECT_TRUE(std::isnan(y[8]));
  EXPECT_FLOAT_EQ(y[9], -1 / (1 + std::exp(1.0)));  // the scalar tail, as the vector body
  EXPECT_EQ(y[10], 0);
}

}  // namespace
}  // namespace kiln::driver
