// Native code through the driver, as tools and the service get it: results against values
// computed by hand and against the interpreter (Kiln's reference semantics), the entry's checks
// of caller buffers, byte-identical objects, cross-compilation checked by disassembly, and the
// object and header linked into a C program with the system compiler and libkiln_rt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <unistd.h>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A 3x3 convolution with zero padding 1 (the vector loads of the padding are guarded), a bias
// and relu: the shape of a CNN's layers.
constexpr char kConv[] = R"(
def @main(%x: Tensor[(1, 2, 8, 32), float32], %w: Tensor[(4, 2, 3, 3), float32],
          %b: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]) /* si=conv */;
  %1 = add(%0, %b) /* si=bias */;
  nn.relu(%1) /* si=relu */
}
)";

CompileResult CompileNative(const char* text, codegen::CodegenOptions codegen = HostCodegenOptions()) {
  CompileOptions options;
  options.codegen = std::move(codegen);
  absl::StatusOr<CompileResult> compiled = CompileGraphText(text, options);
  KILN_CHECK(compiled.ok()) << compiled.status();
  return *std::move(compiled);
}

std::vector<double> Ramp(int64_t n, double scale, double offset) {
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(offset + scale * static_cast<double>((i * 37) % 23));
  return values;
}

TEST(CodegenTest, ConvWithPaddingMatchesHandComputedValues) {
  // All-ones input and weights: an output element counts the input pixels its 3x3 window
  // covers, times the 2 channels: 2*4 at corners, 2*6 on edges, 2*9 inside; bias 1 is added.
  CompileResult compiled = CompileNative(kConv);
  ModelTensors tensors = MakeModelTensors(compiled);
  tensors.inputs[0] = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 8, 32},
                                                    std::vector<double>(2 * 8 * 32, 1.0));
  tensors.inputs[1] = loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 2, 3, 3},
                                                    std::vector<double>(4 * 2 * 9, 1.0));
  tensors.inputs[2] = loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 1, 1}, {1, 1, 1, 1});
  std::vector<loop::HostTensor*> inputs = {&tensors.inputs[0], &tensors.inputs[1], &tensors.inputs[2]};
  ASSERT_TRUE(RunNative(compiled, inputs, {&tensors.outputs[0]}).ok());
  std::vector<double> out = tensors.outputs[0].ToDoubles();
  auto at = [&](int c, int y, int x) { return out[(c * 8 + y) * 32 + x]; };
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(at(c, 0, 0), 9.0);
    EXPECT_EQ(at(c, 7, 31), 9.0);
    EXPECT_EQ(at(c, 0, 5), 13.0);
    EXPECT_EQ(at(c, 4, 0), 13.0);
    EXPECT_EQ(at(c, 3, 17), 19.0);
  }
}

// One loaded model run twice: its input, output and workspace buffers are allocated by the first
// run and reused by the second, which must still compute from its own inputs only (all-ones
// then all-twos: every output of the second run doubles the first's, plus the bias's share).
TEST(CodegenTest, ALoadedModelRunTwiceComputesEachRunFromItsOwnInputs) {
  CompileResult compiled = CompileNative(kConv);
  absl::StatusOr<std::unique_ptr<codegen::NativeModel>> model = LoadNative(compiled);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::vector<double>> results;
  for (double value : {1.0, 2.0}) {
    ModelTensors tensors = MakeModelTensors(compiled);
    tensors.inputs[0] = loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 8, 32},
                                                      std::vector<double>(2 * 8 * 32, value));
    tensors.inputs[1] = loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 2, 3, 3},
                                                      std::vector<double>(4 * 2 * 9, 1.0));
    tensors.inputs[2] = loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 1, 1}, {1, 1, 1, 1});
    ASSERT_TRUE((*model)->Run({&tensors.inputs[0], &tensors.inputs[1], &tensors.inputs[2]},
                              {&tensors.outputs[0]}).ok());
    results.push_back(tensors.outputs[0].ToDoubles());
  }
  // Corner 2*4 window values + bias 1: 9, then 2*2*4 + 1 = 17; inside 2*9 + 1 = 19, then 37.
  EXPECT_EQ(results[0][0], 9.0);
  EXPECT_EQ(results[1][0], 17.0);
  EXPECT_EQ(results[0][3 * 32 + 17], 19.0);
  EXPECT_EQ(results[1][3 * 32 + 17], 37.0);
}

