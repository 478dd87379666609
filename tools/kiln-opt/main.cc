// kiln-opt: reads a model (graph IR text, `.kir`, or an ONNX model, `.onnx`;
// `-` reads stdin and detects which), optionally runs a pass pipeline on it
// under a PassContext built from the flags, and prints the result in the
// requested format. Pass dumps, timing reports and bisection lines go to
// stderr; the module alone goes to stdout. Without --passes or -O the tool
// only prints, exactly as before pipelines existed. --emit=loop and
// --schedule-record lower the optimized module (lowering_output.h).
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
#include "engine/frontend/onnx/importer.h"
#include "engine/loop/transform/register_loop_passes.h"
#include "engine/op/type_inference.h"
#include "engine/parser/parser.h"
#include "engine/pass/configured_instruments.h"
#include "engine/pass/crash_reproducer.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pass_event.h"
#include "engine/pass/pass_registry.h"
#include "engine/pass/pass_timing.h"
#include "engine/pass/pass_listing.h"
#include "engine/pass/pipeline.h"
#include "engine/pass/print_ir.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "tools/kiln-opt/lowering_output.h"

ABSL_FLAG(std::string, format, "relay",
          "output format: relay (canonical graph text), script (Python-like), json (see "
          "docs/ir-json.md; pass dumps become one JSON event per line)");
ABSL_FLAG(bool, hide_spans, false, "omit /* si=... */ span comments");
ABSL_FLAG(std::string, input_shape, "",
          "static shape for an ONNX graph input, NAME=D0,D1,... (repeatable; several may also "
          "be given at once separated by ';')");
ABSL_FLAG(bool, no_span_filling, false, "import ONNX without source spans");
ABSL_FLAG(bool, initializers_as_params, false,
          "import ONNX initializers as parameters of @main (after the inputs) instead of "
          "constants");
ABSL_FLAG(bool, list_onnx_ops, false, "print the ONNX op types the importer converts and exit");
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

// Lowering (tools/kiln-opt/lowering_output.h).
ABSL_FLAG(std::string, emit, "graph",
          "what to print: graph (the graph module) or loop (run the graph pipeline, -O2's when "
          "none is given, lower, run the default loop pipeline, print the loop module as script, or "
          "as JSON with --format=json)");
ABSL_FLAG(std::string, loop_passes, kiln::loop::transform::DefaultLoopPipeline(),
          "with --emit=loop: the loop pipeline run on the lowered module (default: the "
          "default loop pipeline; empty: none)");
ABSL_FLAG(std::string, schedule_record, "",
          "print the schedule record of the kernels SELECTOR names (the call index in the "
          "optimized main, a fused function name, or an ONNX layer name) after lowering; "
          "--format=json prints one JSON object per step");

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

