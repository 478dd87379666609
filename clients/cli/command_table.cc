// The flag and command tables and the --help text rendered from them, so the
// help can never list a flag the parser rejects or miss one it accepts.
#include "clients/cli/command_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cli/exit_codes.h"

namespace kiln::cli {
namespace {

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> flags = {
      // Global.
      {"server", "HOST:PORT", false, false,
       "kilnd address, a DNS name, or IP:PORT,IP:PORT,... (calls balanced round-robin, "
       "UNAVAILABLE retried on another; default $KILN_SERVER, else 127.0.0.1:50051)"},
      {"tls-ca", "FILE", false, false,
       "use TLS, trusting the CA certificates in FILE (PEM); without it the channel is "
       "plaintext"},
      {"token", "TOKEN", false, false, "send `authorization: Bearer TOKEN` (default $KILN_TOKEN)"},
      {"deadline", "DURATION", false, false,
       "deadline for the whole command, e.g. 30s, 2m, 500ms (default 30s)"},
      {"help", "", false, false, "print help and exit"},
      // What to compile and how (compile, trace, schedule).
      {"opt-level", "N", false, false, "optimization level 0..3 (default 3; also -O0..-O3)"},
      {"pipeline", "P", false, false,
       "textual pass pipeline, replaces the opt level's, e.g. FoldConstant,FuseOps"},
      {"disable-pass", "A,B", true, true, "passes never to run"},
      {"required-pass", "A,B", true, true, "passes to run whatever the opt level"},
      {"config", "KEY=VALUE", true, false,
       "PassContext option, e.g. relay.FuseOps.max_depth=8 (repeatable)"},
      {"input-shape", "NAME=D0,D1,...", true, false,
       "static shape for an input with symbolic dimensions (repeatable)"},
      {"sequence-input", "NAME=[D0,D1][D0,...]", true, false,
       "the element shapes of a sequence graph input, in order (repeatable)"},
      {"empty-optional-input", "NAME", true, true,
       "an optional graph input that holds no value (repeatable)"},
      {"target", "TRIPLE", false, false,
       "LLVM target triple of the native code, e.g. aarch64-linux-gnu (default: kilnd's host)"},
      {"cpu", "NAME", false, false, "target CPU, e.g. x86-64-v2, skylake-avx512, znver4"},
      {"features", "+A,-B", false, false, "LLVM target features, e.g. +avx2,-avx512f"},
      {"weight-prefetch-footprint-mib", "N", false, false,
       "fetch large weights ahead (each by an earlier kernel) when the model's weights and "
       "workspace exceed N MiB, the cache the target keeps between runs (0 always; negative or "
       "unset: never)"},
      {"fast-math", "", false, false,
       "fast-math flags on the native code's float arithmetic (reassociation, no NaN/Inf); "
       "trace --check-numerics shows each kernel's loss"},
      // compile
      {"out", "DIR", false, false, "directory the artifacts are written to (default ./kiln-out)"},
      {"artifacts", "LIST", true, true,
       "artifacts to return, from graph-text,graph-json,loop-ir,metadata,object,asm,llvm-ir,header,"
       "provenance,so (default: the first four)"},
      // trace, passes
      {"format", "text|json", false, false, "output format (default text)"},
      // trace
      {"only-changed", "", false, false, "show only the passes that changed the IR"},
      {"pass-filter", "X,Y", true, true, "only passes whose name contains one of these"},
      {"stages", "graph,loop,llvm", true, true, "only these stages (default all)"},
      {"dump-dir", "DIR", false, false,
       "also write the IR after each pass shown to DIR, one numbered file per pass "
       "(0007-graph-FoldScaleAxis.after.kir; .py loop, .ll llvm, .json with --format=json)"},
      // trace, bisect: numeric drift
      {"check-numerics", "", false, false,
       "after every graph pass, run the model on seeded inputs and print each output's largest "
       "error against the model as imported (the summary: the native code's)"},
      {"numerics-seed", "N", false, false, "seed of the inputs the numerics check draws (default 0)"},
      {"numerics-backend", "B", false, false,
       "what runs the checked modules: auto (the interpreter, native code for models too large "
       "for it), interp, or native (every module JIT-compiled)"},
      {"numerics-input", "FILE", true, false,
       "an input of the numerics check instead of seeded ones: an ONNX TensorProto file (the "
       "test data's input_N.pb), one per graph input in order (repeatable)"},
      {"rtol", "R", false, false, "bisect: relative error a pass may add (default 1e-5)"},
      {"atol", "A", false, false,
       "bisect: absolute error a pass may add; an output over both --rtol and --atol fails "
       "(default 1e-6)"},
      // schedule
      {"selector", "S", false, false,
       "the kernel: a call index in the optimized main (3), a fused function name, or an ONNX "
       "layer name (/conv1/Conv)"},
      {"verify", "", false, false,
       "run every step in the interpreter on random inputs and compare with step 0"},
  };
  return flags;
}

constexpr absl::string_view kPassFlags[] = {"opt-level",      "pipeline",       "disable-pass",
                                            "required-pass",  "config",         "input-shape",
                                            "sequence-input", "empty-optional-input",
                                            "target",         "cpu",            "features",
                                            "weight-prefetch-footprint-mib",    "fast-math"};

std::vector<absl::string_view> WithPassFlags(std::vector<absl::string_view> flags) {
  flags.insert(flags.end(), std::begin(kPassFlags), std::end(kPassFlags));
  return flags;
}

constexpr size_t kTextWidth = 80;
constexpr size_t kHelpColumn = 30;

// Word-wraps `text` to kTextWidth for a caller that has already written
// `first_column` columns of the first line; later lines start with `indent`
// spaces.
std::string Wrap(absl::string_view text, size_t first_column, size_t indent) {
  std::string out;
  size_t column = first_column;
  bool line_start = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line_start && column + 1 + word.size() > kTextWidth) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out.push_back(' ');
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
    line_start = false;
  }
  return out;
}

