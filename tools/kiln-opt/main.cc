// kiln-opt: reads a model (graph IR text, `.kir`, or an ONNX model, `.onnx`;
// `-` reads stdin and detects which), compiles it through engine/driver as far
// as the flags ask (a pass pipeline, lowering, the loop pipeline, schedule
// records), and prints the result in the requested format. Pass dumps, timing
// reports and bisection lines go to stderr; the module alone goes to stdout.
// Without --passes or -O the tool only prints.
// --split-input-file compiles the parts of a lit test between `// -----`
// lines one by one, and --verify-diagnostics checks the errors against the
// input's expected-error comments (split_input.h, verify_diagnostics.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/driver/driver.h"
#include "tools/kiln-opt/drift_printer.h"
#include "engine/driver/schedule_records.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "tools/common/flags_usage.h"
#include "tools/kiln-opt/split_input.h"

ABSL_FLAG(std::string, format, "relay",
          "output format: relay (canonical graph text), script (Python-like), json (see "
          "docs/ir-json.md; pass dumps become one JSON event per line)");
ABSL_FLAG(bool, hide_spans, false, "omit /* si=... */ span comments");
ABSL_FLAG(std::string, input_shape, "",
          "static shape for an ONNX graph input, NAME=D0,D1,... (repeatable; several may also "
          "be given at once separated by ';')");
ABSL_FLAG(std::string, sequence_input, "",
          "element shapes of an ONNX sequence graph input, NAME=[D0,D1,...][...]... (one "
          "bracket per element, [] a scalar, none an empty sequence): its elements become the "
          "parameters NAME.0, NAME.1, ... (repeatable; several separated by ';')");
ABSL_FLAG(std::string, empty_optional_input, "",
          "an ONNX optional graph input that holds no value (repeatable; comma-separated); any "
          "other optional input holds one, typed by --input-shape or --sequence-input");
ABSL_FLAG(bool, no_span_filling, false, "import ONNX without source spans");
ABSL_FLAG(bool, initializers_as_params, false,
          "import ONNX initializers as parameters of @main (after the inputs) instead of "
          "constants");
ABSL_FLAG(bool, list_onnx_ops, false, "print the ONNX op types the importer converts (then those it expands from their ONNX function body) and exit");
ABSL_FLAG(bool, show_metadata, true,
          "print the #[metadata] table of large constants after the functions");

// Pass pipelines (docs/passes.md).
ABSL_FLAG(std::string, passes, "",
          "pass pipeline to run, e.g. InferType,FuseOps{fuse_opt_level=2} (see docs/passes.md)");
ABSL_FLAG(int, opt_level, -1,
          "optimization level 0..3 (-O0..-O3); alone, runs the default pipeline of that level");
ABSL_FLAG(std::string, disable_pass, "", "pass names never to run (comma-separated; repeatable)");
ABSL_FLAG(std::string, required_pass, "",
          "pass names to run whatever the opt level (comma-separated; repeatable)");
ABSL_FLAG(std::string, config, "",
          "PassContext option KEY=VALUE (repeatable); an unknown key lists the valid ones");
ABSL_FLAG(bool, print_before_all, false, "print the IR before every pass (stderr)");
ABSL_FLAG(bool, print_after_all, false, "print the IR after every pass (stderr)");
ABSL_FLAG(bool, check_numerics, false,
          "after every graph pass, run the model on seeded inputs and print (stderr) each "
          "output's largest error against the model as imported; with native code, its error; "
          "at the first pass past --numerics-rtol and --numerics-atol, the layers it changed");
ABSL_FLAG(uint64_t, numerics_seed, 0, "seed of the inputs --check-numerics draws");
ABSL_FLAG(std::string, numerics_backend, "auto",
          "--check-numerics: what runs the checked modules: auto (the interpreter, native code "
          "for models too large for it), interp, native (every module JIT-compiled)");
ABSL_FLAG(double, numerics_rtol, 1e-5,
          "--check-numerics: the relative error a pass may add (an output over both this and "
          "--numerics-atol is over the tolerance)");
ABSL_FLAG(double, numerics_atol, 1e-6, "--check-numerics: the absolute error a pass may add");
ABSL_FLAG(bool, fail_on_drift, false,
          "--check-numerics: exit 1, naming the pass and its layers, when a pass (or the native "
          "code) moves an output past the tolerance");
