// CompileRequest construction. Only the shape of each flag is checked here
// (an integer opt level, KEY=VALUE, a known artifact name); whether a pass or
// config key exists is the server's answer (INVALID_ARGUMENT listing them).
#include "clients/cli/compile_request.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {
namespace {

struct ArtifactName {
  const char* flag_value;
  kiln::v1::ArtifactKind kind;
};
constexpr ArtifactName kArtifactNames[] = {
    {"graph-text", kiln::v1::GRAPH_IR_TEXT},
    {"graph-json", kiln::v1::GRAPH_IR_JSON},
    {"loop-ir", kiln::v1::LOOP_IR},
    {"metadata", kiln::v1::METADATA_JSON},
    {"object", kiln::v1::OBJECT},
    {"asm", kiln::v1::ASSEMBLY},
    {"llvm-ir", kiln::v1::LLVM_IR},
    {"header", kiln::v1::HEADER},
    {"provenance", kiln::v1::PROVENANCE_JSON},
    {"so", kiln::v1::SHARED_LIBRARY},
};

absl::Status ReadModel(const std::string& path, kiln::v1::CompileRequest* request) {
  absl::StatusOr<std::string> read = ReadFileFlag(path, "model");
  if (!read.ok()) return read.status();
  std::string bytes = *std::move(read);
  if (absl::EndsWith(path, ".kir") || absl::EndsWith(path, ".txt")) {
    request->set_graph_ir_text(std::move(bytes));
  } else {
    request->set_onnx(std::move(bytes));
  }
  request->set_name(std::filesystem::path(path).stem().string());
  return absl::OkStatus();
}


// NAME=[D0,D1][D0,...]: one bracketed shape per element, in order ([] is a scalar).
absl::Status ParseSequenceInput(const std::string& spec, kiln::v1::SequenceInputShape* sequence) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sequence-input expects NAME=[D0,D1,...][...], got '", spec, "'"));
  }
  sequence->set_name(spec.substr(0, eq));
  absl::string_view rest = absl::string_view(spec).substr(eq + 1);
  while (!rest.empty()) {
    size_t close = rest.find(']');
    if (rest[0] != '[' || close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sequence-input: expected [D0,D1,...] at '", std::string(rest), "'"));
    }
    kiln::v1::InputShape* element = sequence->add_elements();
    for (absl::string_view dim :
         absl::StrSplit(rest.substr(1, close - 1), ',', absl::SkipWhitespace())) {
      int64_t value;
      if (!absl::SimpleAtoi(dim, &value) || value < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--sequence-input: '", std::string(dim), "' is not a non-negative integer"));
      }
      element->add_dims(value);
    }
    rest.remove_prefix(close + 1);
  }
  return absl::OkStatus();
}

absl::Status ReadPassOptions(const CommandLine& line, kiln::v1::PassOptions* options) {
  if (std::optional<std::string> text = line.Value("opt-level")) {
    int level;
    if (!absl::SimpleAtoi(*text, &level) || level < 0 || level > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("--opt-level: '", *text, "' is not an integer 0..3"));
    }
    options->set_opt_level(level);
  }
  if (std::optional<std::string> pipeline = line.Value("pipeline")) {
    options->set_pipeline(*pipeline);
  }
  for (std::string& pass : line.List("disable-pass")) options->add_disabled_passes(std::move(pass));
  for (std::string& pass : line.List("required-pass"))
    options->add_required_passes(std::move(pass));
  for (const std::string& entry : line.List("config")) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--config expects KEY=VALUE, got '", entry, "'"));
    }
    (*options->mutable_config())[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadFileFlag(const std::string& path, const std::string& what) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::InvalidArgumentError(std::filesystem::exists(path, error)
                                          ? absl::StrCat(what, " '", path, "' is not a regular file")
                                          : absl::StrCat(what, " file '", path, "' does not exist"));
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (!file.is_open() || file.bad()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " file '", path, "'"));
  }
  return bytes;
}

absl::Status ParseInputShape(const std::string& spec, kiln::v1::InputShape* shape) {
  size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-shape expects NAME=D0,D1,..., got '", spec, "'"));
  }
  shape->set_name(spec.substr(0, eq));
  for (absl::string_view dim : absl::StrSplit(spec.substr(eq + 1), ',', absl::SkipWhitespace())) {
    int64_t value;
    if (!absl::SimpleAtoi(dim, &value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape: '", std::string(dim), "' is not a non-negative integer"));
    }
    shape->add_dims(value);
  }
  return absl::OkStatus();
}

absl::StatusOr<kiln::v1::CompileRequest> CompileRequestFromFlags(const CommandLine& line) {
  kiln::v1::CompileRequest request;
  if (absl::Status status = ReadModel(line.positionals().front(), &request); !status.ok()) {
    return status;
  }
  if (absl::Status status = ReadPassOptions(line, request.mutable_pass_options()); !status.ok()) {
    return status;
  }
  request.mutable_target()->set_triple(line.Value("target").value_or(""));
  request.mutable_target()->set_cpu(line.Value("cpu").value_or(""));
  request.mutable_target()->set_features(line.Value("features").value_or(""));
  if (std::optional<std::string> mib = line.Value("weight-prefetch-footprint-mib")) {
    int64_t value;
    if (!absl::SimpleAtoi(*mib, &value) || value > (int64_t{1} << 40) || value < -(int64_t{1} << 40)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--weight-prefetch-footprint-mib: '", *mib, "' is not an integer number of MiB"));
    }
    request.mutable_target()->set_weight_prefetch_footprint_bytes(value < 0 ? -1 : value << 20);
  }
  request.set_fast_math(line.Bool("fast-math"));
  for (const std::string& spec : line.List("input-shape")) {
    if (absl::Status status = ParseInputShape(spec, request.add_input_shapes()); !status.ok()) {
      return status;
    }
  }
  for (const std::string& spec : line.List("sequence-input")) {
    if (absl::Status status = ParseSequenceInput(spec, request.add_sequence_input_shapes());
        !status.ok()) {
      return status;
    }
  }
  for (std::string& name : line.List("empty-optional-input")) {
    request.add_empty_optional_inputs(std::move(name));
  }
  for (const std::string& name : line.List("artifacts")) {
    const ArtifactName* match = nullptr;
    for (const ArtifactName& candidate : kArtifactNames) {
      if (name == candidate.flag_value) match = &candidate;
    }
    if (match == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--artifacts: unknown artifact '", name,
                                                     "' (known: graph-text, graph-json, loop-ir, "
                                                     "metadata, object, asm, llvm-ir, header, provenance, so)"));
    }
    request.add_artifacts(match->kind);
  }
  return request;
}

}  // namespace kiln::cli