std::string FlagLine(const FlagSpec& flag) {
  std::string left = absl::StrCat("  --", flag.name);
  if (!flag.value_name.empty()) absl::StrAppend(&left, "=", flag.value_name);
  if (left.size() + 2 > kHelpColumn) {
    absl::StrAppend(&left, "\n", std::string(kHelpColumn, ' '));
  } else {
    left.resize(kHelpColumn, ' ');
  }
  return absl::StrCat(left, Wrap(flag.help, kHelpColumn, kHelpColumn), "\n");
}

std::string Synopsis(const CommandSpec& command) {
  std::string line = absl::StrCat("kiln ", command.name);
  if (!command.positional.empty()) absl::StrAppend(&line, " ", command.positional);
  return absl::StrCat(line, " [FLAGS]");
}

}  // namespace

const FlagSpec* FindFlag(absl::string_view name) {
  for (const FlagSpec& flag : Flags()) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const std::vector<absl::string_view>& GlobalFlagNames() {
  static const std::vector<absl::string_view> names = {"server", "tls-ca", "token", "deadline",
                                                       "help"};
  return names;
}

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> commands = {
      {"compile", "MODEL", "compile a model and write its artifacts",
       "compile MODEL (.onnx, or graph IR text .kir/.txt) and write every artifact to --out; "
       "prints one line per artifact (name, size, sha256 prefix) and the compile id",
       WithPassFlags({"out", "artifacts"})},
      {"trace", "MODEL", "show every pass and the IR diff of each that changed it",
       "compile MODEL and print every pass as it finishes, with a unified diff of the IR for each "
       "pass that changed it (json: one JSON object per pass), then a summary line",
       WithPassFlags({"format", "only-changed", "pass-filter", "stages", "dump-dir",
                      "check-numerics", "numerics-seed", "numerics-input",
                      "numerics-backend"})},
      {"bisect", "MODEL", "find the first pass that changes the model's outputs",
       "trace MODEL with the numerics check and print the first graph pass after which an "
       "output is off by more than --rtol and --atol from the model as imported (then the native "
       "code), with the kiln-opt command that prints the IR after it and the trace without it; "
       "exit 0 when every pass keeps the numbers, 1 when one does not",
       WithPassFlags({"rtol", "atol", "numerics-seed", "numerics-input", "numerics-backend"})},
      {"schedule", "MODEL", "show the schedule record of one kernel",
       "print the schedule record of one kernel: every primitive applied and the diff of the "
       "loop IR it made (step 0: the whole loop IR)",
       WithPassFlags({"selector", "verify"})},
      {"passes",
       "",
       "list the pass registry",
       "list the pass registry, one pass per line: name, stage, opt level, required passes, "
       "summary",
       {"format"}},
      {"health",
       "",
       "check that the server is serving",
       "ask the server's health service about kiln.v1.Compiler; exit 0 only when "
       "SERVING",
       {}},
  };
  return commands;
}

const CommandSpec* FindCommand(absl::string_view name) {
  for (const CommandSpec& command : Commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string HelpText(const CommandSpec* command) {
  std::string text;
  if (command == nullptr) {
    text =
        "kiln: the command-line client of the Kiln compilation service (kilnd).\n\n"
        "usage: kiln COMMAND [ARGS] [FLAGS]   (flags as --name=value; -O2 = --opt-level=2)\n\n"
        "commands:\n";
    for (const CommandSpec& c : Commands()) {
      std::string left = absl::StrCat("  ", c.name);
      if (!c.positional.empty()) absl::StrAppend(&left, " ", c.positional);
      left.resize(20, ' ');
      absl::StrAppend(&text, left, c.brief, "\n");
    }
    absl::StrAppend(&text, "\nRun `kiln help COMMAND` for a command's flags.\n");
  } else {
    absl::StrAppend(&text, "usage: ", Synopsis(*command), "\n\n",
                    Wrap(absl::StrCat(command->description, "."), 0, 0), "\n");
    if (!command->flags.empty()) absl::StrAppend(&text, "\nflags:\n");
    for (absl::string_view name : command->flags) {
      absl::StrAppend(&text, FlagLine(*FindFlag(name)));
    }
  }
  absl::StrAppend(&text, "\nglobal flags:\n");
  for (absl::string_view name : GlobalFlagNames()) {
    absl::StrAppend(&text, FlagLine(*FindFlag(name)));
  }
  absl::StrAppend(&text, "\nexit codes:\n", ExitCodeTable());
  return text;
}

}  // namespace kiln::cli