ABSL_FLAG(std::string, print_before, "", "print the IR before these passes (comma-separated)");
ABSL_FLAG(std::string, print_after, "", "print the IR after these passes (comma-separated)");
ABSL_FLAG(bool, print_changed, false,
          "print the IR after each pass that changed it (with --print-after: only those named)");
ABSL_FLAG(std::string, time_passes, "",
          "report pass timing on stderr: tree (nested, the default for a bare --time-passes) or "
          "list (totals per pass)");
ABSL_FLAG(int64_t, max_pass_index, -1,
          "bisection: run only the first N passes that are not required (config "
          "pass.max_pass_index)");
ABSL_FLAG(bool, verify_each, false,
          "check well-formedness after every pass (config pass.verify_each)");
ABSL_FLAG(std::string, span_coverage, "",
          "count nodes without spans after every pass: report or strict (config "
          "pass.span_coverage)");
ABSL_FLAG(bool, list_passes, false,
          "print every registered pass (name, opt level, required passes, summary, options)");
ABSL_FLAG(std::string, reproducer_dir, "",
          "on a pass failure, write the failing pass's input IR and a RUN line here");

// Lowering (engine/driver: lowering, the loop pipeline, schedule records).
ABSL_FLAG(std::string, emit, "graph",
          "what to print: graph (the graph module); loop (run the graph pipeline, -O2's when "
          "none is given, lower, run the default loop pipeline, print the loop module as script, or "
          "as JSON with --format=json); or native code generated from that loop module: llvm (the "
          "optimized LLVM IR), asm (assembly, each instruction annotated with its loop-IR line and "
          "ONNX layers), obj (the ELF object with DWARF lines into the printed loop IR, written "
          "to -o), so (a shared library with libkiln_rt inside, linked by lld, written to -o), "
          "header (the C header), provenance (the JSON map asm line -> loop-IR line -> "
          "ONNX layers)");
ABSL_FLAG(std::string, mtriple, "", "the LLVM target triple code is generated for "
          "(--emit=llvm|asm|obj|header) and layouts and schedules are chosen for (its vector "
          "lanes; default: this machine's)");
ABSL_FLAG(std::string, mcpu, "", "the target CPU, e.g. x86-64-v2, skylake-avx512, znver4");
ABSL_FLAG(std::string, mattr, "", "LLVM target features, e.g. +avx2,-avx512f");
ABSL_FLAG(bool, fast_math, false,
          "fast-math flags on the native code's float arithmetic (reassociation, no NaN/Inf); "
          "--check-numerics shows each kernel's loss");
ABSL_FLAG(int, weight_prefetch_footprint_mib, -1,
          "native code: fetch large weights ahead (each by an earlier kernel) when the model's "
          "weights and workspace exceed this many MiB (0: always; negative: never, the default)");
ABSL_FLAG(int, codegen_opt_level, 2, "LLVM's optimization level 0..3 for native code");
ABSL_FLAG(std::string, o, "", "write the output to this file instead of stdout (--emit=obj|so need it)");
ABSL_FLAG(std::string, loop_passes, kiln::driver::DefaultLoopPipeline(),
          "with --emit=loop: the loop pipeline run on the lowered module (default: the "
          "default loop pipeline; empty: none)");
ABSL_FLAG(std::string, schedule_record, "",
          "print the schedule record of the kernels SELECTOR names (the call index in the "
          "optimized main, a fused function name, or an ONNX layer name) after lowering; "
          "--format=json prints one JSON object per step");
ABSL_FLAG(bool, verify_schedule, false,
          "with --schedule-record: run every step on random inputs against the vanilla step "
          "and mark it [verified] or [NOT verified]");
ABSL_FLAG(std::string, verify_backend, "native",
          "what runs the steps --verify-schedule checks: native (LLVM code for this machine, "
          "any kernel size) or interp (the loop-IR interpreter, step-bounded)");

// Lit tests of many cases (tools/kiln-opt/split_input.h, verify_diagnostics.h).
ABSL_FLAG(bool, split_input_file, false,
          "split the graph text at lines `// -----` and compile each part on its own (one "
          "part's errors do not stop the others), printing `// -----` between their outputs; "
          "line numbers in errors stay those of the whole file");
ABSL_FLAG(bool, verify_diagnostics, false,
          "check the errors, warnings and notes of each part against its comments "
          "`// expected-error {{SUBSTRING}}` (expected-warning, expected-note; @+N, @-N, "
          "@above, @below, @unknown) instead of printing them; exit code 0 when they all match");

