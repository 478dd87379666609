// kiln-run: compile a model in-process to native code for this machine and run it (the object
// loaded with ORC LLJIT, through its C entry point), or with the loop-IR interpreter; or load a
// shared-library artifact (MODEL.so, Compile's SHARED_LIBRARY) and run that. Inputs from
// ONNX TensorProto (.pb) or NumPy (.npy) files, outputs written the same way; --benchmark times
// repeated runs; --compare-interpreter also interprets the model and prints the largest error
// per output.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/driver/bounded_outputs.h"
#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "engine/runtime/kiln_runtime.h"
#include "tools/common/flags_usage.h"
#include "tools/common/tensor_files.h"

ABSL_FLAG(std::vector<std::string>, input, {},
          "input tensor files (.npy or ONNX TensorProto .pb), in the model's input order "
          "(comma-separated or repeated); without them, deterministic pseudo-random inputs");
ABSL_FLAG(bool, kernel_profile, true,
          "with --benchmark: compile with per-kernel timing (two runtime calls per kernel; a "
          "model compiled per sample then runs its samples one at a time)");
ABSL_FLAG(int64_t, batch, 1,
          "the batch of pseudo-random inputs for a model compiled per sample (a symbolic batch "
          "dim; input files may have any batch)");
ABSL_FLAG(std::vector<std::string>, symbol, {},
          "for pseudo-random inputs of a model compiled over symbolic dimensions, a symbol's value, "
          "NAME=VALUE (repeatable; default 1; input files may have any value)");
ABSL_FLAG(std::vector<std::string>, input_shape, {},
          "static shape for an input with symbolic dimensions, NAME=D0xD1x... (repeatable)");
ABSL_FLAG(std::string, output_dir, "", "write each output to DIR/<name>.<output_format>");
ABSL_FLAG(std::string, output_format, "npy", "npy or pb");
ABSL_FLAG(std::string, backend, "native", "native (LLVM, this machine) or interp (the interpreter)");
ABSL_FLAG(int, threads, 0, "threads of parallel loops (default: KILN_NUM_THREADS or every CPU)");
ABSL_FLAG(int, benchmark, 0, "after one warm-up run, time N runs and print median and p90");
ABSL_FLAG(bool, benchmark_requests, false,
          "after the first run, print 'ready', then read run counts from stdin, one per line, and "
          "answer each with 'median MS' of that many runs, until end of input: a benchmark can "
          "interleave Kiln's runs with another runtime's in one timeline (bench/models_bench.py)");
ABSL_FLAG(bool, compare_interpreter, false,
          "also run the interpreter and print the largest absolute and relative error per output");
ABSL_FLAG(int, opt_level, 3, "graph optimization level 0..3");
ABSL_FLAG(std::vector<std::string>, config, {},
          "PassContext option KEY=VALUE (repeatable; comma-separated), as kiln-opt's --config: "
          "lower.share_kernels=false gives each fused function its own kernel");
ABSL_FLAG(double, peak_gflops, 0,
          "with --benchmark: the machine's peak GFLOP/s on one thread, to print each kernel's "
          "share of it (0: not printed)");
ABSL_FLAG(int, top_kernels, 20,
          "with --benchmark: how many of the slowest kernels to list (the rest are summed)");
ABSL_FLAG(int, weight_prefetch_footprint_mib, -1,
          "native: fetch large weights ahead (each by an earlier kernel) when the model's weights "
          "and workspace exceed this many MiB (0: always; negative: never, the default)");
ABSL_FLAG(std::string, symbol_prefix, "kiln_model",
          "the exported symbol prefix of a MODEL.so (Compile's symbol_prefix)");

