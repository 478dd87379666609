// The `kiln` command-line client against a real kilnd: every command, the
// artifacts it writes, and the exit code a script relies on for each status.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <vector>
#include <set>
#include <regex>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/integration/kilnd_process.h"
#include "tests/integration/test_models.h"

namespace kiln::testing {
namespace {

struct CliRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

// A shell command's exit code and output (stdout and stderr).
CliRun Shell(const std::string& command_line) {
  std::string command = command_line + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  CliRun run{-1, ""};
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, n);
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

CliRun Kiln(const std::string& args) { return Shell(std::string(KILN_CLI_PATH) + " " + args); }

class KilnCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kiln-cli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    model_ = (dir_ / "small.onnx").string();
    std::ofstream(model_, std::ios::binary) << SmallModel();
    garbage_ = (dir_ / "garbage.onnx").string();
    std::ofstream(garbage_, std::ios::binary) << "not a model";
    unsupported_ = (dir_ / "unsupported.onnx").string();
    std::ofstream(unsupported_, std::ios::binary) << UnsupportedOpModel();
    kilnd_ = KilndProcess::Start({"--workers=1"});
    ASSERT_NE(kilnd_, nullptr);
    server_ = " --server=" + kilnd_->address();
  }
  void TearDown() override {
    if (kilnd_) {
      EXPECT_EQ(kilnd_->Stop(), 0);
    }
    std::filesystem::remove_all(dir_);
  }