namespace {

constexpr size_t kMaxInputBytes = size_t{1} << 30;

bool ReadInput(const std::string& path, std::string* text, std::string* error) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      *error = "cannot open '" + path + "'";
      return false;
    }
    buffer << file.rdbuf();
  }
  *text = buffer.str();
  if (text->size() > kMaxInputBytes) {
    *error = "input is larger than 1 GiB";
    return false;
  }
  return true;
}

bool LooksLikeText(const std::string& path, const std::string& bytes) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".kir") == 0) return true;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) return false;
  // Graph text starts with a comment, `def` or `#[`; a ModelProto starts with
  // a field tag byte such as 0x08 (ir_version).
  size_t i = bytes.find_first_not_of(" \t\r\n");
  return i != std::string::npos && (bytes[i] == '/' || bytes[i] == '#' || bytes[i] == 'd');
}

// Parses --input-shape values: NAME=1,3,224,224.
bool ParseInputShapes(const std::string& specs, std::map<std::string, std::vector<int64_t>>* shapes,
                      std::string* error) {
  for (absl::string_view one : absl::StrSplit(specs, ';', absl::SkipEmpty())) {
    size_t eq = one.rfind('=');
    if (eq == absl::string_view::npos || eq == 0) {
      *error = "--input-shape expects NAME=D0,D1,..., got '" + std::string(one) + "'";
      return false;
    }
    std::vector<int64_t> dims;
    for (absl::string_view d : absl::StrSplit(one.substr(eq + 1), ',', absl::SkipEmpty())) {
      int64_t value;
      if (!absl::SimpleAtoi(d, &value) || value < 0) {
        *error = "--input-shape: '" + std::string(d) + "' is not a non-negative integer";
        return false;
      }
      dims.push_back(value);
    }
    (*shapes)[std::string(one.substr(0, eq))] = std::move(dims);
  }
  return true;
}

// --sequence_input specs: NAME=[D0,D1][D0]... into `sequences`.
bool ParseSequenceInputs(const std::string& specs,
                         std::map<std::string, std::vector<std::vector<int64_t>>>* sequences,
                         std::string* error) {
  for (absl::string_view one : absl::StrSplit(specs, ';', absl::SkipEmpty())) {
    size_t eq = one.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      *error = "--sequence-input expects NAME=[D0,D1,...][...], got '" + std::string(one) + "'";
      return false;
    }
    std::vector<std::vector<int64_t>>& elements = (*sequences)[std::string(one.substr(0, eq))];
    absl::string_view rest = one.substr(eq + 1);
    while (!rest.empty()) {
      size_t close = rest.find(']');
      if (rest[0] != '[' || close == absl::string_view::npos) {
        *error = "--sequence-input: expected [D0,D1,...] at '" + std::string(rest) + "'";
        return false;
      }
      std::map<std::string, std::vector<int64_t>> parsed;
      if (!ParseInputShapes(absl::StrCat("e=", rest.substr(1, close - 1)), &parsed, error)) {
        return false;
      }
      elements.push_back(parsed["e"]);
      rest.remove_prefix(close + 1);
    }
  }
  return true;
}

// Flags that may be given several times. An absl flag keeps only its last
// value, so these are collected before parsing and passed on joined.
struct RepeatedFlag {
  const char* name;  // normalized (underscores)
  const char* separator;
};
constexpr RepeatedFlag kRepeatedFlags[] = {
    {"input_shape", ";"},  {"sequence_input", ";"}, {"empty_optional_input", ","},
    {"disable_pass", ","}, {"required_pass", ","},
    {"print_before", ","}, {"print_after", ","},
};

// --config values are kept apart: a value may contain any separator.
struct NormalizedArgs {
  std::vector<std::string> argv;
  std::vector<std::string> configs;
};

