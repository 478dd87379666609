// kiln-opt: reads a model (graph IR text, `.kir`, or an ONNX model, `.onnx`;
// `-` reads stdin and detects which) and prints it in the requested format.
// Later issues add pass pipelines; the shape of the tool (one input, options,
// one output) stays.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "engine/frontend/onnx/importer.h"
#include "engine/op/type_inference.h"
#include "engine/parser/parser.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"

ABSL_FLAG(std::string, format, "relay",
          "output format: relay (canonical graph text), script (Python-like), json (see "
          "docs/ir-json.md)");
ABSL_FLAG(bool, hide_spans, false, "omit /* si=... */ span comments");
ABSL_FLAG(std::string, input_shape, "",
          "static shape for an ONNX graph input, NAME=D0,D1,... (repeatable; several may also "
          "be given at once separated by ';')");
ABSL_FLAG(bool, no_span_filling, false, "import ONNX without source spans");
ABSL_FLAG(bool, list_onnx_ops, false, "print the ONNX op types the importer converts and exit");
ABSL_FLAG(bool, show_metadata, true,
          "print the #[metadata] table of large constants after the functions");

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
bool ParseInputShapes(const std::string& specs,
                      std::map<std::string, std::vector<int64_t>>* shapes, std::string* error) {
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

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "kiln-opt FILE.kir [--format=relay|script|json] [--hide-spans]\n"
      "Parses Kiln graph IR text (FILE or - for stdin) and prints it.");
  // Users write --hide-spans and --input-shape; absl names cannot hold dashes,
  // so flag names are normalized to underscores before parsing.
  // Repeated --input-shape flags are joined into one, since an absl flag
  // keeps only its last value.
  std::vector<std::string> normalized{argv[0]};
  std::string input_shapes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      size_t end = std::min(arg.find('='), arg.size());
      for (size_t k = 2; k < end; ++k) {
        if (arg[k] == '-') arg[k] = '_';
      }
      if (arg.compare(0, end, "--input_shape") == 0) {
        std::string value = end < arg.size() ? arg.substr(end + 1) : (i + 1 < argc ? argv[++i] : "");
        input_shapes += (input_shapes.empty() ? "" : ";") + value;
        continue;
      }
    }
    normalized.push_back(std::move(arg));
  }
  if (!input_shapes.empty()) normalized.push_back("--input_shape=" + input_shapes);
  std::vector<char*> normalized_argv;
  for (std::string& arg : normalized) normalized_argv.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(normalized_argv.size()), normalized_argv.data());
  if (absl::GetFlag(FLAGS_list_onnx_ops)) {
    for (const std::string& op : kiln::SupportedOnnxOps()) std::printf("%s\n", op.c_str());
    return 0;
  }
  if (positional.size() != 2) {
    std::cerr << "kiln-opt: expected exactly one input file (or - for stdin)\n";
    return 1;
  }
  std::string path = positional[1];
  std::string format = absl::GetFlag(FLAGS_format);
  if (format != "relay" && format != "script" && format != "json") {
    std::cerr << "kiln-opt: unknown --format '" << format
              << "' (expected relay, script or json)\n";
    return 1;
  }

  std::string text, error;
  if (!ReadInput(path, &text, &error)) {
    std::cerr << "kiln-opt: " << error << "\n";
    return 1;
  }
  absl::StatusOr<kiln::IRModule> module;
  if (LooksLikeText(path, text)) {
    kiln::ParseOptions parse_options;
    parse_options.source_name = path == "-" ? "<stdin>" : path;
    module = kiln::ParseModule(text, parse_options);
  } else {
    kiln::OnnxImportOptions import_options;
    import_options.span_filling = !absl::GetFlag(FLAGS_no_span_filling);
    if (!ParseInputShapes(absl::GetFlag(FLAGS_input_shape), &import_options.input_shapes,
                          &error)) {
      std::cerr << "kiln-opt: " << error << "\n";
      return 1;
    }
    module = kiln::ImportOnnxModel(text, import_options);
  }
  if (!module.ok()) {
    std::cerr << "kiln-opt: " << module.status().message() << "\n";
    return 1;
  }

  kiln::PrintOptions print_options;
  print_options.show_spans = !absl::GetFlag(FLAGS_hide_spans);
  print_options.show_metadata = absl::GetFlag(FLAGS_show_metadata);
  std::string output;
  if (format == "json") {
    output = kiln::PrintModuleJson(*module);
  } else {
    print_options.format = format == "script" ? kiln::PrintOptions::Format::kScript
                                              : kiln::PrintOptions::Format::kRelay;
    output = kiln::PrintModule(*module, print_options);
  }
  std::fwrite(output.data(), 1, output.size(), stdout);
  return 0;
}