namespace {

int Fail(const std::string& message) {
  std::cerr << "kiln-run: " << message << "\n";
  return 1;
}

std::vector<kiln::loop::HostTensor*> Pointers(std::vector<kiln::loop::HostTensor>& tensors) {
  std::vector<kiln::loop::HostTensor*> pointers;
  for (auto& t : tensors) pointers.push_back(&t);
  return pointers;
}

std::string Describe(const std::string& name, const kiln::loop::HostTensor& tensor) {
  std::string head;
  if (tensor.dtype == kiln::DataType::kString) {
    std::vector<std::string> values = tensor.Strings();
    for (size_t i = 0; i < values.size() && i < 8; ++i) {
      absl::StrAppend(&head, i ? " " : "", "\"", absl::CEscape(values[i]), "\"");
    }
    if (values.size() > 8) head += " ...";
  } else {
    std::vector<double> values = tensor.ToDoubles();
    for (size_t i = 0; i < values.size() && i < 8; ++i) absl::StrAppend(&head, i ? " " : "", values[i]);
    if (values.size() > 8) head += " ...";
  }
  return absl::StrCat(name, ": ", kiln::DataTypeName(tensor.dtype), "[",
                      absl::StrJoin(tensor.shape, ", "), "] ", head);
}

// The kernels' mean time per run, slowest first (the profile kiln_rt_profile_read keeps for a
// model compiled with CodegenOptions::profile_kernels): the `top` slowest and the rest summed,
// with the GFLOP/s of each kernel whose reductions `flops` counts (KernelFlopsByName) and,
// given the machine's peak, the share of it.
void PrintKernelTimes(const std::vector<std::string>& names,
                      const std::map<std::string, int64_t>& flops, int runs, double peak_gflops,
                      int top) {
  struct Row {
    std::string name;
    int64_t calls, nanoseconds;
  };
  std::vector<Row> rows;
  int64_t total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    Row row{names[i], 0, 0};
    kiln_rt_profile_read(static_cast<int32_t>(i), &row.calls, &row.nanoseconds);
    total += row.nanoseconds;
    rows.push_back(row);
  }
  if (total == 0) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.nanoseconds > b.nanoseconds; });
  std::printf("kernels (mean per run, slowest first):\n%10s %7s %6s %8s %6s  %s\n", "ms", "share",
              "calls", "GFLOP/s", "peak", "kernel");
  const size_t shown = std::min<size_t>(rows.size(), static_cast<size_t>(std::max(0, top)));
  for (size_t i = 0; i < shown; ++i) {
    const Row& row = rows[i];
    std::string rate = "-", share = "-";
    auto it = flops.find(row.name);
    if (it != flops.end() && it->second > 0 && row.nanoseconds > 0) {
      double gflops = static_cast<double>(it->second) * static_cast<double>(row.calls) /
                      static_cast<double>(row.nanoseconds);
      rate = absl::StrFormat("%.1f", gflops);
      if (peak_gflops > 0) share = absl::StrFormat("%.0f%%", 100.0 * gflops / peak_gflops);
    }
    std::printf("%10.3f %6.1f%% %6.1f %8s %6s  %s\n", row.nanoseconds / 1e6 / runs,
                100.0 * row.nanoseconds / total, static_cast<double>(row.calls) / runs,
                rate.c_str(), share.c_str(), row.name.c_str());
  }
  if (rows.size() > shown) {
    int64_t rest = 0;
    for (size_t i = shown; i < rows.size(); ++i) rest += rows[i].nanoseconds;
    std::printf("%10.3f %6.1f%%         (%zu more kernels)\n", rest / 1e6 / runs, 100.0 * rest / total,
                rows.size() - shown);
  }
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tools::SetToolUsage(
      "kiln-run MODEL.onnx|MODEL.kir|MODEL.so [--input=a.npy,b.pb] [--benchmark=N] [--threads=N] "
      "[--compare-interpreter] [--output-dir=DIR]\n"
      "Compiles MODEL to native code for this machine and runs it (docs/native-code.md).",
      {__FILE__});
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() != 2) return Fail("expected one model file (.onnx or graph text)");
  const std::string path = positional[1];
  kiln::driver::Backend backend;
  if (!kiln::driver::ParseBackend(absl::GetFlag(FLAGS_backend), &backend)) {
    return Fail("--backend must be native or interp");
  }
  const std::string format = absl::GetFlag(FLAGS_output_format);
  if (format != "npy" && format != "pb") return Fail("--output-format must be npy or pb");

  bool shared_library = path.size() >= 3 && path.compare(path.size() - 3, 3, ".so") == 0;
  std::optional<kiln::driver::CompileResult> compiled;
  std::unique_ptr<kiln::codegen::NativeModel> native;
  kiln::driver::ModelTensors tensors;
  if (shared_library) {
    if (backend != kiln::driver::Backend::kNative || absl::GetFlag(FLAGS_compare_interpreter)) {
      return Fail("a shared library runs natively only (no interpreter: it holds no loop IR)");
    }
    // An absolute or ./-relative path: dlopen must not search the library path for it.
    std::string absolute = std::filesystem::absolute(path).string();
    absl::StatusOr<std::unique_ptr<kiln::codegen::NativeModel>> loaded =
        kiln::codegen::NativeModel::LoadSharedLibrary(absolute, absl::GetFlag(FLAGS_symbol_prefix));
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    native = *std::move(loaded);
    tensors = kiln::driver::MakeModelTensors(*native);
    std::cout << "loaded " << path << "\n";
  } else {
    absl::StatusOr<std::string> model = kiln::tools::ReadFileBytes(path);
    if (!model.ok()) return Fail(std::string(model.status().message()));
    kiln::driver::CompileOptions options;
    options.opt_level = absl::GetFlag(FLAGS_opt_level);
    options.config = absl::GetFlag(FLAGS_config);
    options.source_name = path;
    options.text_request_limits = false;
    for (const std::string& spec : absl::GetFlag(FLAGS_input_shape)) {
      std::vector<std::string> parts = absl::StrSplit(spec, '=');
      std::vector<int64_t> dims;
      for (const std::string& d : parts.size() == 2 ? absl::StrSplit(parts[1], 'x') : std::vector<std::string>{}) {
        int64_t value;
        if (!absl::SimpleAtoi(d, &value) || value < 0) return Fail("bad --input-shape " + spec);
        dims.push_back(value);
      }
      if (parts.size() != 2 || dims.empty()) return Fail("bad --input-shape " + spec + " (NAME=D0xD1x...)");
      options.import.input_shapes[parts[0]] = dims;
    }
    if (backend == kiln::driver::Backend::kNative) {
      options.codegen = kiln::driver::HostCodegenOptions();
      // Per-kernel times for --benchmark: two runtime calls around each kernel.
      // Never with --benchmark_requests, whose medians are compared with another runtime's.
      options.codegen->profile_kernels = absl::GetFlag(FLAGS_benchmark) > 0 &&
                                         absl::GetFlag(FLAGS_kernel_profile) &&
                                         !absl::GetFlag(FLAGS_benchmark_requests);
      int footprint_mib = absl::GetFlag(FLAGS_weight_prefetch_footprint_mib);
      options.codegen->weight_prefetch_footprint_bytes = footprint_mib < 0 ? -1 : int64_t{footprint_mib} << 20;
    }
    bool onnx = path.size() >= 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
    auto compile_start = std::chrono::steady_clock::now();
    absl::StatusOr<kiln::driver::CompileResult> result =
        onnx ? kiln::driver::CompileOnnx(*model, options) : kiln::driver::CompileGraphText(*model, options);
    if (!result.ok()) return Fail(std::string(result.status().message()));
    compiled = *std::move(result);
    double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start).count();
    std::cout << "compiled in " << compile_ms << " ms";
    for (const auto& stage : compiled->stage_times) {
      std::cout << (&stage == &compiled->stage_times.front() ? " (" : ", ")
                << kiln::driver::CompileStageName(stage.stage) << " " << stage.seconds * 1e3 << " ms";
    }
    std::cout << (compiled->stage_times.empty() ? "" : ")") << "\n";
    tensors = kiln::driver::MakeModelTensors(*compiled);
    if (compiled->lowered && compiled->lowered->sample_batch) {
      std::cout << "compiled per sample: batch dimension " << compiled->lowered->sample_batch->symbol
                << " on axis 0 of the inputs and outputs that have it\n";
    }
  }
  // Dims known only at run time: any extent from a file. A batch of a model compiled per sample
  // is --batch for pseudo-random inputs, a symbol of one compiled over symbolic dims --symbol.
  std::vector<std::vector<bool>> free_dims(tensors.inputs.size());
  std::vector<bool> batched(tensors.inputs.size(), false);
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    free_dims[i].assign(tensors.inputs[i].shape.size(), false);
  }
  const kiln::lower::SymbolicSignature* symbolic =
      compiled && compiled->lowered && compiled->lowered->symbolic ? &*compiled->lowered->symbolic
                                                                   : nullptr;
  if (compiled && compiled->lowered && compiled->lowered->sample_batch) {
    batched = compiled->lowered->sample_batch->inputs;
  } else if (symbolic != nullptr) {
    for (size_t i = 0; i < tensors.inputs.size(); ++i) {
      for (size_t d = 0; d < free_dims[i].size(); ++d) {
        free_dims[i][d] = symbolic->input_dims[i][d] < 0;
      }
    }
  } else if (native) {
    // A loaded .so (per sample or over symbolic dims: its signature does not say which): every
    // run-time dim of an input is free, --batch for pseudo-random inputs.
    std::vector<kiln::codegen::TensorSignature> signature = native->inputs();
    for (size_t i = 0; i < signature.size(); ++i) {
      for (size_t d = 0; d < free_dims[i].size() && d < signature[i].shape.size(); ++d) {
        free_dims[i][d] = signature[i].shape[d] < 0;
      }
    }
  }
  const int64_t batch = absl::GetFlag(FLAGS_batch);
  if (batch < 0) return Fail("--batch must be at least 0");
  std::map<std::string, int64_t> symbol_values;
  for (const std::string& entry : absl::GetFlag(FLAGS_symbol)) {
    std::vector<std::string> parts = absl::StrSplit(entry, '=');
    int64_t value = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &value) || value < 0) {
      return Fail(absl::StrCat("--symbol wants NAME=VALUE with a value >= 0, got '", entry, "'"));
    }
    symbol_values[parts[0]] = value;
  }
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    std::vector<int64_t> shape = tensors.inputs[i].shape;
    if (batched[i]) {
      shape[0] = batch;
      free_dims[i][0] = true;
    }
    for (size_t d = 0; symbolic == nullptr && d < shape.size(); ++d) {
      if (free_dims[i][d]) shape[d] = batch;  // a loaded .so's run-time dims
    }
    for (size_t d = 0; symbolic != nullptr && d < shape.size(); ++d) {
      int64_t dim = symbolic->input_dims[i][d];
      if (dim >= 0) continue;
      auto it = symbol_values.find(symbolic->symbols[-1 - dim]);
      shape[d] = it == symbol_values.end() ? 1 : it->second;
    }
    tensors.inputs[i] = kiln::loop::HostTensor::Zeros(tensors.inputs[i].dtype, shape);
  }
  std::vector<std::string> files = absl::GetFlag(FLAGS_input);
  if (!files.empty() && files.size() != tensors.inputs.size()) {
    return Fail(absl::StrCat("the model takes ", tensors.inputs.size(), " inputs; --input names ",
                             files.size()));
  }
  std::mt19937 random(1234);
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    kiln::loop::HostTensor& input = tensors.inputs[i];
    if (!files.empty()) {
      absl::StatusOr<kiln::loop::HostTensor> read = kiln::tools::ReadTensorFile(files[i]);
      if (!read.ok()) return Fail(std::string(read.status().message()));
      bool fits = read->dtype == input.dtype && read->shape.size() == input.shape.size();
      for (size_t d = 0; fits && d < input.shape.size(); ++d) {
        fits = free_dims[i][d] || read->shape[d] == input.shape[d];
      }
      if (!fits) {
        return Fail(absl::StrCat(files[i], ": ", kiln::DataTypeName(read->dtype), "[",
                                 absl::StrJoin(read->shape, ", "), "], but input ",
                                 tensors.input_names[i], " is ", kiln::DataTypeName(input.dtype),
                                 "[", absl::StrJoin(input.shape, ", "), "]",
                                 batched[i]   ? " (any batch on axis 0)"
                                 : symbolic ? " (any value of its symbols)"
                                            : ""));
      }
      input = *std::move(read);
    } else {
      std::uniform_real_distribution<double> uniform(-1.0, 1.0);
      std::vector<double> values(static_cast<size_t>(input.NumElements()));
      for (double& v : values) v = uniform(random);
      if (input.dtype == kiln::DataType::kString) {  // numbers in text
        std::vector<std::string> text;
        for (double v : values) text.push_back(absl::StrCat(v));
        input = kiln::loop::HostTensor::FromStrings(input.shape, std::move(text));
      } else {
        input = kiln::loop::HostTensor::FromDoubles(input.dtype, input.shape, values);
      }
    }
  }
  if (absl::GetFlag(FLAGS_threads) > 0) kiln_rt_set_num_threads(absl::GetFlag(FLAGS_threads));

  if (backend == kiln::driver::Backend::kNative && !native) {
    absl::StatusOr<std::unique_ptr<kiln::codegen::NativeModel>> loaded = kiln::driver::LoadNative(*compiled);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    native = *std::move(loaded);
  }
  std::vector<kiln::loop::HostTensor*> inputs = Pointers(tensors.inputs);
  std::vector<kiln::loop::HostTensor*> outputs = Pointers(tensors.outputs);
  auto run = [&]() -> absl::Status {
    if (native) return native->Run(inputs, outputs);
    return kiln::driver::RunModel(*compiled, inputs, outputs);
  };
  if (absl::Status status = run(); !status.ok()) return Fail(std::string(status.message()));
  // What the model computed: bounded outputs cut to the lengths the run filled, the length
  // outputs dropped (docs/onnx-frontend.md). A loaded .so carries no such record: raw outputs.
  std::vector<kiln::lower::BoundedOutput> bounded;
  if (compiled && compiled->lowered) bounded = compiled->lowered->bounded_outputs;
  std::vector<std::string> output_names = tensors.output_names;
  std::vector<kiln::loop::HostTensor> results = tensors.outputs;
  if (absl::Status cut = kiln::driver::CutBoundedOutputs(bounded, &results, &output_names); !cut.ok()) {
    return Fail(std::string(cut.message()));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    std::cout << Describe(output_names[i], results[i]) << "\n";
  }

  // Milliseconds of each of n runs, sorted.
  auto time_runs = [&](int n) -> absl::StatusOr<std::vector<double>> {
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (absl::Status status = run(); !status.ok()) return status;
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms;
  };
  if (absl::GetFlag(FLAGS_benchmark_requests)) {
    std::printf("ready\n");
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
      int n = 0;
      if (!absl::SimpleAtoi(line, &n) || n <= 0 || n > 100000) {
        return Fail("--benchmark_requests: expected a run count in 1..100000, got '" + line + "'");
      }
      absl::StatusOr<std::vector<double>> ms = time_runs(n);
      if (!ms.ok()) return Fail(std::string(ms.status().message()));
      std::printf("median %.4f\n", (*ms)[ms->size() / 2]);
      std::fflush(stdout);
    }
  }

  if (int n = absl::GetFlag(FLAGS_benchmark); n > 0) {
    kiln_rt_profile_reset();
    absl::StatusOr<std::vector<double>> timed = time_runs(n);
    if (!timed.ok()) return Fail(std::string(timed.status().message()));
    const std::vector<double>& ms = *timed;
    std::printf("benchmark: %d runs, %d threads: median %.3f ms, p90 %.3f ms, min %.3f ms\n", n,
                kiln_rt_num_threads(), ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)],
                ms.front());
    if (native && compiled && absl::GetFlag(FLAGS_kernel_profile)) {
      PrintKernelTimes(native->kernel_names(), kiln::driver::KernelFlopsByName(*compiled), n,
                       absl::GetFlag(FLAGS_peak_gflops), absl::GetFlag(FLAGS_top_kernels));
    }
  }

  if (absl::GetFlag(FLAGS_compare_interpreter)) {
    std::vector<kiln::loop::HostTensor> reference = kiln::driver::MakeModelTensors(*compiled).outputs;
    if (absl::Status status = kiln::driver::RunModel(*compiled, inputs, Pointers(reference)); !status.ok()) {
      return Fail(absl::StrCat("interpreter: ", status.message()));
    }
    if (absl::Status cut = kiln::driver::CutBoundedOutputs(bounded, &reference); !cut.ok()) {
      return Fail(absl::StrCat("interpreter: ", cut.message()));
    }
    for (size_t i = 0; i < reference.size(); ++i) {
      if (results[i].shape != reference[i].shape) {
        std::printf("interpreter vs %s, %s: shapes differ\n", kiln::driver::BackendName(backend),
                    output_names[i].c_str());
        continue;
      }
      if (results[i].dtype == kiln::DataType::kString) {
        std::printf("interpreter vs %s, %s: %s\n", kiln::driver::BackendName(backend),
                    output_names[i].c_str(),
                    results[i].Strings() == reference[i].Strings() ? "same strings" : "strings differ");
        continue;
      }
      std::vector<double> a = results[i].ToDoubles(), b = reference[i].ToDoubles();
      double abs_error = 0, rel_error = 0;
      for (size_t k = 0; k < a.size(); ++k) {
        double error = std::abs(a[k] - b[k]);
        if (std::isnan(a[k]) != std::isnan(b[k])) error = INFINITY;
        if (std::isnan(a[k]) && std::isnan(b[k])) error = 0;
        abs_error = std::max(abs_error, error);
        if (b[k] != 0) rel_error = std::max(rel_error, error / std::abs(b[k]));
      }
      std::printf("interpreter vs %s, %s: max abs error %.3g, max rel error %.3g\n",
                  kiln::driver::BackendName(backend), output_names[i].c_str(), abs_error, rel_error);
    }
  }

  if (const std::string dir = absl::GetFlag(FLAGS_output_dir); !dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    for (size_t i = 0; i < results.size(); ++i) {
      std::string file = absl::StrCat(dir, "/", output_names[i], ".", format);
      absl::Status written = kiln::tools::WriteTensorFile(file, results[i], output_names[i]);
      if (!written.ok()) return Fail(std::string(written.message()));
      std::cout << "wrote " << file << "\n";
    }
  }
  return 0;
}