// Users write --hide-spans, -O2, --time-passes and repeated flags; absl
// names cannot hold dashes, -O2 is not an absl flag, and a string flag needs a
// value, so the command line is normalized before absl parses it.
NormalizedArgs NormalizeArgs(int argc, char** argv) {
  NormalizedArgs out;
  out.argv.push_back(argv[0]);
  std::map<std::string, std::vector<std::string>> repeated;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {  // everything after is positional
      for (; i < argc; ++i) out.argv.push_back(argv[i]);
      break;
    }
    if (arg.size() == 3 && arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '9') {
      out.argv.push_back(absl::StrCat("--opt_level=", arg.substr(2)));
      continue;
    }
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      size_t end = std::min(arg.find('='), arg.size());
      for (size_t k = 2; k < end; ++k) {
        if (arg[k] == '-') arg[k] = '_';
      }
      std::string name = arg.substr(2, end - 2);
      bool has_value = end < arg.size();
      auto value = [&]() -> std::string {
        if (has_value) return arg.substr(end + 1);
        return i + 1 < argc ? argv[++i] : "";
      };
      if (name == "config") {
        out.configs.push_back(value());
        continue;
      }
      if (name == "time_passes" && !has_value) {
        out.argv.push_back("--time_passes=tree");
        continue;
      }
      bool is_repeated = false;
      for (const RepeatedFlag& flag : kRepeatedFlags) {
        if (name == flag.name) {
          repeated[name].push_back(value());
          is_repeated = true;
        }
      }
      if (is_repeated) continue;
    }
    out.argv.push_back(std::move(arg));
  }
  for (const RepeatedFlag& flag : kRepeatedFlags) {
    auto it = repeated.find(flag.name);
    if (it == repeated.end()) continue;
    out.argv.push_back(
        absl::StrCat("--", flag.name, "=", absl::StrJoin(it->second, flag.separator)));
  }
  return out;
}

std::vector<std::string> SplitNames(const std::string& names) {
  std::vector<std::string> out;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
    out.emplace_back(name);
  }
  return out;
}

void ListPasses(const kiln::PassRegistry& registry) {
  std::vector<const kiln::PassRegistration*> entries = registry.List();
  size_t width = 0;
  for (const auto* entry : entries) width = std::max(width, entry->info.name.size());
  for (const auto* entry : entries) {
    std::string required = absl::StrJoin(entry->info.required, ",");
    std::printf("%-*s  opt_level=%d  required=[%s]  %s\n", static_cast<int>(width),
                entry->info.name.c_str(), entry->info.opt_level, required.c_str(),
                entry->summary.c_str());
    for (const kiln::PassOptionSpec& option : entry->options) {
      std::printf("%*s    %s: %s = %s  %s\n", static_cast<int>(width), "", option.name.c_str(),
                  kiln::ConfigTypeName(option.type),
                  kiln::FormatConfigValue(option.default_value).c_str(), option.doc.c_str());
    }
  }
}

int Fail(std::string_view message) {
  std::cerr << "kiln-opt: " << message << "\n";
  return 1;
}

// The driver's options from the flags (everything but the input and what
// to do after the compile). Returns false with `error` for a bad flag.
bool CompileOptionsFromFlags(const std::vector<std::string>& configs, int opt_level,
                             const kiln::PrintOptions& print_options, bool json,
                             kiln::driver::CompileOptions* options, std::string* error) {
  options->import.span_filling = !absl::GetFlag(FLAGS_no_span_filling);
  options->import.initializers_as_params = absl::GetFlag(FLAGS_initializers_as_params);
  if (!ParseInputShapes(absl::GetFlag(FLAGS_input_shape), &options->import.input_shapes, error) ||
      !ParseSequenceInputs(absl::GetFlag(FLAGS_sequence_input),
                           &options->import.input_sequence_shapes, error)) {
    return false;
  }
  for (const std::string& name : SplitNames(absl::GetFlag(FLAGS_empty_optional_input))) {
    options->import.empty_optional_inputs.insert(name);
  }
  // Without -O the context keeps PassContext's default level (2).
  options->opt_level = opt_level >= 0 ? opt_level : 2;
  options->required_passes = SplitNames(absl::GetFlag(FLAGS_required_pass));
  options->disabled_passes = SplitNames(absl::GetFlag(FLAGS_disable_pass));
  options->config = configs;
  // The convenience flags set the same options a --config would, after it.
  if (absl::GetFlag(FLAGS_max_pass_index) >= 0) {
    options->config.push_back(
        absl::StrCat("pass.max_pass_index=", absl::GetFlag(FLAGS_max_pass_index)));
  }
  if (absl::GetFlag(FLAGS_verify_each)) options->config.push_back("pass.verify_each=true");
  if (!absl::GetFlag(FLAGS_span_coverage).empty()) {
    options->config.push_back(
        absl::StrCat("pass.span_coverage=", absl::GetFlag(FLAGS_span_coverage)));
  }

  kiln::driver::DebugOptions& debug = options->debug;
  std::string time_passes = absl::GetFlag(FLAGS_time_passes);
  if (time_passes == "tree") {
    debug.time_passes = kiln::driver::TimePasses::kTree;
  } else if (time_passes == "list") {
    debug.time_passes = kiln::driver::TimePasses::kList;
  } else if (!time_passes.empty()) {
    *error = absl::StrCat("unknown --time-passes '", time_passes, "' (expected tree or list)");
    return false;
  }
  debug.print_ir.before_all = absl::GetFlag(FLAGS_print_before_all);
  debug.print_ir.after_all = absl::GetFlag(FLAGS_print_after_all);
  debug.print_ir.before = SplitNames(absl::GetFlag(FLAGS_print_before));
  debug.print_ir.after = SplitNames(absl::GetFlag(FLAGS_print_after));
  if (absl::GetFlag(FLAGS_print_changed)) {
    debug.print_ir.only_changed = true;
    if (debug.print_ir.after.empty()) debug.print_ir.after_all = true;
  }
  debug.dump_json = json;
  debug.print_options = print_options;
  debug.out = &std::cerr;
  debug.reproducer_dir = absl::GetFlag(FLAGS_reproducer_dir);
  return true;
}

