// `kiln trace`: follows a compile pass by pass. Text output is a header line
// per pass and, for each pass that changed the module, the unified diff from
// the IR after the previous pass of the same stage (graph text and loop
// script are different languages, so they are never diffed against each
// other). JSON output is one object per pass. Events print in the order the
// server sends them: a pass finishes after the passes nested in it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/compile_request.h"
#include "clients/cli/diagnostics.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/numeric_drift.h"
#include "clients/cli/proto_json.h"
#include "clients/cli/unified_diff.h"
#include "kiln/v1/compiler.grpc.pb.h"

namespace kiln::cli {
namespace {

struct TraceFlags {
  bool json = false;
  bool only_changed = false;
  std::string dump_dir;  // empty: no files
};

absl::StatusOr<kiln::v1::TraceRequest> TraceRequestFromFlags(const CommandLine& line,
                                                             TraceFlags* flags) {
  absl::StatusOr<kiln::v1::CompileRequest> compile = CompileRequestFromFlags(line);
  if (!compile.ok()) return compile.status();
  kiln::v1::TraceRequest request;
  *request.mutable_compile() = *std::move(compile);
  std::string format = line.Value("format").value_or("text");
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format: '", format, "' is neither text nor json"));
  }
  flags->json = format == "json";
  flags->only_changed = line.Bool("only-changed");
  flags->dump_dir = line.Value("dump-dir").value_or("");
  request.set_ir_after(true);
  request.set_only_changed(flags->only_changed);
  request.set_format(flags->json ? kiln::v1::JSON : kiln::v1::TEXT);
  for (std::string& name : line.List("pass-filter")) request.add_pass_filter(std::move(name));
  if (absl::Status numerics = SetNumericsFlags(line, &request); !numerics.ok()) return numerics;
  for (std::string& stage : line.List("stages")) {
    if (stage != "graph" && stage != "loop" && stage != "llvm") {
      return absl::InvalidArgumentError(
          absl::StrCat("--stages: unknown stage '", stage, "' (known: graph, loop, llvm)"));
    }
    request.add_stages(std::move(stage));
  }
  return request;
}

std::string EventLabel(const kiln::v1::PassEvent& event) {
  return absl::StrCat("after #", event.index(), " ", event.pass_name());
}

// Text output: headers and diffs against the last IR seen in each stage.
class TextTracePrinter {
 public:
  void Print(const kiln::v1::PassEvent& event) {
    std::string name = std::string(2 * std::max(event.depth(), 0), ' ') + event.pass_name();
    std::cout << absl::StrFormat("%4d  %-5s  %-36s %10.3f ms%s", event.index(), event.stage(), name,
                                 event.duration_ms(), event.changed() ? "  changed" : "");
    if (event.calls() > 0) {
      std::cout << absl::StrFormat("  (%d/%d calls with span)", event.calls_with_span(),
                                   event.calls());
    }
    std::cout << "\n";
    if (event.has_numerics()) std::cout << "      numerics: " << DriftLine(event.numerics()) << "\n";
    if (event.ir_after().empty()) return;
    auto previous = last_ir_.find(event.stage());
    if (event.changed()) {
      if (previous == last_ir_.end()) {
        std::cout << "(no earlier " << event.stage() << " IR to diff against; the IR "
                  << EventLabel(event) << " in full)\n"
                  << event.ir_after();
        if (event.ir_after().back() != '\n') std::cout << "\n";
      } else {
        std::string diff = UnifiedDiff(previous->second.ir, event.ir_after(),
                                       previous->second.label, EventLabel(event));
        // A container's output is its last child's, already shown.
        std::cout << (diff.empty() ? "(same text as " + previous->second.label + ")\n" : diff);
      }
    }
    last_ir_[event.stage()] = {event.ir_after(), EventLabel(event)};
  }

 private:
  struct SeenIr {
    std::string ir;
    std::string label;
  };
  std::map<std::string, SeenIr> last_ir_;  // by stage
};

// --dump-dir: one numbered file per pass holding the IR after it, named so that `ls` lists the
// passes in order and `diff` compares any two, as MLIR's IR-tree dumps are used:
// 0007-graph-FoldScaleAxis.after.kir (graph text), .py (loop script), .ll (LLVM), .json.
absl::Status DumpEvent(const std::string& dir, const kiln::v1::PassEvent& event, bool json) {
  if (event.ir_after().empty()) return absl::OkStatus();
  // Both parts come from the server: only plain characters reach the file name.
  auto plain = [](std::string text) {
    for (char& c : text) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
        c = '_';
      }
    }
    return text;
  };
  const std::string pass = plain(event.pass_name());
  const std::string stage = plain(event.stage());
  std::string extension = json                     ? "json"
                          : event.stage() == "loop" ? "py"
                          : event.stage() == "llvm" ? "ll"
                                                    : "kir";
  std::filesystem::path path =
      std::filesystem::path(dir) / absl::StrFormat("%04d-%s-%s.after.%s", event.index(), stage,
                                                   pass, extension);
  std::ofstream file(path, std::ios::binary);
  file << event.ir_after();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