  // `model` compiled through kilnd to an object, its header and metadata in dir_ / name; empty
  // when the compile failed (the test has failed then).
  std::filesystem::path CompileToObject(const std::string& name, const std::string& model) {
    const std::string path = (dir_ / (name + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << model;
    const std::filesystem::path out = dir_ / name;
    CliRun run = Kiln("compile " + path + " --artifacts=object,header,metadata --out=" +
                      out.string() + server_);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return run.exit_code == 0 ? out : std::filesystem::path();
  }

  // The C `program` (including out's kiln_model.h) linked with out's object and libkiln_rt, then
  // run; a failed build fails the test.
  static CliRun LinkAndRun(const std::filesystem::path& out, const std::string& program) {
    std::ofstream(out / "main.c") << program;
    const std::filesystem::path binary = out / "main";
    CliRun build = Shell("cc -std=c11 -O1 -I" + out.string() + " -I" KILN_SOURCE_DIR
                         "/engine/runtime " + (out / "main.c").string() + " " +
                         (out / "kiln_model.o").string() +
                         " " KILN_RT_LIBRARY " -lmvec -lm -lpthread -o " + binary.string());
    EXPECT_EQ(build.exit_code, 0) << build.output;
    if (build.exit_code != 0) return build;
    return Shell(binary.string());
  }

  struct ControlFlowArtifacts {
    bool compiled = false;
    std::string loop_ir, assembly;
  };
  // `model` compiled through kilnd to its loop IR and assembly.
  ControlFlowArtifacts CompileControlFlow(const std::string& name, const std::string& model) {
    const std::string path = (dir_ / (name + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << model;
    const std::filesystem::path out = dir_ / name;
    CliRun run = Kiln("compile " + path + " --artifacts=loop-ir,asm --out=" + out.string() + server_);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    std::stringstream loop, assembly;
    loop << std::ifstream(out / "model.loop.py").rdbuf();
    assembly << std::ifstream(out / "kiln_model.s").rdbuf();
    return {run.exit_code == 0, loop.str(), assembly.str()};
  }

  std::filesystem::path dir_;
  std::string model_, garbage_, unsupported_, server_;
  std::unique_ptr<KilndProcess> kilnd_;
};

TEST_F(KilnCliTest, CompileWritesEveryArtifact) {
  std::string out = (dir_ / "out").string();
  CliRun run = Kiln("compile " + model_ + " --out=" + out + server_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* name : {"model.graph.txt", "model.graph.json", "model.loop.py",
                           "model.metadata.json"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / name)) << name;
  }
  std::ifstream loop(std::filesystem::path(out) / "model.loop.py");
  std::stringstream text;
  text << loop.rdbuf();
  EXPECT_NE(text.str().find("T.prim_func"), std::string::npos);
  EXPECT_NE(run.output.find("compile id"), std::string::npos) << run.output;
}

// --weight-prefetch-footprint-mib reaches kilnd's code generator through the request's target:
// at 0 every model counts as too large for the cache, and the classifier's second 0.5 MiB weight
// is fetched ahead by the first layer's kernel (prefetchnta in the assembly); by default its
// weights are never fetched ahead. The two compiles have distinct ids.
TEST_F(KilnCliTest, WeightPrefetchFootprintReachesTheNativeCode) {
  const std::string classifier = (dir_ / "classifier.onnx").string();
  std::ofstream(classifier, std::ios::binary) << kiln::testing::ClassifierModel();
  std::vector<std::string> ids;
  for (const std::string flag : {"", " --weight-prefetch-footprint-mib=0"}) {
    const std::string out = (dir_ / ("prefetch" + std::to_string(flag.size()))).string();
    CliRun run = Kiln("compile " + classifier + " --artifacts=asm --out=" + out + flag + server_);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::ifstream assembly(std::filesystem::path(out) / "kiln_model.s");
    std::stringstream text;
    text << assembly.rdbuf();
    ASSERT_NE(text.str().find("vfmadd"), std::string::npos) << flag;  // the kernels are there
    EXPECT_EQ(text.str().find("prefetchnta") != std::string::npos, !flag.empty()) << flag;
    const size_t id = run.output.find("compile id");
    ASSERT_NE(id, std::string::npos) << run.output;
    ids.push_back(run.output.substr(id, run.output.find('\n', id) - id));
  }
  CliRun bad = Kiln("compile " + classifier + " --weight-prefetch-footprint-mib=lots" + server_);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--weight-prefetch-footprint-mib"), std::string::npos) << bad.output;
  EXPECT_NE(ids[0], ids[1]);
}

// An If on a run-time condition compiles through kilnd to a branch of main: the loop IR holds
// the If around each branch's kernel, and the object's entry calls each kernel on its own path
// (the assembly annotates each call with its ONNX layer).
TEST_F(KilnCliTest, ARunTimeIfCompilesToABranchOfTheNativeCode) {
  ControlFlowArtifacts out = CompileControlFlow("branch", kiln::testing::BranchModel());
  ASSERT_TRUE(out.compiled);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out.loop_ir, match,
                                std::regex("\\n( +)if [^\\n]*:  # si=branch\\n"
                                           "\\1    T.call_kernel\\(fused_nn_relu,[^\\n]*\\n"
                                           "\\1else:\\n"
                                           "\\1    T.call_kernel\\(fused_negative,")))
      << out.loop_ir;
  EXPECT_NE(out.assembly.find("[then_relu]"), std::string::npos);
  EXPECT_NE(out.assembly.find("[else_neg]"), std::string::npos);
}

// A Loop whose trip count only a run knows: main's loop IR is a while loop around the body's
// kernel, and the native code's instructions carry the body node's name.
TEST_F(KilnCliTest, ARunTimeLoopCompilesToALoopOfTheNativeCode) {
  ControlFlowArtifacts out = CompileControlFlow("loop", kiln::testing::LoopModel());
  ASSERT_TRUE(out.compiled);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out.loop_ir, match,
                                std::regex("\\n( +)while [^\\n]*:  # si=repeat\\n"
                                           "(\\1    [^\\n]*\\n)*"
                                           "\\1    T.call_kernel\\(fused_tanh,[^\\n]*# si=step_tanh\\n")))
      << out.loop_ir;
  EXPECT_NE(out.assembly.find("[step_tanh]"), std::string::npos);
}