// Flags that may be given several times. An absl flag keeps only its last
// value, so these are collected before parsing and passed on joined.
struct RepeatedFlag {
  const char* name;  // normalized (underscores)
  const char* separator;
};
constexpr RepeatedFlag kRepeatedFlags[] = {
    {"input_shape", ";"},  {"disable_pass", ","}, {"required_pass", ","},
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

// With --format=json, the selected pass events as JSON lines on stderr.
class JsonEventPrinter final : public kiln::PassObserver {
 public:
  explicit JsonEventPrinter(kiln::PrintIRFilter filter) : filter_(std::move(filter)) {}

  void OnPassEvent(const kiln::PassEvent& event) override {
    bool print = false;
    switch (event.kind) {
      case kiln::PassEvent::Kind::kBefore:
        print = filter_.PrintBefore(event.pass, event.is_sequential);
        break;
      case kiln::PassEvent::Kind::kAfter:
        print = filter_.PrintAfter(event.pass, event.is_sequential, event.changed);
        break;
      case kiln::PassEvent::Kind::kFailed:
        print = !event.is_sequential;
        break;
    }
    if (print) std::cerr << kiln::PassEventToJson(event) << "\n";
  }

 private:
  kiln::PrintIRFilter filter_;
};

int Fail(std::string_view message) {
  std::cerr << "kiln-opt: " << message << "\n";
  return 1;
}

// Builds the PassContext from the flags, runs `pipeline_text` on `*module`.
// Returns the process exit code.
// `then`, when given, runs on the result while the context is still current
// (lowering and the loop pipeline, so instruments see those passes too) and
// gives the exit code.
int RunPipeline(const std::string& pipeline_text, const std::vector<std::string>& configs,
                const kiln::PrintOptions& print_options, bool json, kiln::IRModule* module,
                const std::function<int(kiln::PassContext&, const kiln::IRModule&)>& then = {}) {
  absl::StatusOr<kiln::Pass> pipeline = kiln::ParsePipeline(pipeline_text);
  if (!pipeline.ok()) return Fail(std::string(pipeline.status().message()));

  kiln::PassContext context;
  int opt_level = absl::GetFlag(FLAGS_opt_level);
  if (opt_level >= 0) context.set_opt_level(opt_level);
  for (const std::string& name : SplitNames(absl::GetFlag(FLAGS_required_pass))) {
    context.AddRequiredPass(name);
  }
  for (const std::string& name : SplitNames(absl::GetFlag(FLAGS_disable_pass))) {
    context.AddDisabledPass(name);
  }
  for (const std::string& assignment : configs) {
    absl::Status status = context.SetConfigFromAssignment(assignment);
    if (!status.ok()) return Fail(absl::StrCat("--config: ", std::string(status.message())));
  }
  // The convenience flags set the same options a --config would.
  if (absl::GetFlag(FLAGS_max_pass_index) >= 0) {
    absl::Status status =
        context.SetConfig(kiln::kConfigMaxPassIndex, absl::GetFlag(FLAGS_max_pass_index));
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (absl::GetFlag(FLAGS_verify_each)) {
    absl::Status status = context.SetConfig(kiln::kConfigVerifyEach, true);
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (!absl::GetFlag(FLAGS_span_coverage).empty()) {
    absl::Status status =
        context.SetConfig(kiln::kConfigSpanCoverage, absl::GetFlag(FLAGS_span_coverage));
    if (!status.ok()) return Fail(std::string(status.message()));
  }

  // Timing first: its before hook is the first and its after hook the first,
  // so other instruments' after hooks (verification, dumps) are not timed.
  std::shared_ptr<kiln::PassTiming> timing;
  std::string time_passes = absl::GetFlag(FLAGS_time_passes);
  if (!time_passes.empty()) {
    if (time_passes != "tree" && time_passes != "list") {
      return Fail(
          absl::StrCat("unknown --time-passes '", time_passes, "' (expected tree or list)"));
    }
    timing = std::make_shared<kiln::PassTiming>();
    context.AddInstrument(timing);
  }

  kiln::PrintIRFilter filter;
  filter.before_all = absl::GetFlag(FLAGS_print_before_all);
  filter.after_all = absl::GetFlag(FLAGS_print_after_all);
  filter.before = SplitNames(absl::GetFlag(FLAGS_print_before));
  filter.after = SplitNames(absl::GetFlag(FLAGS_print_after));
  if (absl::GetFlag(FLAGS_print_changed)) {
    filter.only_changed = true;
    if (filter.after.empty()) filter.after_all = true;
  }
  std::unique_ptr<JsonEventPrinter> json_printer;
  if (!filter.empty()) {
    if (json) {
      json_printer = std::make_unique<JsonEventPrinter>(filter);
      kiln::ObserverOptions options;
      options.report_before = filter.before_all || !filter.before.empty();
      options.include_ir_before = options.report_before;
      options.include_ir_after = true;
      context.AddInstrument(
          std::make_shared<kiln::ObserverInstrument>(json_printer.get(), options));
    } else {
      context.AddInstrument(std::make_shared<kiln::PrintIR>(filter, &std::cerr, print_options));
    }
  }

  absl::StatusOr<kiln::ConfiguredInstruments> configured =
      kiln::AddConfiguredInstruments(context, &std::cerr);
  if (!configured.ok()) return Fail(std::string(configured.status().message()));

  std::shared_ptr<kiln::CrashReproducer> reproducer;
  if (!absl::GetFlag(FLAGS_reproducer_dir).empty()) {
    kiln::CrashReproducerOptions options;
    options.directory = absl::GetFlag(FLAGS_reproducer_dir);
    options.context_flags = kiln::ContextFlags(context);
    options.full_pipeline = kiln::PrintPipeline(*pipeline);
    reproducer = std::make_shared<kiln::CrashReproducer>(options);
    context.AddInstrument(reproducer);
  }

  absl::StatusOr<kiln::IRModule> result;
  int then_code = 0;
  {
    kiln::PassContext::Scope scope(context);
    if (!scope.status().ok()) return Fail(std::string(scope.status().message()));
    result = (**pipeline)(*module, context);
    if (result.ok() && then) then_code = then(context, *result);
    absl::Status closed = scope.Close();
    if (result.ok() && !closed.ok()) result = closed;
  }
  for (const kiln::PassDiagnostic& diagnostic : context.diagnostics()) {
    std::cerr << "kiln-opt: " << kiln::FormatDiagnostic(diagnostic) << "\n";
  }
  if (timing) {
    std::cerr << (time_passes == "list" ? timing->RenderList() : timing->RenderTree());
  }
  if (configured->span_coverage &&
      context.GetConfig<std::string>(kiln::kConfigSpanCoverage) == "report") {
    std::cerr << "Span coverage after each pass:\n" << configured->span_coverage->Render();
  }
  if (!result.ok()) {
    Fail(std::string(result.status().message()));
    if (reproducer) {
      for (const std::string& path : reproducer->written()) {
        std::cerr << "kiln-opt: reproducer written to " << path << "\n";
      }
    }
    return 1;
  }
  *module = *std::move(result);
  return then_code;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "kiln-opt FILE [--passes=PIPELINE | -O0..-O3] [--format=relay|script|json] [...]\n"
      "Reads Kiln graph IR text or an ONNX model (FILE or - for stdin), runs the requested "
      "passes, and prints the result. See docs/passes.md.");
  NormalizedArgs args = NormalizeArgs(argc, argv);
  std::vector<char*> normalized_argv;
  for (std::string& arg : args.argv) normalized_argv.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(normalized_argv.size()), normalized_argv.data());
  if (absl::GetFlag(FLAGS_list_onnx_ops)) {
    for (const std::string& op : kiln::SupportedOnnxOps()) std::printf("%s\n", op.c_str());
    return 0;
  }
  kiln::RegisterBuiltinPasses(kiln::PassRegistry::Global());
  kiln::loop::transform::RegisterLoopPasses(kiln::PassRegistry::Global());
  if (absl::GetFlag(FLAGS_list_passes)) {
    if (absl::GetFlag(FLAGS_format) == "json") {
      std::printf("%s\n", kiln::PassRegistryToJson(kiln::PassRegistry::Global()).dump(2).c_str());
    } else {
      ListPasses(kiln::PassRegistry::Global());
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
  absl::StatusOr<kiln::IRModule> module;
  if (LooksLikeText(path, text)) {
    kiln::ParseOptions parse_options;
    parse_options.source_name = path == "-" ? "<stdin>" : path;
    module = kiln::ParseModule(text, parse_options);
  } else {
    kiln::OnnxImportOptions import_options;
    import_options.span_filling = !absl::GetFlag(FLAGS_no_span_filling);
    import_options.initializers_as_params = absl::GetFlag(FLAGS_initializers_as_params);
    if (!ParseInputShapes(absl::GetFlag(FLAGS_input_shape), &import_options.input_shapes, &error)) {
      return Fail(error);
    }
    module = kiln::ImportOnnxModel(text, import_options);
  }
  if (!module.ok()) return Fail(std::string(module.status().message()));

  kiln::PrintOptions print_options;
  print_options.show_spans = !absl::GetFlag(FLAGS_hide_spans);
  print_options.show_metadata = absl::GetFlag(FLAGS_show_metadata);
  print_options.format =
      format == "script" ? kiln::PrintOptions::Format::kScript : kiln::PrintOptions::Format::kRelay;

  std::string emit = absl::GetFlag(FLAGS_emit);
  if (emit != "graph" && emit != "loop") {
    return Fail(absl::StrCat("unknown --emit '", emit, "' (expected graph or loop)"));
  }
  bool lowering = emit == "loop" || !absl::GetFlag(FLAGS_schedule_record).empty();

  // --passes names the pipeline; -O alone runs the default one of its level.
  std::string pipeline = absl::GetFlag(FLAGS_passes);
  if (pipeline.empty() && opt_level >= 0) pipeline = kiln::DefaultPipeline(opt_level);
  // Lowering needs fused, typed functions: the default pipeline provides them.
  if (pipeline.empty() && lowering) pipeline = kiln::DefaultPipeline(2);
  if (lowering) {
    kiln_opt::LoweringOutputOptions lowering_options;
    lowering_options.loop_pipeline = absl::GetFlag(FLAGS_loop_passes);
    lowering_options.schedule_record = absl::GetFlag(FLAGS_schedule_record);
    lowering_options.json = format == "json";
    lowering_options.print_options = print_options;
    return RunPipeline(pipeline, args.configs, print_options, format == "json", &*module,
                       [&](kiln::PassContext& context, const kiln::IRModule& optimized) {
                         return kiln_opt::EmitLowered(optimized, context, lowering_options);
                       });
  }
  if (!pipeline.empty()) {
    int code = RunPipeline(pipeline, args.configs, print_options, format == "json", &*module);
    if (code != 0) return code;
  }

  std::string output =
      format == "json" ? kiln::PrintModuleJson(*module) : kiln::PrintModule(*module, print_options);
  std::fwrite(output.data(), 1, output.size(), stdout);
  return 0;
}