void PrintJsonEvent(const kiln::v1::PassEvent& event) {
  kiln::v1::PassEvent shown = event;
  shown.clear_summary();  // reported on the summary line
  std::cout << ToJsonLine(shown) << "\n";
}

// Time spent in the outermost passes of each stage: nested passes are inside
// their container's time, and the server may leave containers out of the
// timings, so "outermost" is the smallest depth reported per stage.
double OutermostPassMs(const kiln::v1::CompileResponse& summary) {
  std::map<std::string, int32_t> outermost_depth;
  for (const kiln::v1::PassTiming& timing : summary.pass_timings()) {
    auto [it, inserted] = outermost_depth.emplace(timing.stage(), timing.depth());
    if (!inserted) it->second = std::min(it->second, timing.depth());
  }
  double total_ms = 0;
  for (const kiln::v1::PassTiming& timing : summary.pass_timings()) {
    if (timing.depth() == outermost_depth[timing.stage()]) total_ms += timing.duration_ms();
  }
  return total_ms;
}

// The summary line: the compile id, how many passes ran (all of them, not
// only those shown) and their total time.
void PrintSummary(const kiln::v1::CompileResponse& summary, int64_t events_seen, bool json) {
  int64_t passes = summary.pass_timings_size();
  double total_ms = OutermostPassMs(summary);
  if (json) {
    nlohmann::ordered_json line = {{"compile_id", summary.compile_id()},
                                   {"passes", passes},
                                   {"shown", events_seen},
                                   {"total_ms", std::round(total_ms * 1000) / 1000}};
    std::cout << line.dump() << "\n";
  } else {
    std::cout << absl::StrFormat("compile %s: %d passes, %.3f ms (%d shown)\n",
                                 summary.compile_id(), passes, total_ms, events_seen);
  }
}

}  // namespace

int RunTrace(const CommandLine& line, const Connection& connection) {
  TraceFlags flags;
  absl::StatusOr<kiln::v1::TraceRequest> request = TraceRequestFromFlags(line, &flags);
  if (!request.ok()) return ReportUsageError(std::string(request.status().message()));

  std::unique_ptr<kiln::v1::Compiler::Stub> stub =
      kiln::v1::Compiler::NewStub(MakeChannel(connection));
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  std::unique_ptr<grpc::ClientReader<kiln::v1::PassEvent>> reader =
      stub->TracePass(context.get(), *request);

  if (!flags.dump_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.dump_dir, error);
    if (error) {
      return ReportLocalError(
          absl::StrCat("--dump-dir: cannot create '", flags.dump_dir, "': ", error.message()));
    }
  }
  TextTracePrinter text;
  kiln::v1::PassEvent event;
  kiln::v1::CompileResponse summary;
  bool has_summary = false;
  std::optional<kiln::v1::NumericDrift> native_numerics;
  int64_t shown = 0;
  while (reader->Read(&event)) {
    if (event.has_summary()) {
      summary = event.summary();
      has_summary = true;
      if (event.has_numerics()) native_numerics = event.numerics();
    }
    if (event.pass_name().empty()) continue;  // a summary-only event
    if (flags.only_changed && !event.changed()) continue;
    ++shown;
    if (!flags.dump_dir.empty()) {
      if (absl::Status dumped = DumpEvent(flags.dump_dir, event, flags.json); !dumped.ok()) {
        context->TryCancel();
        return ReportLocalError(std::string(dumped.message()));
      }
    }
    if (flags.json) {
      PrintJsonEvent(event);
    } else {
      text.Print(event);
    }
    std::cout.flush();  // a long compile shows its passes as they finish
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return ReportRpcError(status);
  if (!has_summary) {
    return ReportLocalError("the server ended the trace without a summary event");
  }
  PrintDiagnostics(summary);
  if (native_numerics.has_value() && !flags.json) {
    std::cout << "native code numerics: " << DriftLine(*native_numerics) << "\n"
              << KernelPrecisionText(*native_numerics, 10);
  }
  PrintSummary(summary, shown, flags.json);
  return kExitOk;
}

}  // namespace kiln::cli