void Write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The result: to the -o file when given, else stdout. Returns the exit code.
int WriteOutput(const std::string& text) {
  const std::string path = absl::GetFlag(FLAGS_o);
  if (path.empty()) {
    Write(text);
    return 0;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Fail(absl::StrCat("cannot write ", path));
  return 0;
}

// What the instruments reported: diagnostics, timing, span coverage.
void PrintReport(const kiln::driver::CompileReport& report) {
  for (const kiln::PassDiagnostic& diagnostic : report.diagnostics) {
    std::cerr << "kiln-opt: " << kiln::FormatDiagnostic(diagnostic) << "\n";
  }
  std::cerr << report.timing;
  if (!report.span_coverage.empty()) {
    std::cerr << "Span coverage after each pass:\n" << report.span_coverage;
  }
}

// Compiles one input, the whole file or one part of it under
// --split-input-file (graph text when `is_text`, else an ONNX model) through
// the driver, and prints what the flags ask for. Returns the exit code.
int CompileInput(const std::string& path, const std::string& text, bool is_text,
                 const std::string& format, int opt_level, const NormalizedArgs& args) {
  kiln::PrintOptions print_options;
  print_options.show_spans = !absl::GetFlag(FLAGS_hide_spans);
  print_options.show_metadata = absl::GetFlag(FLAGS_show_metadata);
  print_options.format =
      format == "script" ? kiln::PrintOptions::Format::kScript : kiln::PrintOptions::Format::kRelay;
  const bool json = format == "json";

  std::string emit = absl::GetFlag(FLAGS_emit);
  const bool native = emit == "llvm" || emit == "asm" || emit == "obj" || emit == "header" ||
                      emit == "provenance" || emit == "so";
  if (emit != "graph" && emit != "loop" && !native) {
    return Fail(absl::StrCat("unknown --emit '", emit,
                             "' (expected graph, loop, llvm, asm, obj, so, header or provenance)"));
  }
  if ((emit == "obj" || emit == "so") && absl::GetFlag(FLAGS_o).empty()) {
    return Fail(absl::StrCat("--emit=", emit, " writes a binary file: name it with -o FILE"));
  }
  const std::string schedule_record = absl::GetFlag(FLAGS_schedule_record);
  if (absl::GetFlag(FLAGS_verify_backend) != "native" && absl::GetFlag(FLAGS_verify_backend) != "interp") {
    return Fail("--verify-backend must be native or interp");
  }
  const bool lowering = emit == "loop" || native || !schedule_record.empty();

  kiln::driver::CompileOptions options;
  std::string error;
  if (!CompileOptionsFromFlags(args.configs, opt_level, print_options, json, &options, &error)) {
    return Fail(error);
  }
  options.source_name = path == "-" ? "<stdin>" : path;
  // kiln-opt reads its user's own files: none of the limits that guard kilnd
  // from its clients (the importer's own bounds on ONNX models stay). The
  // budget is a petabyte and 2^62 steps: finite, so its arithmetic is too.
  options.text_request_limits = false;
  options.limits.max_bytes = int64_t{1} << 50;
  options.limits.max_interpreter_steps = int64_t{1} << 62;
  // --passes names the pipeline; -O alone runs the default one of its level;
  // lowering needs fused, typed functions, which -O2's pipeline provides.
  options.pipeline = absl::GetFlag(FLAGS_passes);
  if (options.pipeline.empty() && (opt_level >= 0 || lowering)) {
    // Convolutions blocked for the target named by --mtriple/--mcpu/--mattr (the host's).
    absl::StatusOr<std::string> pipeline = kiln::driver::DefaultGraphPipelineFor(
        opt_level >= 0 ? opt_level : 2,
        {absl::GetFlag(FLAGS_mtriple), absl::GetFlag(FLAGS_mcpu), absl::GetFlag(FLAGS_mattr)});
    if (!pipeline.ok()) return Fail(std::string(pipeline.status().message()));
    options.pipeline = *pipeline;
  }
  options.run_graph_passes = !options.pipeline.empty();
  options.layout_target = {absl::GetFlag(FLAGS_mtriple), absl::GetFlag(FLAGS_mcpu),
                           absl::GetFlag(FLAGS_mattr)};
  options.lower = lowering;
  // Schedule records show the kernels as lowering made them.
  options.loop_pipeline = schedule_record.empty() ? absl::GetFlag(FLAGS_loop_passes) : "";
  if (native && schedule_record.empty()) {
    kiln::codegen::CodegenOptions codegen;
    codegen.target = {absl::GetFlag(FLAGS_mtriple), absl::GetFlag(FLAGS_mcpu),
                      absl::GetFlag(FLAGS_mattr)};
    codegen.opt_level = absl::GetFlag(FLAGS_codegen_opt_level);
    codegen.fast_math = absl::GetFlag(FLAGS_fast_math);
    int footprint_mib = absl::GetFlag(FLAGS_weight_prefetch_footprint_mib);
    codegen.weight_prefetch_footprint_bytes = footprint_mib < 0 ? -1 : int64_t{footprint_mib} << 20;
    codegen.emit_assembly = emit == "asm" || emit == "provenance";
    codegen.emit_llvm_ir = emit == "llvm";
    codegen.emit_shared_library = emit == "so";
    options.codegen = codegen;
  }

  std::unique_ptr<kiln::tools::DriftPrinter> drift;
  if (absl::GetFlag(FLAGS_check_numerics)) {
    kiln::driver::DriftBackend backend;
    if (!kiln::driver::ParseDriftBackend(absl::GetFlag(FLAGS_numerics_backend), &backend)) {
      return Fail(absl::StrCat("--numerics-backend: '", absl::GetFlag(FLAGS_numerics_backend),
                               "' is not one of auto, interp, native"));
    }
    drift = std::make_unique<kiln::tools::DriftPrinter>(absl::GetFlag(FLAGS_numerics_seed), backend,
                                                        absl::GetFlag(FLAGS_numerics_rtol),
                                                        absl::GetFlag(FLAGS_numerics_atol),
                                                        &options, std::cerr);
  }
  kiln::driver::CompileFailure failure;
  absl::StatusOr<kiln::driver::CompileResult> compiled =
      is_text ? kiln::driver::CompileGraphText(text, options, &failure)
              : kiln::driver::CompileOnnx(text, options, &failure);
  if (!compiled.ok()) {
    PrintReport(failure.report);
    std::string message(compiled.status().message());
    Fail(failure.stage == kiln::driver::CompileStage::kConfigure ? "--config: " + message
                                                                   : message);
    for (const std::string& written : failure.report.reproducers) {
      std::cerr << "kiln-opt: reproducer written to " << written << "\n";
    }
    return 1;
  }
  PrintReport(compiled->report);
  if (drift) {
    drift->PrintNative(*compiled);
    if (absl::GetFlag(FLAGS_fail_on_drift) && !drift->first_excess().empty()) {
      return Fail(absl::StrCat("numerics: the outputs moved past --numerics-rtol=",
                               absl::GetFlag(FLAGS_numerics_rtol), " and --numerics-atol=",
                               absl::GetFlag(FLAGS_numerics_atol), " at ",
                               drift->first_excess()));
    }
  }

  if (!schedule_record.empty()) {
    kiln::driver::ScheduleRecordOptions record_options;
    record_options.verify = absl::GetFlag(FLAGS_verify_schedule);
    record_options.verify_natively = absl::GetFlag(FLAGS_verify_backend) == "native";
    record_options.max_verify_bytes.reset();  // a local tool: its user's own model
    absl::StatusOr<std::vector<kiln::driver::KernelScheduleRecord>> records =
        kiln::driver::ScheduleRecords(*compiled->lowered, schedule_record, record_options);
    if (!records.ok()) return Fail(std::string(records.status().message()));
    for (const kiln::driver::KernelScheduleRecord& record : *records) {
      Write(kiln::driver::RenderScheduleRecord(record, json, print_options));
    }
    return 0;
  }
  if (compiled->native) {
    const kiln::codegen::NativeModule& code = *compiled->native;
    const std::string& out = emit == "obj"    ? code.object
                             : emit == "so"   ? code.shared_library
                             : emit == "asm"  ? code.assembly
                             : emit == "llvm" ? code.llvm_ir
                             : emit == "provenance" ? code.provenance_json
                                                    : code.header;
    return WriteOutput(out);
  }
  const kiln::IRModule& module = lowering ? compiled->lowered->module : compiled->optimized;
  // Loop IR prints as script.
  if (lowering) print_options.format = kiln::PrintOptions::Format::kScript;
  return WriteOutput(json ? kiln::PrintModuleJson(module) : kiln::PrintModule(module, print_options));
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tools::SetToolUsage(
      "kiln-opt FILE [--passes=PIPELINE | -O0..-O3] [--format=relay|script|json] [...]\n"
      "Reads Kiln graph IR text or an ONNX model (FILE or - for stdin), runs the requested "
      "passes, and prints the result. See docs/passes.md. Flags may be written with dashes "
      "(--split-input-file) or underscores (--split_input_file).",
      {__FILE__});
  NormalizedArgs args = NormalizeArgs(argc, argv);
  std::vector<char*> normalized_argv;
  for (std::string& arg : args.argv) normalized_argv.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(normalized_argv.size()), normalized_argv.data());
  if (absl::GetFlag(FLAGS_list_onnx_ops)) {
    for (const std::string& op : kiln::SupportedOnnxOps()) std::printf("%s\n", op.c_str());
    for (const std::string& op : kiln::FunctionBodyOnnxOps()) {
      std::printf("%s (expanded from its ONNX function body)\n", op.c_str());
    }
    return 0;
  }
  if (absl::GetFlag(FLAGS_list_passes)) {
    if (absl::GetFlag(FLAGS_format) == "json") {
      std::printf("%s\n", kiln::PassRegistryToJson(kiln::driver::RegisteredPasses()).dump(2).c_str());
    } else {
      ListPasses(kiln::driver::RegisteredPasses());
    }
    return 0;
  }
  if (positional.size() != 2) return Fail("expected exactly one input file (or - for stdin)");
  std::string path = positional[1];
  std::string format = absl::GetFlag(FLAGS_format);
  if (format != "relay" && format != "script" && format != "json") {
    return Fail(absl::StrCat("unknown --format '", format, "' (expected relay, script or json)"));
  }
  int opt_level = absl::GetFlag(FLAGS_opt_level);
  if (opt_level > 3 || opt_level < -1) {
    return Fail(absl::StrCat("unknown optimization level ", opt_level, " (expected -O0..-O3)"));
  }

  std::string text, error;
  if (!ReadInput(path, &text, &error)) return Fail(error);
  bool is_text = LooksLikeText(path, text);
  kiln_opt::ChunkRunOptions chunk_options;
  chunk_options.split = absl::GetFlag(FLAGS_split_input_file);
  chunk_options.verify_diagnostics = absl::GetFlag(FLAGS_verify_diagnostics);
  if (!chunk_options.split && !chunk_options.verify_diagnostics) {
    return CompileInput(path, text, is_text, format, opt_level, args);
  }
  if (!is_text) {
    return Fail("--split-input-file and --verify-diagnostics read graph text, not an ONNX model");
  }
  chunk_options.source_name = path == "-" ? "<stdin>" : path;
  return kiln_opt::RunChunks(text, chunk_options, [&](const std::string& chunk_text) {
    return CompileInput(path, chunk_text, is_text, format, opt_level, args);
  });
}