// Runs `compiled` natively and with the interpreter on `inputs`; every output must agree within
// rtol = atol = 1e-5. Returns the interpreter's outputs.
std::vector<std::vector<double>> ExpectNativeMatchesInterpreter(const CompileResult& compiled,
                                                                std::vector<loop::HostTensor> inputs) {
  ModelTensors native = MakeModelTensors(compiled);
  ModelTensors interpreted = MakeModelTensors(compiled);
  native.inputs = inputs;
  interpreted.inputs = std::move(inputs);
  auto pointers = [](std::vector<loop::HostTensor>& tensors) {
    std::vector<loop::HostTensor*> result;
    for (auto& t : tensors) result.push_back(&t);
    return result;
  };
  EXPECT_TRUE(RunNative(compiled, pointers(native.inputs), pointers(native.outputs)).ok());
  EXPECT_TRUE(RunModel(compiled, pointers(interpreted.inputs), pointers(interpreted.outputs)).ok());
  std::vector<std::vector<double>> reference;
  for (size_t out = 0; out < native.outputs.size(); ++out) {
    std::vector<double> a = native.outputs[out].ToDoubles(), b = interpreted.outputs[out].ToDoubles();
    EXPECT_EQ(a.size(), b.size());
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i]))) << "output " << out << " element " << i;
    }
    reference.push_back(std::move(b));
  }
  return reference;
}

TEST(CodegenTest, ConvMatchesTheInterpreter) {
  std::vector<std::vector<double>> out = ExpectNativeMatchesInterpreter(
      CompileNative(kConv),
      {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 8, 32}, Ramp(512, 0.25, -2)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 2, 3, 3}, Ramp(72, -0.125, 1)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {4, 1, 1}, {0.5, -1, 0, 2})});
  ASSERT_EQ(out.size(), 1u);
  // relu did not zero everything: the comparison means something.
  EXPECT_GT(std::count_if(out[0].begin(), out[0].end(), [](double v) { return v > 0; }), 0);
}

// A CNN's odd widths and strides: a 14-wide feature map is vectorized 7 lanes at a time, and a
// stride-3 1x1 convolution (no padding stage) reads each input row as one contiguous span and a
// shuffle, no gather; both compute what the interpreter does.
TEST(CodegenTest, OddWidthsAndStridedRowsAreVectorLoads) {
  constexpr char kModel[] = R"(
def @main(%x: Tensor[(1, 4, 14, 42), float32], %w: Tensor[(8, 4, 1, 3), float32], %v: Tensor[(8, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[1, 3]) /* si=strided */;
  %1 = nn.conv2d(%x, %v) /* si=pointwise */;
  (%0, %1)
}
)";
  codegen::CodegenOptions options = HostCodegenOptions();
  options.emit_llvm_ir = true;
  CompileResult compiled = CompileNative(kModel, options);
  EXPECT_THAT(compiled.native->llvm_ir, Not(HasSubstr("gather")));
  EXPECT_THAT(compiled.native->llvm_ir, HasSubstr("<7 x float>"));  // 14 = 2 x 7 lanes
  // Distinct buffers carry alias scopes, so accumulators can stay in registers.
  EXPECT_THAT(compiled.native->llvm_ir, HasSubstr("!alias.scope"));
  ExpectNativeMatchesInterpreter(
      compiled,
      {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 4, 14, 42}, Ramp(4 * 14 * 42, 0.25, -2)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {8, 4, 1, 3}, Ramp(96, -0.125, 1)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {8, 4, 1, 1}, Ramp(32, 0.5, -1))});
}

