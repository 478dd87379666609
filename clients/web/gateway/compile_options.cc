// CompileOptions: query parameters -> kiln.v1 requests and reproducing command lines.
#include "clients/web/gateway/compile_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cli/compile_request.h"

namespace kiln::explorer {
namespace {

constexpr size_t kMaxPipelineBytes = 8 << 10;
constexpr size_t kMaxListItems = 64;
constexpr size_t kMaxItemBytes = 256;

// `text` single-quoted for a POSIX shell.
std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

absl::Status CheckItems(const char* parameter, const std::vector<std::string>& items) {
  if (items.size() > kMaxListItems) {
    return absl::InvalidArgumentError(absl::StrCat(parameter, ": at most ", kMaxListItems,
                                                   " values, got ", items.size()));
  }
  for (const std::string& item : items) {
    if (item.size() > kMaxItemBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(parameter, ": a value is longer than ", kMaxItemBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

// Every value of a repeatable parameter, comma lists split, empty items dropped.
std::vector<std::string> ListOf(const HttpExchange& exchange, const char* name) {
  std::vector<std::string> items;
  for (const std::string& value : exchange.QueryAll(name)) {
    for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      items.emplace_back(item);
    }
  }
  return items;
}

// The flags both command lines share, in kiln's spelling (`kiln_opt`: kiln-opt's).
std::vector<std::string> PassFlags(const CompileOptions& options, bool kiln_opt) {
  std::vector<std::string> flags;
  if (kiln_opt) {
    flags.push_back(absl::StrCat("-O", options.opt_level < 0 ? 3 : options.opt_level));
  } else if (options.opt_level >= 0) {
    flags.push_back(absl::StrCat("--opt-level=", options.opt_level));
  }
  if (!options.pipeline.empty()) {
    flags.push_back(ShellQuote(absl::StrCat(kiln_opt ? "--passes=" : "--pipeline=",
                                            options.pipeline)));
  }
  if (!options.disabled_passes.empty()) {
    flags.push_back(ShellQuote(absl::StrCat("--disable-pass=",
                                            absl::StrJoin(options.disabled_passes, ","))));
  }
  for (const auto& [key, value] : options.config) {
    flags.push_back(ShellQuote(absl::StrCat("--config=", key, "=", value)));
  }
  for (const std::string& spec : options.input_shapes) {
    flags.push_back(ShellQuote(absl::StrCat("--input-shape=", spec)));
  }
  if (options.max_pass_index >= 0) {
    flags.push_back(kiln_opt ? absl::StrCat("--max-pass-index=", options.max_pass_index)
                             : absl::StrCat("--config=pass.max_pass_index=",
                                            options.max_pass_index));
  }
  if (options.fast_math) flags.push_back("--fast-math");  // the same flag in both tools
  return flags;
}

}  // namespace

absl::StatusOr<CompileOptions> CompileOptionsFromQuery(const HttpExchange& exchange) {
  CompileOptions options;
  if (std::optional<std::string> level = exchange.Query("opt_level"); level && !level->empty()) {
    if (!absl::SimpleAtoi(*level, &options.opt_level) || options.opt_level < 0 ||
        options.opt_level > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("opt_level: expected 0, 1, 2 or 3, got '", level->substr(0, 16), "'"));
    }
  }
  options.pipeline = exchange.Query("pipeline").value_or("");
  if (options.pipeline.size() > kMaxPipelineBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline: longer than ", kMaxPipelineBytes, " bytes"));
  }
  options.disabled_passes = ListOf(exchange, "disable");
  if (absl::Status status = CheckItems("disable", options.disabled_passes); !status.ok()) {
    return status;
  }
  std::vector<std::string> config = exchange.QueryAll("config");
  if (absl::Status status = CheckItems("config", config); !status.ok()) return status;
  for (const std::string& entry : config) {
    if (entry.empty()) continue;
    std::pair<std::string, std::string> pair = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    if (pair.first.empty() || entry.find('=') == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: expected KEY=VALUE, got '", entry, "'"));
    }
    options.config.push_back(std::move(pair));
  }
  if (std::optional<std::string> cut = exchange.Query("max_pass_index"); cut && !cut->empty()) {
    if (!absl::SimpleAtoi(*cut, &options.max_pass_index) || options.max_pass_index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "max_pass_index: expected a count of passes >= 0, got '", cut->substr(0, 16), "'"));
    }
  }
  options.stages = ListOf(exchange, "stages");
  for (const std::string& stage : options.stages) {
    if (stage != "graph" && stage != "loop" && stage != "llvm") {
      return absl::InvalidArgumentError(
          absl::StrCat("stages: unknown stage '", stage.substr(0, 32), "' (graph, loop, llvm)"));
    }
  }
  options.fast_math = exchange.Query("fast_math").value_or("") == "1";
  options.check_numerics = exchange.Query("check_numerics").value_or("") == "1";
  for (auto [name, field] : {std::pair{"numerics_rtol", &options.numerics_rtol},
                             std::pair{"numerics_atol", &options.numerics_atol}}) {
    std::optional<std::string> text = exchange.Query(name);
    if (!text || text->empty()) continue;
    double value = 0;
    if (!absl::SimpleAtod(*text, &value) || !(value >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": expected a tolerance >= 0, got '", text->substr(0, 16), "'"));
    }
    *field = value;
  }
  options.input_shapes = exchange.QueryAll("input_shape");
  if (absl::Status status = CheckItems("input_shape", options.input_shapes); !status.ok()) {
    return status;
  }
  for (const std::string& spec : options.input_shapes) {
    v1::InputShape shape;
    if (absl::Status status = cli::ParseInputShape(spec, &shape); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input_shape: ", status.message()));
    }
  }
  return options;
}

