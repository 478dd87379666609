// Figures for native code (issue 13) on the ResNet-50-class model of bench/resnet_model.h:
//  - the full compile to an object (import through LLVM code generation, one thread), with a
//    per-stage breakdown, and what debug info and the annotated assembly add to it;
//  - the generated code's latency with 1 and 2 threads (the ratio is the parallel speedup);
//  - with --ort=DIR (a directory holding node_modules/onnxruntime-node), ONNX Runtime's latency
//    on the same model and input, one intra-op thread, measured in the same run by
//    bench/ort_latency.js, the ratio of Kiln's to it, and the largest difference between the two
//    runtimes' logits (the model's weights keep them finite).
// Times are medians of N runs (and fastest for compiles); nothing here gates a test.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/resource.h>
#include <functional>
#include <string>
#include <vector>

#include "bench/resnet_model.h"
#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "engine/runtime/kiln_runtime.h"

namespace {

double Seconds(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Minor page faults of this process so far (pages touched for the first time).
long MinorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

kiln::driver::CompileResult Compile(const std::string& bytes, kiln::driver::CompileOptions options) {
  auto compiled = kiln::driver::CompileOnnx(bytes, options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", std::string(compiled.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(compiled);
}

}  // namespace

int main(int argc, char** argv) {
  std::string ort_dir;
  int runs = 20;
  bool compile_only = false;  // the compile's figures alone
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ort=", 6) == 0) ort_dir = argv[i] + 6;
    if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::atoi(argv[i] + 7);
    if (std::strcmp(argv[i], "--compile-only") == 0) compile_only = true;
  }
  kiln::bench::ResNetBuilder builder(true);
  std::string bytes = builder.Build();

  // Compile time: the whole compile, fastest of a few, and the driver's stage times of that run.
  kiln::driver::CompileOptions native;
  native.codegen = kiln::driver::HostCodegenOptions();
  const int compile_rounds = 3;
  double fastest = 1e9, first = 0;
  kiln::driver::CompileResult compiled;
  long first_faults = 0, fastest_faults = 0;
  for (int round = 0; round < compile_rounds; ++round) {
    kiln::driver::CompileResult result;
    long faults = MinorPageFaults();
    double seconds = Seconds([&] { result = Compile(bytes, native); });
    faults = MinorPageFaults() - faults;
    if (round == 0) first = seconds, first_faults = faults;  // no schedule cache yet
    if (seconds < fastest) {
      fastest = seconds;
      fastest_faults = faults;
      compiled = std::move(result);
    }
  }
  std::printf("compile to an object (one thread): first %.2f s, fastest of %d %.2f s\n", first,
              compile_rounds, fastest);
  // Each fault is a page the compile touched first (on this VM a fault costs microseconds):
  // a count that noise does not move, unlike the times.
  std::printf("  page faults: first %ld, fastest %ld\n", first_faults, fastest_faults);
  for (const auto& stage : compiled.stage_times) {
    std::printf("  %-14s %.2f s\n", kiln::driver::CompileStageName(stage.stage), stage.seconds);
  }
  std::printf("    of which: LLVM module %.2f s, LLVM pipeline %.2f s, machine code %.2f s (one compile)\n",
              compiled.native->build_seconds, compiled.native->optimize_seconds,
              compiled.native->emit_seconds);
  if (compile_only) return 0;
  // What provenance costs: the same compile without debug info, and with the annotated assembly
  // and its JSON map on top (what kilnd makes for every compile).
  auto fastest_with = [&](bool debug_info, bool annotations) {
    kiln::driver::CompileOptions options = native;
    options.codegen->debug_info = debug_info;
    options.codegen->emit_assembly = annotations;
    double best = 1e9;
    for (int round = 0; round < 2; ++round) {
      best = std::min(best, Seconds([&] { Compile(bytes, options); }));
    }
    return best;
  };
  double bare = fastest_with(false, false), annotated = fastest_with(true, true);
  std::printf("provenance: without debug info %.2f s; DWARF lines x%.3f, with annotated assembly "
              "and its JSON map x%.3f\n", bare, fastest / bare, annotated / bare);
  std::printf("object: %zu bytes, workspace %lld bytes\n", compiled.native->object.size(),
              static_cast<long long>(compiled.native->workspace_bytes));
  auto model = kiln::driver::LoadNative(compiled);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", std::string(model.status().message()).c_str());
    return 1;
  }
  kiln::driver::ModelTensors tensors = kiln::driver::MakeModelTensors(compiled);
  // The input ONNX Runtime gets too: x[i] = ((i * 7) % 255) / 255 - 0.5.
  std::vector<float> input(tensors.inputs[0].bytes.size() / sizeof(float));
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>((i * 7) % 255) / 255.0f - 0.5f;
  auto aligned = [](size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); };
  void* in = aligned(input.size() * sizeof(float));
  std::memcpy(in, input.data(), input.size() * sizeof(float));
  void* out = aligned(tensors.outputs[0].bytes.size());
  void* workspace = aligned(static_cast<size_t>((*model)->workspace_bytes()));
  void* inputs[] = {in};
  void* outputs[] = {out};
  auto latency = [&](int threads) {
    kiln_rt_set_num_threads(threads);
    (*model)->RunRaw(inputs, outputs, workspace);  // warm-up
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      times.push_back(Seconds([&] { (*model)->RunRaw(inputs, outputs, workspace); }) * 1e3);
    }
    return Median(times);
  };
  double one = latency(1), two = latency(2);
  std::printf("latency (median of %d): 1 thread %.2f ms, 2 threads %.2f ms, speedup x%.2f\n", runs,
              one, two, one / two);

  if (!ort_dir.empty()) {
    std::string model_path = "/tmp/kiln_native_bench_resnet.onnx";
    std::ofstream(model_path, std::ios::binary) << bytes;
    std::string command = "NODE_PATH=" + ort_dir + "/node_modules node " + KILN_SOURCE_DIR +
                          "/bench/ort_latency.js " + model_path + " " + std::to_string(runs);
    FILE* pipe = popen(command.c_str(), "r");
    std::string text;
    char chunk[4096];
    size_t n;
    while (pipe != nullptr && (n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) text.append(chunk, n);
    if (pipe != nullptr) pclose(pipe);
    double ort_ms = std::atof(text.c_str());
    if (ort_ms > 0) {
      std::printf("ONNX Runtime (1 intra-op thread, median of %d): %.2f ms; Kiln 1 thread / ORT = "
                  "x%.2f\n", runs, ort_ms, one / ort_ms);
      // Its logits against Kiln's on the same input: the whole-model numerics check.
      std::vector<double> reference;
      size_t open = text.find('[');
      for (size_t pos = open; open != std::string::npos && pos < text.size() && text[pos] != ']';) {
        char* end = nullptr;
        reference.push_back(std::strtod(text.c_str() + pos + 1, &end));
        pos = static_cast<size_t>(end - text.c_str());
      }
      const float* logits = static_cast<const float*>(out);
      size_t count = tensors.outputs[0].bytes.size() / sizeof(float);
      double max_abs = 0, max_ref = 0;
      for (size_t i = 0; i < std::min(count, reference.size()); ++i) {
        max_abs = std::max(max_abs, std::abs(logits[i] - reference[i]));
        max_ref = std::max(max_ref, std::abs(reference[i]));
      }
      std::printf("logits vs ONNX Runtime: %zu of %zu compared, max abs error %.3g (largest |logit| "
                  "%.3g)\n", std::min(count, reference.size()), count, max_abs, max_ref);
    } else {
      std::printf("ONNX Runtime: no figure (%s)\n", command.c_str());
    }
  }
  std::free(in);
  std::free(out);
  std::free(workspace);
  return 0;
}