// A model with a symbolic batch compiles through kilnd without input shapes; its object, linked
// into a C program with libkiln_rt, runs batches of 3 and 0 through <prefix>_run_dynamic and
// refuses an input of the wrong width. Values by hand: y[n] = (2 x[n,0] + 1) + (2 x[n,1] + 1).
TEST_F(KilnCliTest, ASymbolicBatchCompilesPerSampleAndRunsAnyBatchFromC) {
  const std::filesystem::path out = CompileToObject("batch", BatchRowSumModel());
  ASSERT_FALSE(out.empty());
  nlohmann::json metadata = nlohmann::json::parse(std::ifstream(out / "model.metadata.json"));
  EXPECT_EQ(metadata["signature"]["inputs"][0]["shape"], nlohmann::json::array({-1, 2})) << metadata;
  EXPECT_EQ(metadata["signature"]["outputs"][0]["shape"], nlohmann::json::array({-1})) << metadata;
  EXPECT_EQ(metadata["per_sample"]["batch_dim"], "N") << metadata;
  std::stringstream header;
  header << std::ifstream(out / "kiln_model.h").rdbuf();
  EXPECT_NE(header.str().find("int32_t kiln_model_run_dynamic("), std::string::npos) << header.str();
  EXPECT_NE(header.str().find("float32[N, 2], 8 bytes per sample"), std::string::npos) << header.str();
  CliRun ran = LinkAndRun(out, R"(
#include <stdio.h>
#include <stdlib.h>
#include "kiln_model.h"
int main(void) {
  float* x = aligned_alloc(64, 64);
  for (int i = 0; i < 6; ++i) x[i] = (float)(i + 1);
  void* workspace = aligned_alloc(64, (KILN_MODEL_WORKSPACE_SIZE + 63) / 64 * 64 + 64);
  const kiln_tensor_info* info = kiln_model_input_info(0);
  printf("info %lld %lld bytes %lld\n", (long long)info->shape[0], (long long)info->shape[1],
         (long long)info->bytes);
  for (int batch = 3; batch >= 0; batch -= 3) {
    int64_t x_shape[2] = {batch, 2}, y_shape[1] = {-1};
    const int64_t* input_shapes[] = {x_shape};
    int64_t* output_shapes[] = {y_shape};
    void* inputs[] = {x};
    void* outputs[] = {NULL};
    int status = kiln_model_run_dynamic(inputs, input_shapes, outputs, output_shapes, workspace);
    printf("batch %d status %d shape %lld:", batch, status, (long long)y_shape[0]);
    for (int n = 0; n < batch; ++n) printf(" %g", ((float*)outputs[0])[n]);
    printf("\n");
    kiln_rt_free(outputs[0]);
  }
  int64_t wrong_shape[2] = {3, 3};
  const int64_t* wrong_shapes[] = {wrong_shape};
  int64_t y_shape[1];
  int64_t* output_shapes[] = {y_shape};
  void* inputs[] = {x};
  void* outputs[] = {NULL};
  printf("wrong width status %d\n",
         kiln_model_run_dynamic(inputs, wrong_shapes, outputs, output_shapes, workspace));
  return 0;
}
)");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  const std::string& output = ran.output;
  EXPECT_NE(output.find("info -1 2 bytes -1\n"), std::string::npos) << output;
  EXPECT_NE(output.find("batch 3 status 0 shape 3: 8 16 24\n"), std::string::npos) << output;
  EXPECT_NE(output.find("batch 0 status 0 shape 0:\n"), std::string::npos) << output;
  EXPECT_NE(output.find("wrong width status 4\n"), std::string::npos) << output;  // SHAPE_MISMATCH
}