// A blocked convolution's reduce loops hold its unrolled register tile: they carry
// llvm.loop.unroll.disable (LLVM copying such bodies again cost compile time for no speed),
// and the code still computes what the interpreter does.
TEST(CodegenTest, LoopsAroundAnUnrolledTileAreNotUnrolledAgain) {
  constexpr char kModel[] = R"(
def @main(%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(32, 16, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1]) /* si=conv */
}
)";
  codegen::CodegenOptions options = HostCodegenOptions();
  options.emit_llvm_ir = true;
  CompileResult compiled = CompileNative(kModel, options);
  EXPECT_THAT(compiled.native->llvm_ir, HasSubstr("llvm.loop.unroll.disable"));
  ExpectNativeMatchesInterpreter(
      compiled,
      {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 16, 14, 14}, Ramp(16 * 14 * 14, 0.25, -2)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {32, 16, 3, 3}, Ramp(32 * 16 * 9, -0.125, 1))});
}

// A concatenation picks its source per channel row: the vector condition is one scalar in every
// lane, so native code branches to the one source a row reads rather than issuing masked loads
// of both (a channel shuffle's blocked source is a gather).
TEST(CodegenTest, AConcatenationReadsOnlyTheSourceOfEachRow) {
  constexpr char kModel[] = R"(
def @main(%a: Tensor[(1, 2, 3, 16), float32], %b: Tensor[(1, 3, 3, 16), float32]) {
  %0 = concatenate(%a, %b, axis=1) /* si=concat */;
  nn.relu(%0) /* si=relu */
}
)";
  codegen::CodegenOptions options = HostCodegenOptions();
  options.emit_llvm_ir = true;
  CompileResult compiled = CompileNative(kModel, options);
  EXPECT_THAT(compiled.native->llvm_ir, Not(HasSubstr("llvm.masked")));
  std::vector<double> a = Ramp(2 * 3 * 16, 0.5, -3), b = Ramp(3 * 3 * 16, -0.25, 2);
  std::vector<std::vector<double>> out = ExpectNativeMatchesInterpreter(
      compiled, {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 2, 3, 16}, a),
                 loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 3, 3, 16}, b)});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 5u * 3 * 16);
  // Channels 0-1 are a's, 2-4 b's, each through relu.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(out[0][i], std::max(a[i], 0.0)) << i;
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(out[0][a.size() + i], std::max(b[i], 0.0)) << i;
}

TEST(CodegenTest, IntegerDivisionFollowsTheLoopIRRules) {
  // Truncating division; by zero gives 0 (no trap); INT_MIN / -1 wraps to INT_MIN.
  CompileResult compiled = CompileNative(R"(
def @main(%a: Tensor[(5), int32], %b: Tensor[(5), int32]) {
  divide(%a, %b)
}
)");
  ModelTensors tensors = MakeModelTensors(compiled);
  tensors.inputs[0] = loop::HostTensor::FromValues<int32_t>(DataType::kInt32, {5}, {7, -7, 5, INT32_MIN, 9});
  tensors.inputs[1] = loop::HostTensor::FromValues<int32_t>(DataType::kInt32, {5}, {2, 2, 0, -1, -3});
  ASSERT_TRUE(RunNative(compiled, {&tensors.inputs[0], &tensors.inputs[1]}, {&tensors.outputs[0]}).ok());
  EXPECT_THAT(tensors.outputs[0].Values<int32_t>(), ::testing::ElementsAre(3, -3, 0, INT32_MIN, -3));
}

TEST(CodegenTest, TheEntryRejectsNullAndMisalignedBuffersAndDescribesItsSignature) {
  CompileResult compiled = CompileNative(kConv);
  absl::StatusOr<std::unique_ptr<codegen::NativeModel>> model = LoadNative(compiled);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->num_inputs(), 3);
  EXPECT_EQ((*model)->num_outputs(), 1);
  // Main's values (the conv result, 4*8*32 floats) plus the kernels' scratch.
  EXPECT_GE((*model)->workspace_bytes(), 4 * 8 * 32 * 4);
  alignas(64) static float x[2 * 8 * 32], w[72], b[4], y[4 * 8 * 32];
  std::vector<char> workspace_storage((*model)->workspace_bytes() + 128);
  void* workspace = reinterpret_cast<void*>(
      (reinterpret_cast<uintptr_t>(workspace_storage.data()) + 63) / 64 * 64);
  void* inputs[] = {x, w, b};
  void* outputs[] = {y};
  EXPECT_EQ((*model)->RunRaw(inputs, outputs, workspace), 0);
  void* null_inputs[] = {x, nullptr, b};
  EXPECT_EQ((*model)->RunRaw(null_inputs, outputs, workspace), 1);  // KILN_ERROR_NULL_BUFFER
  void* misaligned_outputs[] = {reinterpret_cast<char*>(y) + 4};
  EXPECT_EQ((*model)->RunRaw(inputs, misaligned_outputs, workspace), 2);  // MISALIGNED
  EXPECT_EQ((*model)->RunRaw(inputs, outputs, static_cast<char*>(workspace) + 8), 2);
}