v1::CompileRequest MakeCompileRequest(const StoredModel& model, const CompileOptions& options) {
  v1::CompileRequest request;
  if (model.name.ends_with(".kir") || model.name.ends_with(".txt")) {
    request.set_graph_ir_text(model.bytes);
  } else {
    request.set_onnx(model.bytes);
  }
  request.set_name(model.name);
  request.set_fast_math(options.fast_math);
  v1::PassOptions* passes = request.mutable_pass_options();
  if (options.opt_level >= 0) passes->set_opt_level(options.opt_level);
  passes->set_pipeline(options.pipeline);
  for (const std::string& name : options.disabled_passes) passes->add_disabled_passes(name);
  for (const auto& [key, value] : options.config) (*passes->mutable_config())[key] = value;
  if (options.max_pass_index >= 0) {
    (*passes->mutable_config())["pass.max_pass_index"] = absl::StrCat(options.max_pass_index);
  }
  for (const std::string& spec : options.input_shapes) {
    (void)cli::ParseInputShape(spec, request.add_input_shapes());
  }
  return request;
}

std::string KilnTraceCommand(const StoredModel& model, const CompileOptions& options) {
  std::vector<std::string> words = {"kiln", "trace", ShellQuote(model.name)};
  for (std::string& flag : PassFlags(options, /*kiln_opt=*/false)) words.push_back(flag);
  if (!options.stages.empty()) {
    words.push_back(absl::StrCat("--stages=", absl::StrJoin(options.stages, ",")));
  }
  if (options.check_numerics) words.push_back("--check-numerics");
  return absl::StrJoin(words, " ");
}

std::string KilnScheduleCommand(const StoredModel& model, const CompileOptions& options,
                                const std::string& selector) {
  std::vector<std::string> words = {"kiln", "schedule", ShellQuote(model.name),
                                    ShellQuote(absl::StrCat("--selector=", selector)), "--verify"};
  for (std::string& flag : PassFlags(options, /*kiln_opt=*/false)) words.push_back(flag);
  return absl::StrJoin(words, " ");
}

std::string KilnOptPrefix(const StoredModel& model, const CompileOptions& options) {
  std::vector<std::string> words = {"kiln-opt", ShellQuote(model.name)};
  for (std::string& flag : PassFlags(options, /*kiln_opt=*/true)) words.push_back(flag);
  return absl::StrJoin(words, " ");
}

std::string KilnOptCommand(const std::string& prefix, const std::string& stage,
                           const std::string& pass_name, int occurrence) {
  std::string command = prefix;
  if (stage == "loop") absl::StrAppend(&command, " --emit=loop");
  absl::StrAppend(&command, " ", ShellQuote(absl::StrCat("--print-after=", pass_name)));
  if (occurrence > 1) absl::StrAppend(&command, "   # run ", occurrence, " of ", pass_name);
  return command;
}

}  // namespace kiln::explorer