// A symbolic dim that is no batch (summed over) compiles through kilnd over its value: the
// metadata names the symbol, the header gives each dim, and the object, linked into a C program,
// runs 3 rows and 0 through <prefix>_run_dynamic. By hand: relu of [[1 -2] [3 4] [-5 6]] summed
// down the columns is [4 10]; over no rows [0 0].
TEST_F(KilnCliTest, ASymbolicDimCompilesOnceAndRunsAnyValueFromC) {
  const std::filesystem::path out = CompileToObject("column_sum", ColumnSumModel());
  ASSERT_FALSE(out.empty());
  nlohmann::json metadata = nlohmann::json::parse(std::ifstream(out / "model.metadata.json"));
  EXPECT_EQ(metadata["symbolic"]["symbols"], nlohmann::json::array({"S"})) << metadata;
  EXPECT_EQ(metadata["symbolic"]["input_dims"], nlohmann::json::parse(R"([["S", 2]])")) << metadata;
  EXPECT_EQ(metadata["signature"]["inputs"][0]["shape"], nlohmann::json::array({-1, 2})) << metadata;
  std::stringstream header;
  header << std::ifstream(out / "kiln_model.h").rdbuf();
  EXPECT_NE(header.str().find("float32[S, 2]"), std::string::npos) << header.str();
  EXPECT_NE(header.str().find("int32_t kiln_model_run_dynamic("), std::string::npos) << header.str();
  CliRun ran = LinkAndRun(out, R"(
#include <stdio.h>
#include <stdlib.h>
#include "kiln_model.h"
int main(void) {
  float* x = aligned_alloc(64, 64);
  const float values[6] = {1, -2, 3, 4, -5, 6};
  for (int i = 0; i < 6; ++i) x[i] = values[i];
  void* workspace = aligned_alloc(64, (KILN_MODEL_WORKSPACE_SIZE + 63) / 64 * 64 + 64);
  for (int rows = 3; rows >= 0; rows -= 3) {
    int64_t x_shape[2] = {rows, 2}, y_shape[1] = {-1};
    const int64_t* input_shapes[] = {x_shape};
    int64_t* output_shapes[] = {y_shape};
    void* inputs[] = {x};
    void* outputs[] = {NULL};
    int status = kiln_model_run_dynamic(inputs, input_shapes, outputs, output_shapes, workspace);
    printf("rows %d status %d shape %lld: %g %g\n", rows, status, (long long)y_shape[0],
           ((float*)outputs[0])[0], ((float*)outputs[0])[1]);
    kiln_rt_free(outputs[0]);
  }
  int64_t wrong_shape[2] = {3, 3};
  const int64_t* wrong_shapes[] = {wrong_shape};
  int64_t y_shape[1];
  int64_t* output_shapes[] = {y_shape};
  void* inputs[] = {x};
  void* outputs[] = {NULL};
  printf("wrong width status %d\n",
         kiln_model_run_dynamic(inputs, wrong_shapes, outputs, output_shapes, workspace));
  return 0;
}
)");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  const std::string& output = ran.output;
  EXPECT_NE(output.find("rows 3 status 0 shape 2: 4 10\n"), std::string::npos) << output;
  EXPECT_NE(output.find("rows 0 status 0 shape 2: 0 0\n"), std::string::npos) << output;
  EXPECT_NE(output.find("wrong width status 4\n"), std::string::npos) << output;  // SHAPE_MISMATCH
}