TEST(CodegenTest, TwoCompilesGiveByteIdenticalObjects) {
  codegen::CodegenOptions options;
  options.target.triple = "x86_64-linux-gnu";
  options.target.cpu = "znver4";
  options.emit_assembly = true;
  options.emit_llvm_ir = true;
  CompileResult first = CompileNative(kConv, options);
  CompileResult second = CompileNative(kConv, options);
  EXPECT_EQ(first.native->object, second.native->object);
  EXPECT_EQ(first.native->assembly, second.native->assembly);
  EXPECT_EQ(first.native->llvm_ir, second.native->llvm_ir);
  EXPECT_THAT(first.native->llvm_ir, HasSubstr("@llvm.fmuladd"));
  EXPECT_THAT(first.native->llvm_ir, HasSubstr("noalias"));
}

// Two 128 KiB weights, large enough to stay out of LLVM until the object is written (see
// engine/codegen/llvm/deferred_weights.h): c = 1, 2, ..., 32768 (row r of 256 columns is
// 256 r + 1 ... 256 r + 256: cumsums short enough to fold quickly) and d = c / 2.
constexpr char kLargeWeights[] = R"(
def @main(%x: Tensor[(32768), float32]) {
  %0 = broadcast_to(1f, shape=(128, 256)) /* si=ones */;
  %1 = cumsum(%0, axis=1) /* si=columns */;
  %2 = broadcast_to(256f, shape=(128, 1)) /* si=stride */;
  %3 = cumsum(%2, axis=0) /* si=rows */;
  %4 = subtract(%3, 256f) /* si=row_start */;
  %5 = add(%1, %4) /* si=grid */;
  %6 = reshape(%5, newshape=[32768]) /* si=ramp */;
  %7 = multiply(%6, 0.5f) /* si=half */;
  %8 = multiply(%x, %7) /* si=scale */;
  add(%8, %6) /* si=shift */
}
)";

// The bytes of c and of d, as the object must hold them.
std::pair<std::string, std::string> LargeWeightBytes() {
  std::vector<float> c(32768), d(32768);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i + 1), d[i] = c[i] / 2;
  return {std::string(reinterpret_cast<const char*>(c.data()), c.size() * sizeof(float)),
          std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(float))};
}

TEST(CodegenTest, LargeWeightsAreWrittenIntoTheObjectAfterCodeGeneration) {
  CompileResult compiled = CompileNative(kLargeWeights);
  auto [c, d] = LargeWeightBytes();
  EXPECT_NE(compiled.native->object.find(c), std::string::npos);
  EXPECT_NE(compiled.native->object.find(d), std::string::npos);
  // x = 2: y = 2 * d + c = 2 (i + 1); with the two weights swapped it would be 2.5 (i + 1), with
  // either left zeros i + 1; every value is exact in float32.
  ModelTensors tensors = MakeModelTensors(compiled);
  tensors.inputs[0] =
      loop::HostTensor::FromDoubles(DataType::kFloat32, {32768}, std::vector<double>(32768, 2.0));
  ASSERT_TRUE(RunNative(compiled, {&tensors.inputs[0]}, {&tensors.outputs[0]}).ok());
  std::vector<double> y = tensors.outputs[0].ToDoubles();
  ASSERT_EQ(y.size(), 32768u);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 2.0 * static_cast<double>(i + 1)) << i;
}

