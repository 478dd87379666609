// CrashReproducer: the reproducer file and the flags that recreate a context.
#include "engine/pass/crash_reproducer.h"

#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/pass/pipeline.h"
#include "engine/printer/printer.h"
#include "engine/support/identifier.h"

namespace kiln {
namespace {

// Comment lines: every line of `text` prefixed with `// `.
std::string Commented(std::string_view text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(std::string(text), '\n')) {
    absl::StrAppend(&out, "// ", line, "\n");
  }
  return out;
}

// A shell word for the RUN line: quoted when it holds anything but plain
// characters.
std::string ShellWord(std::string_view word) {
  const bool plain = !word.empty() && AllIdentChars(word, "-.,=/:");
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string ContextFlags(const PassContext& context) {
  std::string flags = absl::StrCat("-O", context.opt_level());
  for (const std::string& name : context.required_passes()) {
    absl::StrAppend(&flags, " ", ShellWord(absl::StrCat("--required-pass=", name)));
  }
  for (const std::string& name : context.disabled_passes()) {
    absl::StrAppend(&flags, " ", ShellWord(absl::StrCat("--disable-pass=", name)));
  }
  for (const auto& [key, value] : context.config()) {
    std::string text = TypeOf(value) == ConfigType::kString ? std::get<std::string>(value)
                                                            : FormatConfigValue(value);
    absl::StrAppend(&flags, " ", ShellWord(absl::StrCat("--config=", key, "=", text)));
  }
  return flags;
}

CrashReproducer::CrashReproducer(CrashReproducerOptions options)
    : PassInstrument("CrashReproducer"), options_(std::move(options)) {}

absl::Status CrashReproducer::RunBeforePass(const IRModule&, const PassInvocation&) {
  failure_written_ = false;
  return absl::OkStatus();
}

absl::Status CrashReproducer::RunAfterPassFailed(const IRModule& module_before,
                                                 const PassInvocation& pass,
                                                 const absl::Status& error) {
  if (failure_written_) return absl::OkStatus();
  failure_written_ = true;

  // A non-owning handle: PrintPipeline only reads the pass.
  Pass failing(std::shared_ptr<const PassNode>(), &pass.pass);
  std::string pipeline = PrintPipeline(failing);
  std::error_code ec;
  std::filesystem::create_directories(options_.directory, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create reproducer directory '",
                                               options_.directory, "': ", ec.message()));
  }
  // The file name keeps only characters safe everywhere.
  std::string path = (std::filesystem::path(options_.directory) /
                      absl::StrCat("reproducer_", ReplaceNonIdentChars(pass.name(), "-."), ".kir"))
                         .string();
  PrintOptions print_options;
  print_options.show_metadata = true;  // constants must survive the round trip
  std::string content =
      absl::StrCat("// RUN: kiln-opt %s ", ShellWord(absl::StrCat("--passes=", pipeline)),
                   options_.context_flags.empty() ? "" : " ", options_.context_flags, "\n",
                   "// Reproducer: the IR given to pass '", pass.name(), "', which failed with:\n",
                   Commented(std::string(error.message())));
  if (!options_.full_pipeline.empty()) {
    absl::StrAppend(&content, "// Full pipeline: ", options_.full_pipeline, "\n");
  }
  absl::StrAppend(&content, PrintModule(module_before, print_options));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) {
    return absl::UnavailableError(absl::StrCat("cannot write reproducer '", path, "'"));
  }
  written_.push_back(path);
  return absl::OkStatus();
}

}  // namespace kiln