// torch.nonzero's export compiled through kilnd: the signature marks the bounded output and
// its length output, and the object, linked into a C program, fills the first n rows (by hand,
// the nonzeros of x = [[0 1 0 2] [3 0 0 4] [0 0 0 5]]: (0,1) (0,3) (1,0) (1,3) (2,3)).
TEST_F(KilnCliTest, ABoundedOutputIsMarkedInTheSignatureAndFilledByTheObject) {
  const std::filesystem::path out = CompileToObject("nonzero", NonZeroModel());
  ASSERT_FALSE(out.empty());
  nlohmann::json metadata = nlohmann::json::parse(std::ifstream(out / "model.metadata.json"));
  const nlohmann::json& outputs = metadata["signature"]["outputs"];
  ASSERT_EQ(outputs.size(), 2u) << metadata;
  EXPECT_EQ(outputs[0]["shape"], nlohmann::json::array({12, 2})) << metadata;
  EXPECT_EQ(outputs[0]["bounded"]["axis"], 0) << metadata;
  EXPECT_EQ(outputs[0]["bounded"]["length_output"], 1) << metadata;
  EXPECT_EQ(outputs[1]["shape"], nlohmann::json::array()) << metadata;
  CliRun ran = LinkAndRun(out, R"c(
#include <stdio.h>
#include <stdlib.h>
#include "kiln_model.h"
int main(void) {
  float* x = aligned_alloc(64, 64);
  const float values[12] = {0, 1, 0, 2, 3, 0, 0, 4, 0, 0, 0, 5};
  for (int i = 0; i < 12; ++i) x[i] = values[i];
  long long* rows = aligned_alloc(64, 192);
  long long* count = aligned_alloc(64, 64);
  void* workspace = aligned_alloc(64, (KILN_MODEL_WORKSPACE_SIZE + 63) / 64 * 64 + 64);
  void* inputs[] = {x};
  void* outputs[] = {rows, count};
  int status = kiln_model_run(inputs, outputs, workspace);
  printf("status %d count %lld:", status, *count);
  for (long long r = 0; r < *count; ++r) printf(" (%lld,%lld)", rows[2 * r], rows[2 * r + 1]);
  printf("\n");
  return 0;
}
)c");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find("status 0 count 5: (0,1) (0,3) (1,0) (1,3) (2,3)\n"), std::string::npos)
      << ran.output;
}

TEST_F(KilnCliTest, TraceShowsPassesAndTheirDiffs) {
  CliRun run = Kiln("trace " + model_ + server_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("FoldConstant"), std::string::npos);
  EXPECT_NE(run.output.find("FuseOps"), std::string::npos);
  EXPECT_NE(run.output.find("\n@@ "), std::string::npos) << "no unified diff hunk";
  CliRun json = Kiln("trace " + model_ + " --format=json --stages=loop" + server_);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("\"stage\":\"loop\""), std::string::npos) << json.output.substr(0, 500);
  EXPECT_EQ(json.output.find("\"stage\":\"graph\""), std::string::npos);
}

TEST_F(KilnCliTest, TraceDumpsOneNumberedFilePerPass) {
  std::filesystem::path dump = dir_ / "dump";
  CliRun run = Kiln("trace " + model_ + " --dump-dir=" + dump.string() + server_);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dump)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_FALSE(names.empty());
  const std::regex name("^[0-9]{4}-(graph|loop|llvm)-[A-Za-z0-9_.-]+\\.after\\.(kir|py|ll)$");
  std::set<std::string> stages;
  for (const std::string& file : names) {
    EXPECT_TRUE(std::regex_match(file, name)) << file;
    std::string stage = file.substr(5, file.find('-', 5) - 5);
    stages.insert(stage);
    // Each is a pass the trace printed on stdout at that index and stage ("%4d  %-5s  ").
    char line[32];
    std::snprintf(line, sizeof(line), "\n%4d  %-5s  ", std::stoi(file.substr(0, 4)), stage.c_str());
    EXPECT_NE(("\n" + run.output).find(line), std::string::npos) << file;
  }
  EXPECT_TRUE(stages.count("graph") && stages.count("loop")) << names.size() << " files";
  // Graph text, as kiln-opt reads it.
  std::ifstream first(dump / names.front());
  std::stringstream text;
  text << first.rdbuf();
  EXPECT_NE(text.str().find("def @main("), std::string::npos) << text.str().substr(0, 300);
  // Not a directory it can create: a local error, nothing sent.
  std::ofstream(dir_ / "file") << "x";
  CliRun bad = Kiln("trace " + model_ + " --dump-dir=" + (dir_ / "file" / "sub").string() + server_);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--dump-dir: cannot create"), std::string::npos) << bad.output;
}