TEST(CodegenTest, ObjectsOfOtherFormatsCarryTheirLargeWeightsToo) {
  // Mach-O: the weights go through LLVM as data, not written over zeros afterwards.
  codegen::CodegenOptions options;
  options.target.triple = "x86_64-apple-macosx";
  CompileResult compiled = CompileNative(kLargeWeights, options);
  EXPECT_EQ(compiled.native->object.substr(0, 4), std::string("\xcf\xfa\xed\xfe", 4));
  auto [c, d] = LargeWeightBytes();
  EXPECT_NE(compiled.native->object.find(c), std::string::npos);
  EXPECT_NE(compiled.native->object.find(d), std::string::npos);
}

// Writes `bytes` to a fresh file under this process's temporary directory: ctest runs each test
// case as its own process, in parallel, and two cases writing one path (skylake-avx512.o) read
// each other's bytes.
fs::path WriteTemp(const std::string& name, const std::string& bytes) {
  fs::path dir =
      fs::path(::testing::TempDir()) / ("kiln_codegen_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string RunCommand(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  KILN_CHECK(pipe != nullptr) << command;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

std::string Disassemble(const CompileResult& compiled, const std::string& name) {
  fs::path object = WriteTemp(name + ".o", compiled.native->object);
  int exit_code = 0;
  std::string text = RunCommand(std::string(KILN_LLVM_OBJDUMP) + " -d " + object.string(), &exit_code);
  EXPECT_EQ(exit_code, 0) << text;
  return text;
}

TEST(CodegenTest, EachTargetGetsItsOwnInstructions) {
  codegen::CodegenOptions options;
  options.target.triple = "x86_64-linux-gnu";
  // x86-64-v2 (SSE4.2): 128-bit vectors only, no FMA.
  options.target.cpu = "x86-64-v2";
  std::string v2 = Disassemble(CompileNative(kConv, options), "v2");
  EXPECT_THAT(v2, HasSubstr("file format elf64-x86-64"));
  EXPECT_THAT(v2, HasSubstr("%xmm"));
  EXPECT_THAT(v2, Not(HasSubstr("%ymm")));
  EXPECT_THAT(v2, Not(HasSubstr("vfmadd")));
  // skylake-avx512 and znver4: FMA, and the guarded loads of the padding use AVX-512 mask
  // registers.
  for (const char* cpu : {"skylake-avx512", "znver4"}) {
    options.target.cpu = cpu;
    std::string text = Disassemble(CompileNative(kConv, options), cpu);
    EXPECT_THAT(text, HasSubstr("vfmadd")) << cpu;
    EXPECT_THAT(text, HasSubstr("{%k")) << cpu;
  }
  // aarch64, cross-compiled: NEON fused multiply-add on 4 floats.
  options.target = {"aarch64-linux-gnu", "", ""};
  std::string arm = Disassemble(CompileNative(kConv, options), "aarch64");
  EXPECT_THAT(arm, HasSubstr("file format elf64-littleaarch64"));
  EXPECT_THAT(arm, HasSubstr("fmla"));
}

// A convolution with a swish epilogue (EfficientNet's layer) and a softmax's exp: on AVX-512
// targets the inline sigmoid and exp apply 2^n with vscalefps and swish clamps with vrangeps; on
// AVX2 neither instruction exists and the shift-and-multiply sequence stays.
constexpr char kSwishConv[] = R"(
def @main(%x: Tensor[(1, 16, 4, 16), float32], %w: Tensor[(32, 16, 1, 1), float32],
          %b: Tensor[(32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w) /* si=conv */;
  %1 = add(%0, %b) /* si=bias */;
  %2 = sigmoid(%1) /* si=sigmoid */;
  %3 = multiply(%1, %2) /* si=swish */;
  nn.softmax(%3, axis=1) /* si=softmax */
}
)";

TEST(CodegenTest, Avx512TargetsScaleExpAndSigmoidWithVscalef) {
  codegen::CodegenOptions options;
  options.target.triple = "x86_64-linux-gnu";
  for (const char* cpu : {"skylake-avx512", "znver4"}) {
    options.target.cpu = cpu;
    std::string text = Disassemble(CompileNative(kSwishConv, options), cpu);
    EXPECT_THAT(text, HasSubstr("vscalefps")) << cpu;
    EXPECT_THAT(text, HasSubstr("vrangeps")) << cpu;
  }
  options.target.cpu = "haswell";
  std::string avx2 = Disassemble(CompileNative(kSwishConv, options), "haswell");
  EXPECT_THAT(avx2, HasSubstr("vfmadd"));
  EXPECT_THAT(avx2, Not(HasSubstr("vscalefps")));
}

// The same layer run on this machine (its 16-lane register tiles and their scalar tails on an
// AVX-512 host) computes what the interpreter does, over inputs that reach past both ends of
// the clamped range.
TEST(CodegenTest, SwishConvAndSoftmaxMatchTheInterpreter) {
  std::vector<double> x = Ramp(16 * 4 * 16, 9.5, -100);
  x[5] = 150;  // swish of a large value is the value; of a large negative one, -0
  x[6] = -150;
  ExpectNativeMatchesInterpreter(
      CompileNative(kSwishConv),
      {loop::HostTensor::FromDoubles(DataType::kFloat32, {1, 16, 4, 16}, x),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {32, 16, 1, 1}, Ramp(512, 0.01, -0.1)),
       loop::HostTensor::FromDoubles(DataType::kFloat32, {32, 1, 1}, Ramp(32, 0.5, -5))});
}

// The default pipeline blocks convolutions by the target's float32 lanes per vector register,
// as each ISA defines them: 512-bit AVX-512, 256-bit AVX2, 128-bit SSE and NEON.
TEST(CodegenTest, TheDefaultPipelineBlocksChannelsByTheTargetsVectorLanes) {
  struct Case {
    codegen::TargetOptions target;
    const char* convert_layout;
  };
  for (const Case& c : std::vector<Case>{
           {{"x86_64-linux-gnu", "znver4", ""}, "ConvertLayout{block=16},"},
           {{"x86_64-linux-gnu", "skylake-avx512", ""}, "ConvertLayout{block=16},"},
           {{"x86_64-linux-gnu", "x86-64-v3", ""}, "ConvertLayout,"},  // the default block, 8
           {{"x86_64-linux-gnu", "znver4", "-avx512f"}, "ConvertLayout,"},
           {{"x86_64-linux-gnu", "x86-64-v2", ""}, "ConvertLayout{block=4},"},
           {{"aarch64-linux-gnu", "", ""}, "ConvertLayout{block=4},"}}) {
    absl::StatusOr<std::string> pipeline = DefaultGraphPipelineFor(3, c.target);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    EXPECT_THAT(*pipeline, HasSubstr(c.convert_layout)) << c.target.cpu << c.target.features;
  }
  EXPECT_FALSE(DefaultGraphPipelineFor(3, {"x86_64-linux-gnu", "not-a-cpu", ""}).ok());
}

TEST(CodegenTest, AnUnknownTargetIsAnErrorNamingIt) {
  codegen::CodegenOptions options;
  options.target.triple = "sparc-sun-nowhere";
  options.target.cpu = "not-a-cpu";
  CompileOptions compile;
  compile.codegen = options;
  CompileFailure failure;
  absl::StatusOr<CompileResult> compiled = CompileGraphText(kConv, compile, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(failure.stage, CompileStage::kCodegen);
  options.target = {"x86_64-linux-gnu", "not-a-cpu", ""};
  compile.codegen = options;
  compiled = CompileGraphText(kConv, compile, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("not-a-cpu"));
  // Features: known ones only, and never one that takes away the base ISA (LLVM would abort
  // the process instead of reporting an error).
  for (const char* features : {"+no-such-feature", "-sse2", "+soft-float", "avx2"}) {
    options.target = {"x86_64-linux-gnu", "x86-64-v2", features};
    compile.codegen = options;
    compiled = CompileGraphText(kConv, compile, &failure);
    ASSERT_FALSE(compiled.ok()) << features;
    EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument) << features;
  }
  options.target = {"x86_64-linux-gnu", "x86-64-v2", "+avx2,-avx512f"};
  compile.codegen = options;
  EXPECT_TRUE(CompileGraphText(kConv, compile, &failure).ok());
  options = HostCodegenOptions();
  options.symbol_prefix = "bad prefix";
  compile.codegen = options;
  compiled = CompileGraphText(kConv, compile, &failure);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("bad prefix"));
}