// The numerics check through kilnd: every graph pass of the default pipeline keeps the small
// model's outputs (interpreter against interpreter), the native code too; `kiln bisect` says so,
// and a malformed tolerance is a usage error.
TEST_F(KilnCliTest, NumericsCheckAndBisect) {
  CliRun trace = Kiln("trace " + model_ + server_ + " --check-numerics --stages=graph --format=json");
  ASSERT_EQ(trace.exit_code, 0) << trace.output;
  int checked = 0;
  for (absl::string_view line : absl::StrSplit(trace.output, '\n', absl::SkipEmpty())) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (!event.contains("numerics")) continue;
    ++checked;
    EXPECT_EQ(event["numerics"]["backend"], "interp") << line;
    EXPECT_LT(event["numerics"]["max_rel_error"].get<double>(), 1e-5) << line;
  }
  EXPECT_GT(checked, 10);
  // Loop passes are checked too (their loop module interpreted in place of the lowered one).
  CliRun loop = Kiln("trace " + model_ + server_ + " --check-numerics --stages=loop --format=json");
  ASSERT_EQ(loop.exit_code, 0) << loop.output;
  int loop_checked = 0;
  for (absl::string_view line : absl::StrSplit(loop.output, '\n', absl::SkipEmpty())) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (!event.contains("numerics") || event.value("stage", "") != "loop") continue;
    ++loop_checked;
    EXPECT_EQ(event["numerics"]["backend"], "interp") << line;
    EXPECT_LT(event["numerics"]["max_rel_error"].get<double>(), 1e-5) << line;
  }
  EXPECT_GT(loop_checked, 5);
  CliRun bisect = Kiln("bisect " + model_ + server_ + " --rtol=1e-5 --atol=1e-6");
  EXPECT_EQ(bisect.exit_code, 0) << bisect.output;
  EXPECT_NE(bisect.output.find("every graph pass keeps the outputs"), std::string::npos)
      << bisect.output;
  EXPECT_NE(bisect.output.find("(native)"), std::string::npos) << bisect.output;
  // With no tolerance at all, the first pass that changes a bit is found: on a CNN with
  // BatchNormalization, SimplifyInference (batch norm unpacked into arithmetic rounds
  // differently), and the first layer it changed is the batch norm.
  const std::string cnn = (dir_ / "small_cnn.onnx").string();
  ASSERT_EQ(std::system(("/usr/bin/python3 '" KILN_SOURCE_DIR "/examples/make_small_cnn.py' '" +
                         cnn + "'").c_str()), 0);
  CliRun exact = Kiln("bisect " + cnn + server_ + " --input-shape=input=1,3,16,16 --rtol=0 --atol=0");
  EXPECT_EQ(exact.exit_code, 1) << exact.output;
  EXPECT_NE(exact.output.find(": #3 SimplifyInference ("), std::string::npos) << exact.output;
  const size_t first_layer = exact.output.find("  layer ");
  ASSERT_NE(first_layer, std::string::npos) << exact.output;
  EXPECT_EQ(exact.output.substr(first_layer, 32), "  layer /bn1/BatchNormalization:") << exact.output;
  EXPECT_NE(exact.output.find("--print-after=SimplifyInference"), std::string::npos);
  CliRun bad = Kiln("bisect " + model_ + server_ + " --rtol=-1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--rtol"), std::string::npos) << bad.output;
}

// The summary of a numerics-checked trace lists the kernels that lose precision in native code,
// each run on exact inputs: on a squeeze-excitation block, the kernel computing the sigmoid gate
// (approximated in native code, docs/native-code.md) is among them, with and without fast-math,
// and the loss stays within float rounding's order.
TEST_F(KilnCliTest, KernelPrecisionOfTheNativeCode) {
  const std::string block = (dir_ / "se_block").string();
  ASSERT_EQ(std::system(("/usr/bin/python3 '" KILN_SOURCE_DIR
                         "/tests/lit/examples/Inputs/se_block.py' '" + block + "'").c_str()), 0);
  for (const std::string fast_math : {"", " --fast-math"}) {
    CliRun trace = Kiln("trace " + block + "/model.onnx" + server_ +
                        " --check-numerics --stages=graph --only-changed" + fast_math);
    ASSERT_EQ(trace.exit_code, 0) << trace.output;
    const size_t section =
        trace.output.find("kernel precision (native code, each kernel on exact inputs, against interp)");
    ASSERT_NE(section, std::string::npos) << trace.output;
    const size_t gate = trace.output.find("se/gate", section);
    ASSERT_NE(gate, std::string::npos) << fast_math << "\n" << trace.output;
    const size_t rel = trace.output.rfind("max rel ", gate);
    ASSERT_GT(rel, section);
    EXPECT_LT(std::stod(trace.output.substr(rel + 8)), 1e-5) << trace.output.substr(rel, 80);
  }
}

// The numerics check on the client's own inputs (ONNX TensorProto files, as the test data keeps
// them): used as given, a tensor of the wrong shape named against the model's input, and bytes
// that are no tensor refused as INVALID_ARGUMENT before the compile.
TEST_F(KilnCliTest, NumericsOnTheClientsInputs) {
  const std::string block = (dir_ / "se_block_inputs").string();
  ASSERT_EQ(std::system(("/usr/bin/python3 '" KILN_SOURCE_DIR
                         "/tests/lit/examples/Inputs/se_block.py' '" + block + "'").c_str()), 0);
  const std::string trace = "trace " + block + "/model.onnx" + server_ +
                            " --check-numerics --stages=graph --format=json --numerics-input=";
  CliRun given = Kiln(trace + block + "/test_data_set_0/input_0.pb");
  ASSERT_EQ(given.exit_code, 0) << given.output;
  int checked = 0;
  for (absl::string_view line : absl::StrSplit(given.output, '\n', absl::SkipEmpty())) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (!event.contains("numerics")) continue;
    ++checked;
    EXPECT_EQ(event["numerics"].value("error", ""), "") << event["numerics"].dump();
  }
  EXPECT_GT(checked, 5);
  // The expected output (16 channels) is not an input (32 channels): every check says so.
  CliRun wrong = Kiln(trace + block + "/test_data_set_0/output_0.pb");
  ASSERT_EQ(wrong.exit_code, 0) << wrong.output;
  EXPECT_NE(wrong.output.find("numerics input 0 (x) is float32[1, 16, 16, 16]; the model takes "
                              "float32[1, 32, 16, 16]"),
            std::string::npos)
      << wrong.output;
  // Every module JIT-compiled when asked; an unknown backend is a usage error.
  CliRun native = Kiln(trace + block + "/test_data_set_0/input_0.pb --numerics-backend=native");
  ASSERT_EQ(native.exit_code, 0) << native.output;
  int native_checked = 0;
  for (absl::string_view line : absl::StrSplit(native.output, '\n', absl::SkipEmpty())) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (!event.contains("numerics")) continue;
    ++native_checked;
    EXPECT_EQ(event["numerics"].value("backend", ""), "native") << event["numerics"].dump();
  }
  EXPECT_GT(native_checked, 5);
  CliRun bogus = Kiln(trace + block + "/test_data_set_0/input_0.pb --numerics-backend=jit");
  EXPECT_EQ(bogus.exit_code, 2) << bogus.output;
  CliRun garbage = Kiln(trace + garbage_);
  EXPECT_EQ(garbage.exit_code, 3) << garbage.output;  // INVALID_ARGUMENT
  EXPECT_NE(garbage.output.find("numerics_inputs[0]: not a serialized ONNX TensorProto"),
            std::string::npos)
      << garbage.output;
}