// The shared library: lld links the object with libkiln_rt into an ELF shared object whose only
// exports are the model's entry points, byte-identical across links; there is none for a target
// libkiln_rt is not built for.
TEST(CodegenTest, SharedLibrariesExportOnlyTheModelAndAreDeterministic) {
  codegen::CodegenOptions options = HostCodegenOptions();
  options.emit_shared_library = true;
  CompileResult first = CompileNative(kConv, options);
  CompileResult second = CompileNative(kConv, options);
  ASSERT_FALSE(first.native->shared_library.empty());
  fs::path library = WriteTemp("libkiln_model.so", first.native->shared_library);
  fs::path again = WriteTemp("libkiln_model_again.so", second.native->shared_library);
  EXPECT_TRUE(first.native->shared_library == second.native->shared_library)
      << "cmp " << library << " " << again;
  int exit_code = 0;
  std::string symbols = RunCommand(
      "/usr/lib/llvm-19/bin/llvm-nm -D --defined-only " + library.string(), &exit_code);
  ASSERT_EQ(exit_code, 0) << symbols;
  EXPECT_THAT(symbols, HasSubstr("T kiln_model_run"));
  EXPECT_THAT(symbols, HasSubstr("T kiln_model_workspace_size"));
  EXPECT_THAT(symbols, Not(HasSubstr("kiln_rt_")));  // the runtime stays inside
  std::string dynamic = RunCommand("/usr/lib/llvm-19/bin/llvm-readelf -d " + library.string(), &exit_code);
  EXPECT_THAT(dynamic, HasSubstr("NODELETE"));

  options.target = {"aarch64-linux-gnu", "", ""};
  CompileOptions compile;
  compile.codegen = options;
  absl::StatusOr<CompileResult> arm = CompileGraphText(kConv, compile);
  ASSERT_FALSE(arm.ok());
  EXPECT_EQ(arm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(arm.status().message(), HasSubstr("the target is aarch64"));
}

TEST(CodegenTest, TheObjectLinksIntoACProgramWithLibkilnRt) {
  codegen::CodegenOptions options = HostCodegenOptions();
  options.symbol_prefix = "conv_model";
  CompileResult compiled = CompileNative(kConv, options);
  fs::path object = WriteTemp("conv_model.o", compiled.native->object);
  fs::path header = WriteTemp("conv_model.h", compiled.native->header);
  // All-ones input and weights, bias 1: element (0, 0, 0) is 9 (see the hand-computed test).
  fs::path program = WriteTemp("main.c", R"(
#include <stdio.h>
#include <stdlib.h>
#include "conv_model.h"
int main(void) {
  float* x = aligned_alloc(64, 2 * 8 * 32 * 4); float* w = aligned_alloc(64, 72 * 4);
  float* b = aligned_alloc(64, 64); float* y = aligned_alloc(64, 4 * 8 * 32 * 4);
  void* workspace = aligned_alloc(64, (CONV_MODEL_WORKSPACE_SIZE + 63) / 64 * 64 + 64);
  for (int i = 0; i < 512; ++i) x[i] = 1; for (int i = 0; i < 72; ++i) w[i] = 1;
  for (int i = 0; i < 4; ++i) b[i] = 1;
  void* inputs[] = {x, w, b}; void* outputs[] = {y};
  int status = conv_model_run(inputs, outputs, workspace);
  printf("status %d y0 %g y17 %g inputs %d %s\n", status, y[0], y[3 * 32 + 17],
         conv_model_num_inputs(), conv_model_input_info(0)->name);
  return status;
}
)");
  fs::path binary = object.parent_path() / "conv_model_main";
  int exit_code = 0;
  std::string build = RunCommand(
      "cc -std=c11 -O1 -I" + object.parent_path().string() + " -I" KILN_SOURCE_DIR
      "/engine/runtime " + program.string() + " " + object.string() + " " KILN_RT_LIBRARY
      " -lmvec -lm -lpthread -o " + binary.string(), &exit_code);
  ASSERT_EQ(exit_code, 0) << build;
  std::string run = RunCommand(binary.string(), &exit_code);
  EXPECT_EQ(exit_code, 0) << run;
  EXPECT_THAT(run, HasSubstr("status 0 y0 9 y17 19 inputs 3 x"));
}

}  // namespace
}  // namespace kiln::driver