TEST_F(KilnCliTest, ScheduleAndPassesAndHealth) {
  CliRun schedule = Kiln("schedule " + model_ + " --selector=conv --verify" + server_);
  ASSERT_EQ(schedule.exit_code, 0) << schedule.output;
  EXPECT_NE(schedule.output.find("vanilla"), std::string::npos);
  EXPECT_NE(schedule.output.find("vectorize"), std::string::npos);
  CliRun passes = Kiln("passes" + server_);
  ASSERT_EQ(passes.exit_code, 0) << passes.output;
  EXPECT_NE(passes.output.find("FoldScaleAxis"), std::string::npos);
  CliRun health = Kiln("health" + server_);
  EXPECT_EQ(health.exit_code, 0) << health.output;
  EXPECT_NE(health.output.find("SERVING"), std::string::npos);
}

TEST_F(KilnCliTest, EveryStatusHasItsExitCode) {
  EXPECT_EQ(Kiln("compile " + garbage_ + server_).exit_code, 3);
  EXPECT_EQ(Kiln("compile " + unsupported_ + server_).exit_code, 5);
  CliRun missing = Kiln("schedule " + model_ + " --selector=no_such_layer" + server_);
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_NE(missing.output.find("NOT_FOUND"), std::string::npos) << missing.output;
  EXPECT_EQ(Kiln("compile " + (dir_ / "absent.onnx").string() + server_).exit_code, 2);
  EXPECT_EQ(Kiln("no-such-command").exit_code, 2);
  // A port nothing listens on.
  EXPECT_EQ(Kiln("health --server=127.0.0.1:1 --deadline=2s").exit_code, 8);
}

TEST_F(KilnCliTest, SequenceInputsAreTypedByTheirElementShapes) {
  std::string model = (dir_ / "sequence.onnx").string();
  std::ofstream(model, std::ios::binary) << SequenceInputModel();
  std::string out = " --out=" + (dir_ / "sequence-out").string();
  CliRun ok = Kiln("compile " + model + " --sequence-input='s=[2,3][1,3]'" + out + server_);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  // The metadata names each element as an input of the compiled model.
  std::ifstream metadata(dir_ / "sequence-out" / "model.metadata.json");
  std::stringstream text;
  text << metadata.rdbuf();
  EXPECT_NE(text.str().find("\"s.1\""), std::string::npos) << text.str();
  CliRun missing = Kiln("compile " + model + out + server_);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("give its element shapes"), std::string::npos) << missing.output;
  CliRun bad = Kiln("compile " + model + " --sequence-input=s=2,3" + out + server_);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--sequence-input: expected [D0,D1,...] at '2,3'"), std::string::npos)
      << bad.output;
}

TEST_F(KilnCliTest, SeveralServersAreBalancedOver) {
  auto second = KilndProcess::Start({"--workers=1"});
  ASSERT_NE(second, nullptr);
  std::string servers = " --server=" + kilnd_->address() + "," + second->address();
  for (int i = 0; i < 4; ++i) {
    CliRun run = Kiln("compile " + model_ + " --out=" + (dir_ / "out").string() + servers);
    EXPECT_EQ(run.exit_code, 0) << run.output;
  }
  // Every compile was served by one of the two (which one is the policy's: ReplicasTest checks
  // the spread of one channel).
  auto served = [](const KilndProcess& kilnd) {
    return MetricValue(HttpGet(kilnd.metrics_address(), "/metrics"),
                       "kiln_requests_total{code=\"OK\",rpc=\"Compile\"}");
  };
  EXPECT_GE(served(*kilnd_) + served(*second), 4);
  // A list must be IP:PORT addresses: a usage error, before any call.
  CliRun bad = Kiln("health --server=localhost:1,127.0.0.1:2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("must be IP:PORT"), std::string::npos) << bad.output;
  EXPECT_EQ(second->Stop(), 0);
}

}  // namespace
}  // namespace kiln::testing
